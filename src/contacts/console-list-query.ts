import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SelectQueryBuilder, type SqlBool } from "kysely";
import { keysetAfter } from "../storage/keyset.ts";
import type { Database, Db } from "../storage/schema.ts";
import type { FilterOnly } from "../storage/port.ts";
import { filterOnlyIn } from "../storage/query.ts";
import { hasTermIn, projectTermIn, type TermMatch } from "./search/query.ts";

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
export const SMALL_SET = 10_000;

/**
 * The name order (docs/admin.md §3): last name, first name, then business name, A–Z folded
 * to lower case, in byte order (letters beyond ASCII after z); a contact with none of them
 * sorts after every named one ("1" > "0"). Written once, as text: an index on
 * (project_id, this very expression, contact_number) serves the walk on both backends.
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
  | { kind: "term"; matches: TermMatch[] }
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
      return hasTermIn(eb as never, "contacts.id", part.matches);
  }
}

const checksOf = (parts: Part[], sort: ConsoleSort, filterOnly: FilterOnly) => (eb: Eb) => eb.and(parts.map((p) => check(eb, p, sort, filterOnly)));

/**
 * The live contacts matching `part`, from its own index, as a query selecting `id`; `idRef`
 * names that column for checks. Tag links, search terms and match keys exist only for live
 * contacts (src/contacts/trash.ts), so those need no look at the contact.
 */
function driverQuery(db: Db, projectId: string, part: Part): { idRef: string; q: SelectQueryBuilder<any, any, { id: number | string }> } {
  const filterOnly = filterOnlyIn(db);
  const live = db.selectFrom("contacts").select("contacts.id as id").where("contacts.deleted_at", "is", null);
  switch (part.kind) {
    case "email":
    case "phone":
      return { idRef: "contacts.id", q: live.where("contacts.project_id", "=", projectId).where(part.kind === "email" ? "contacts.email_key" : "contacts.phone_key", "=", part.key) };
    case "types":
      return { idRef: "contacts.id", q: live.where(filterOnly("contacts.project_id"), "=", projectId).where("contacts.contact_type_id", "in", part.ids) };
    case "since":
      return { idRef: "contacts.id", q: live.where("contacts.project_id", "=", projectId).where("contacts.updated_at", ">=", part.at) };
    case "tag":
      return { idRef: "contact_tags.contact_id", q: db.selectFrom("contact_tags").select("contact_tags.contact_id as id").where("contact_tags.tag_id", "=", part.id) };
    case "term": {
      const range = (matches: TermMatch[]) =>
        db
          .selectFrom("contact_search_terms")
          .select("contact_search_terms.contact_id as id")
          .where((inner) => projectTermIn(inner, "contact_search_terms", projectId, matches));
      if (part.matches.length <= 1) return { idRef: "contact_search_terms.contact_id", q: range(part.matches).distinct() };
      // Several ranges (a phone's forms, a typo's near words): a UNION of one index range each,
      // as in src/contacts/search/driver.ts termRanges (as one OR, PostgreSQL read them through a
      // BitmapOr, visiting the table for every row).
      const [first, ...rest] = part.matches.map((m) => range([m]));
      const union = rest.reduce((all, arm) => all.union(arm), first!);
      return { idRef: "u.id", q: db.selectFrom(union.as("u")).select("u.id") };
    }
  }
}

/** How many contacts match `part`, counted up to `cap + 1` (its index only: a probe, not a walk of the project). */
async function driverCount(db: Db, projectId: string, part: Part, cap: number): Promise<number> {
  const row = await db
    .selectFrom(driverQuery(db, projectId, part).q.limit(cap + 1).as("m"))
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The contact whose id is `idRef` passes `part`: index probes of its tags and terms; its row only for the other filters. */
function idCheck(eb: ExpressionBuilder<any, any>, idRef: string, part: Part, filterOnly: FilterOnly): Expression<SqlBool> {
  const id = sql.ref<number>(idRef);
  if (part.kind === "tag") {
    return eb.exists(eb.selectFrom("contact_tags as k").select("k.tag_id").where("k.contact_id", "=", id).where(filterOnly("k.tag_id"), "=", part.id));
  }
  if (part.kind === "term") {
    return hasTermIn(eb as never, idRef, part.matches);
  }
  return eb.exists(
    eb
      .selectFrom("contacts as r")
      .select("r.id")
      .where("r.id", "=", id)
      .where((inner) => check(inner as never, part, "name", (ref) => filterOnly(ref.replace(/^contacts\./, "r."))) as never),
  );
}

/** Which filter a bounded count walks: one whose index alone answers (a tag, a search word) before one that needs each contact's row. */
const COUNT_ORDER: Part["kind"][] = ["email", "phone", "tag", "term", "types", "since"];

/**
 * How to read the list of `parts`: an email or phone drives at once; otherwise every
 * filter's driver runs (each reads at most SMALL_SET + 1 index entries) and the fewest
 * drive if they are at most SMALL_SET. No filter, or only common ones: a walk.
 */
export async function planList(db: Db, projectId: string, parts: Part[], sort: ConsoleSort, smallSet = SMALL_SET): Promise<Plan> {
  if (parts.length === 0) return { kind: "walk", checks: [] };
  const keyed = parts.find((p) => p.kind === "email" || p.kind === "phone");
  const drivers = keyed ? [keyed] : parts;
  const found = await Promise.all(drivers.map(async (part) => ({ part, n: await driverCount(db, projectId, part, smallSet) })));
  const fewest = found.filter((f) => f.n <= smallSet).sort((a, b) => a.n - b.n)[0];
  if (!fewest) return { kind: "walk", checks: parts };
  const rest = parts.filter((p) => p !== fewest.part);
  return { kind: "small", rows: fewest.n === 0 ? [] : await candidateRows(db, projectId, fewest.part, rest, sort) };
}

/**
 * The driver's contacts that pass the other filters, with their sort keys, in the sort's
 * order. The driver's rows join the contacts by primary key (SQLite keeps a CROSS JOIN's
 * left side outer), so no id list travels back and forth.
 */
async function candidateRows(db: Db, projectId: string, driver: Part, checks: Part[], sort: ConsoleSort): Promise<KeyRow[]> {
  const filterOnly = filterOnlyIn(db);
  let q = db
    .selectFrom(driverQuery(db, projectId, driver).q.as("d"))
    .crossJoin("contacts")
    .whereRef("contacts.id", "=", "d.id")
    .select(["contacts.id as id", "contacts.contact_number as number", SORTS[sort].key().as("key")])
    .where(filterOnly("contacts.project_id"), "=", projectId)
    .where("contacts.deleted_at", "is", null);
  if (checks.length > 0) q = q.where(checksOf(checks, sort, filterOnly) as never);
  const rows = (await q.execute()).map((r) => ({ id: Number(r.id), number: Number(r.number), key: String(r.key), bytes: Buffer.from(String(r.key)) }));
  const direction = SORTS[sort].direction;
  return rows.sort((a, b) => compareRows(a, b, direction));
}

/**
 * Byte order of the keys' UTF-8 (SQLite's BINARY, PostgreSQL's "C" collation), then the
 * number: the order the walk's ORDER BY gives, so small sets and walks page alike.
 */
function compareRows(a: Sortable, b: Sortable, direction: "asc" | "desc"): number {
  const byKey = Buffer.compare(a.bytes ?? Buffer.from(a.key), b.bytes ?? Buffer.from(b.key));
  const order = byKey !== 0 ? byKey : a.number - b.number;
  return direction === "asc" ? order : -order;
}

type Sortable = { key: string; number: number; bytes?: Buffer };

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
    const from = position && { ...position, bytes: Buffer.from(position.key) };
    const start = from ? ordered.findIndex((r) => compareRows(r, from, direction) > 0) : 0;
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
 * a small set's rows; else a count bounded by a LIMIT of `countLimit + 1`, walking one
 * filter's own index and checking the others on each of its contacts.
 */
export async function listTotal(db: Db, projectId: string, plan: Plan, countLimit: number): Promise<{ count: number; exact: boolean }> {
  if (plan.kind === "small") return bounded(plan.rows.length, countLimit);
  if (plan.checks.length === 0) {
    const project = await db.selectFrom("projects").select("contact_count").where("id", "=", projectId).executeTakeFirst();
    return { count: Number(project?.contact_count ?? 0), exact: true };
  }
  const filterOnly = filterOnlyIn(db);
  const walked = [...plan.checks].sort((a, b) => COUNT_ORDER.indexOf(a.kind) - COUNT_ORDER.indexOf(b.kind))[0]!;
  const { idRef, q } = driverQuery(db, projectId, walked);
  const others = plan.checks.filter((p) => p !== walked);
  const limited = (others.length > 0 ? q.where((eb) => eb.and(others.map((p) => idCheck(eb, idRef, p, filterOnly)))) : q).limit(countLimit + 1);
  const row = await db
    .selectFrom(limited.as("m"))
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return bounded(Number(row.n), countLimit);
}

const bounded = (count: number, countLimit: number) => (count > countLimit ? { count: countLimit, exact: false } : { count, exact: true });
