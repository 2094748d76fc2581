import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from "kysely";
import { keysetAfter } from "../storage/keyset.ts";
import type { Database, Db } from "../storage/schema.ts";
import type { FilterOnly } from "../storage/port.ts";
import { contactsByIds, filterOnlyIn } from "../storage/query.ts";
import { prefixEnd } from "./matching.ts";

/**
 * The SQL of the console's contacts list (docs/admin.md §3): every sort in both directions,
 * and its total. One filter may drive: each filter's own index gives its contacts, up to
 * SMALL_SET; the fewest drive if they are that few, and the page and the exact total are
 * read from those rows. Otherwise (no filter, or only common ones) the project is walked in
 * the sort's own order with every filter as a per-candidate check (`filterOnly`, so the sort's
 * index stays the planner's only choice), and the total is counted up to a bound.
 */

export const CONSOLE_SORTS = ["updated", "created", "name"] as const;
export type ConsoleSort = (typeof CONSOLE_SORTS)[number];

/** Below this many contacts a filter drives: its rows are read, checked and sorted whole. */
export const SMALL_SET = 2000;

/**
 * The name order (docs/admin.md §3): last name, first name, then business name, lower case,
 * byte order; a contact with none of them sorts after every named one ("1" > "0"). Written
 * once, as text, so the index that serves it (contacts_name, see the report in docs/admin.md)
 * has the very same expression.
 */
const NAME_TEXT = "trim(coalesce(last_name, '') || ' ' || coalesce(first_name, '') || ' ' || coalesce(business_name, ''))";
export const NAME_KEY_SQL = `CASE WHEN ${NAME_TEXT} = '' THEN '1' ELSE '0' || lower(${NAME_TEXT}) END`;

/** Each sort's key and direction; contact_number breaks ties in the same direction. */
const SORTS: Record<ConsoleSort, { key: () => RawBuilder<string>; direction: "asc" | "desc" }> = {
  updated: { key: () => sql<string>`${sql.ref("contacts.updated_at")}`, direction: "desc" },
  created: { key: () => sql<string>`${sql.ref("contacts.created_at")}`, direction: "desc" },
  name: { key: () => sql<string>`${sql.raw(NAME_KEY_SQL)}`, direction: "asc" },
};

/** One filter of the list, as a driver (its contacts, from its own index) and as a check on a contact row. */
export type Part =
  | { kind: "email" | "phone"; key: string }
  | { kind: "types"; ids: string[] }
  | { kind: "tag"; id: string }
  | { kind: "term"; token: string }
  | { kind: "since"; at: string };

/** A row of the list: the contact's id, number and sort key (a cursor's position). */
export interface KeyRow {
  id: number;
  number: number;
  key: string;
}

/** Where a page starts: strictly after (`after`) or before (`before`) a row, in the sort's order. */
export interface Position {
  dir: "after" | "before";
  key: string;
  number: number;
}

/** How a list is read: a small set of candidates (all of them, checked and sorted), or a walk of the project. */
export type Plan = { kind: "small"; rows: KeyRow[] } | { kind: "walk"; checks: Part[] };

type Eb = ExpressionBuilder<Database, "contacts">;

/** The contact passes `part` (a check on a candidate; never an index choice but the sort's own). */
function check(eb: Eb, part: Part, sort: ConsoleSort, filterOnly: FilterOnly): Expression<SqlBool> {
  switch (part.kind) {
    case "email":
      return eb(filterOnly("contacts.email_key"), "=", part.key);
    case "phone":
      return eb(filterOnly("contacts.phone_key"), "=", part.key);
    case "types":
      return eb(filterOnly("contacts.contact_type_id"), "in", part.ids);
    case "since":
      // In update order the bound is the walk's own range.
      return eb(sort === "updated" ? sql.ref("contacts.updated_at") : filterOnly("contacts.updated_at"), ">=", part.at);
    case "tag":
      return eb.exists(
        eb.selectFrom("contact_tags").select("contact_tags.tag_id").whereRef("contact_tags.contact_id", "=", "contacts.id").where(filterOnly("contact_tags.tag_id"), "=", part.id),
      );
    case "term":
      return eb.exists(
        eb
          .selectFrom("contact_search_terms as o")
          .select("o.contact_id")
          .whereRef("o.contact_id", "=", "contacts.id")
          .where("o.term", ">=", part.token)
          .where("o.term", "<", prefixEnd(part.token)),
      );
  }
}

const checksOf = (parts: Part[], sort: ConsoleSort, filterOnly: FilterOnly) => (eb: Eb) => eb.and(parts.map((p) => check(eb, p, sort, filterOnly)));

/** Up to `cap + 1` contact ids matching `part`, from its own index (live contacts only). */
async function driverIds(db: Db, projectId: string, part: Part, cap: number): Promise<number[]> {
  const filterOnly = filterOnlyIn(db);
  const live = db.selectFrom("contacts").select("contacts.id as id").where("contacts.deleted_at", "is", null);
  let q;
  switch (part.kind) {
    case "email":
    case "phone":
      q = live.where("contacts.project_id", "=", projectId).where(part.kind === "email" ? "contacts.email_key" : "contacts.phone_key", "=", part.key);
      break;
    case "types":
      q = live.where(filterOnly("contacts.project_id"), "=", projectId).where("contacts.contact_type_id", "in", part.ids);
      break;
    case "since":
      q = live.where("contacts.project_id", "=", projectId).where("contacts.updated_at", ">=", part.at);
      break;
    case "tag":
      q = db.selectFrom("contact_tags").select("contact_tags.contact_id as id").where("contact_tags.tag_id", "=", part.id);
      break;
    case "term":
      q = db
        .selectFrom("contact_search_terms")
        .select("contact_search_terms.contact_id as id")
        .distinct()
        .where("contact_search_terms.project_id", "=", projectId)
        .where("contact_search_terms.term", ">=", part.token)
        .where("contact_search_terms.term", "<", prefixEnd(part.token));
      break;
  }
  const rows: Array<{ id: number | string }> = await q.limit(cap + 1).execute();
  return rows.map((r) => Number(r.id));
}

/**
 * How to read the list of `parts`: an email or phone drives at once; otherwise every
 * filter's driver runs (each reads at most SMALL_SET + 1 index entries) and the fewest
 * drive if they are at most SMALL_SET. No filter, or only common ones: a walk.
 */
export async function planList(db: Db, projectId: string, parts: Part[], sort: ConsoleSort): Promise<Plan> {
  if (parts.length === 0) return { kind: "walk", checks: [] };
  const keyed = parts.find((p) => p.kind === "email" || p.kind === "phone");
  const drivers = keyed ? [keyed] : parts;
  const found = await Promise.all(drivers.map(async (part) => ({ part, ids: await driverIds(db, projectId, part, SMALL_SET) })));
  const fewest = found.filter((f) => f.ids.length <= SMALL_SET).sort((a, b) => a.ids.length - b.ids.length)[0];
  if (!fewest) return { kind: "walk", checks: parts };
  const rest = parts.filter((p) => p !== fewest.part);
  return { kind: "small", rows: await candidateRows(db, projectId, fewest.ids, rest, sort) };
}

/** The candidates that pass the other filters, with their sort keys, in the sort's order. */
async function candidateRows(db: Db, projectId: string, ids: number[], checks: Part[], sort: ConsoleSort): Promise<KeyRow[]> {
  if (ids.length === 0) return [];
  const filterOnly = filterOnlyIn(db);
  let q = contactsByIds(db, ids)
    .select(["contacts.id as id", "contacts.contact_number as number", SORTS[sort].key().as("key")])
    .where(filterOnly("contacts.project_id"), "=", projectId)
    .where("contacts.deleted_at", "is", null);
  if (checks.length > 0) q = q.where(checksOf(checks, sort, filterOnly));
  const rows: KeyRow[] = (await q.execute()).map((r) => ({ id: Number(r.id), number: Number(r.number), key: String(r.key) }));
  return rows.sort((a, b) => compareRows(a, b, SORTS[sort].direction));
}

/**
 * Byte order of the keys' UTF-8 (SQLite's BINARY, PostgreSQL's "C" collation), then the
 * number: the order the walk's ORDER BY gives, so small sets and walks page alike.
 */
function compareRows(a: { key: string; number: number }, b: { key: string; number: number }, direction: "asc" | "desc"): number {
  const byKey = Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
  const order = byKey !== 0 ? byKey : a.number - b.number;
  return direction === "asc" ? order : -order;
}

const flip = (d: "asc" | "desc") => (d === "asc" ? "desc" : "asc");

/**
 * Up to `limit + 1` rows from `position` on, in reading order: the sort's direction, or
 * the reverse for a page before `position` (the caller turns it back).
 */
export async function pageRows(db: Db, projectId: string, plan: Plan, sort: ConsoleSort, position: Position | undefined, limit: number): Promise<KeyRow[]> {
  const spec = SORTS[sort];
  const direction = position?.dir === "before" ? flip(spec.direction) : spec.direction;
  if (plan.kind === "small") {
    const ordered = position?.dir === "before" ? [...plan.rows].reverse() : plan.rows;
    const start = position ? ordered.findIndex((r) => compareRows(r, position, direction) > 0) : 0;
    return start < 0 ? [] : ordered.slice(start, start + limit + 1);
  }
  const key = spec.key();
  let q = db
    .selectFrom("contacts")
    .select(["contacts.id as id", "contacts.contact_number as number", key.as("key")])
    .where("contacts.project_id", "=", projectId)
    .where("contacts.deleted_at", "is", null);
  if (plan.checks.length > 0) q = q.where(checksOf(plan.checks, sort, filterOnlyIn(db)));
  if (position) q = q.where((eb) => keysetAfter(eb as never, [key, "contacts.contact_number"], [position.key, position.number], direction));
  const rows = await q.orderBy(key, direction).orderBy("contacts.contact_number", direction).limit(limit + 1).execute();
  return rows.map((r) => ({ id: Number(r.id), number: Number(r.number), key: String(r.key) }));
}

/**
 * How many contacts the list holds: exact up to `countLimit`, else "more than" it. The
 * project's own count when nothing filters (kept exact for its quota, docs/api.md §19.3);
 * a small set's rows; else a count bounded by a LIMIT of `countLimit + 1`.
 */
export async function listTotal(db: Db, projectId: string, plan: Plan, countLimit: number): Promise<{ count: number; exact: boolean }> {
  if (plan.kind === "small") return bounded(plan.rows.length, countLimit);
  if (plan.checks.length === 0) {
    const project = await db.selectFrom("projects").select("contact_count").where("id", "=", projectId).executeTakeFirst();
    return { count: Number(project?.contact_count ?? 0), exact: true };
  }
  const filterOnly = filterOnlyIn(db);
  const row = await db
    .selectFrom((d) =>
      d
        .selectFrom("contacts")
        .select("contacts.id")
        .where("contacts.project_id", "=", projectId)
        .where("contacts.deleted_at", "is", null)
        // As in update order: an updatedSince bound is a range of contacts_recent.
        .where(checksOf(plan.checks, "updated", filterOnly) as never)
        .limit(countLimit + 1)
        .as("m"),
    )
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return bounded(Number(row.n), countLimit);
}

const bounded = (count: number, countLimit: number) => (count > countLimit ? { count: countLimit, exact: false } : { count, exact: true });
