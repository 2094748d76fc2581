import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from "kysely";
import { keysetAfter } from "../db/keyset.ts";
import type { Database, Db } from "../db/schema.ts";
import { HEAD_LENGTH, prefixEnd, termHead } from "./matching.ts";
import { withType, type ContactView } from "./repository.ts";

export interface ContactFilters {
  emailKey?: string | null;
  phoneKey?: string | null;
  contactTypeIds?: string[];
  tagIds?: string[];
  updatedSince?: string;
  searchTokens?: string[];
  /** Keyset position: [updatedAt, contactNumber] of the last row of the previous page. */
  after?: [string, number];
}

/** Below this many matches a search prefix is sorted; above it, walked in list order. */
const DENSE_PREFIX = 2000;

/**
 * One page of GET /contacts (decisions §5), `limit + 1` rows, newest update first. The
 * most selective filter drives the query through an index already in list order: a
 * search prefix (contact_search_terms), a tag (contact_tags_recent), or the contacts
 * themselves (contacts_recent, contacts_type, contacts_email, contacts_phone). Every other
 * filter is checked per candidate through an index, so no page scans the project.
 */
export async function listContactRows(db: Db, projectId: string, f: ContactFilters, limit: number): Promise<ContactView[]> {
  let q = withType(db).where("contacts.project_id", "=", projectId);
  if (f.searchTokens?.length || f.tagIds?.length) {
    const ids = await drivenIds(db, projectId, f, limit + 1);
    if (ids.length === 0) return [];
    q = q.where("contacts.id", "in", ids);
  } else {
    q = q.where((eb) => contactCondition(eb as never, f));
    if (f.after) q = q.where((eb) => keysetAfter(eb as never, ["contacts.updated_at", "contacts.contact_number"], f.after!, "desc"));
  }
  return q.orderBy("contacts.updated_at", "desc").orderBy("contacts.contact_number", "desc").limit(limit + 1).execute();
}

/** A driver table under alias `t`: it carries contact_id and the order keys. */
type DriverDb = Database & { t: { contact_id: number; updated_at: string; contact_number: number } };
type DriverQuery = SelectQueryBuilder<DriverDb, "t", object>;
type DriverBuilder = ExpressionBuilder<DriverDb, "t">;

/** Filters on the contact's own columns and its tags. */
function contactCondition(eb: ExpressionBuilder<Database, "contacts">, f: ContactFilters, skipTags = 0): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [];
  if (f.emailKey !== undefined) conditions.push(eb("contacts.email_key", "=", f.emailKey));
  if (f.phoneKey !== undefined) conditions.push(eb("contacts.phone_key", "=", f.phoneKey));
  if (f.contactTypeIds) {
    conditions.push(f.contactTypeIds.length ? eb("contacts.contact_type_id", "in", f.contactTypeIds) : sql<SqlBool>`1 = 0`);
  }
  if (f.updatedSince) conditions.push(eb("contacts.updated_at", ">=", f.updatedSince));
  for (const tagId of (f.tagIds ?? []).slice(skipTags)) {
    conditions.push(
      eb.exists(
        eb.selectFrom("contact_tags").select("contact_tags.tag_id").whereRef("contact_tags.contact_id", "=", "contacts.id").where("contact_tags.tag_id", "=", tagId),
      ),
    );
  }
  return eb.and(conditions);
}

/**
 * Contact ids in list order from a driver table (search terms or tags), with the other
 * filters as per-candidate index probes; a contact reached through several terms counts once.
 */
async function drivenIds(db: Db, projectId: string, f: ContactFilters, wanted: number): Promise<number[]> {
  const driver = f.searchTokens?.length ? await searchDriver(db, projectId, f.searchTokens) : tagDriver(f.tagIds![0]!);
  const rest: ContactFilters = { ...f, tagIds: f.searchTokens?.length ? f.tagIds : f.tagIds!.slice(1) };
  const needsContact = rest.emailKey !== undefined || rest.phoneKey !== undefined || rest.contactTypeIds !== undefined || !!rest.tagIds?.length;
  const ids: number[] = [];
  let after = f.after;
  for (let round = 0; round < 100 && ids.length < wanted; round++) {
    const batch = wanted * 2;
    let q = driver(db);
    for (const token of f.searchTokens?.slice(1) ?? []) {
      q = q.where((eb: DriverBuilder) =>
        eb.exists(
          eb.selectFrom("contact_search_terms as o").select("o.contact_id").whereRef("o.contact_id", "=", "t.contact_id").where("o.term", ">=", token).where("o.term", "<", prefixEnd(token)),
        ),
      );
    }
    if (needsContact) {
      q = q.where((eb: DriverBuilder) =>
        eb.exists(
          eb.selectFrom("contacts").select("contacts.id").whereRef("contacts.id", "=", "t.contact_id").where((c) => contactCondition(c as never, { ...rest, updatedSince: undefined })),
        ),
      );
    }
    if (f.updatedSince) q = q.where("t.updated_at", ">=", f.updatedSince);
    if (after) q = q.where((eb: DriverBuilder) => keysetAfter(eb as never, ["t.updated_at", "t.contact_number"], after!, "desc"));
    const rows: Array<{ contact_id: number; updated_at: string; contact_number: number }> = await q
      .select(["t.contact_id", "t.updated_at", "t.contact_number"])
      .orderBy("t.updated_at", "desc")
      .orderBy("t.contact_number", "desc")
      .limit(batch)
      .execute();
    for (const r of rows) if (!ids.includes(r.contact_id) && ids.length < wanted) ids.push(r.contact_id);
    if (rows.length < batch) break;
    const last = rows[rows.length - 1]!;
    after = [last.updated_at, last.contact_number];
  }
  return ids;
}

function tagDriver(tagId: string) {
  return (db: Db) => db.selectFrom("contact_tags as t").where("t.tag_id", "=", tagId) as unknown as DriverQuery;
}

/**
 * The first search token's matches. A rare prefix (fewer than 2,000 term rows) takes its
 * range of the primary key and sorts it; a dense one (3+ characters) walks its `head`
 * group in list order and stops at the page, so both stay a few thousand index entries.
 */
async function searchDriver(db: Db, projectId: string, tokens: string[]) {
  const token = tokens[0]!;
  const range = (d: Db) =>
    d.selectFrom("contact_search_terms as t").where("t.project_id", "=", projectId).where("t.term", ">=", token).where("t.term", "<", prefixEnd(token));
  const length = [...token].length;
  if (length >= HEAD_LENGTH) {
    const counted = await db
      .selectFrom((d) => range(d as never).select("t.contact_id").limit(DENSE_PREFIX).as("m"))
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    if (Number(counted.n) >= DENSE_PREFIX) {
      return (d: Db) =>
        d
          .selectFrom("contact_search_terms as t")
          .where("t.project_id", "=", projectId)
          .where("t.head", "=", termHead(token))
          .where(sql<string>`substr(t.term, 1, ${length})`, "=", token) as unknown as DriverQuery;
    }
  }
  return (d: Db) => range(d) as unknown as DriverQuery;
}
