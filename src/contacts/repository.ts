import { sql, type Expression, type ExpressionBuilder, type SqlBool } from "kysely";
import type { ContactRow, Database, Db, NewContactRow } from "../db/schema.ts";
import { preparedQuery } from "../db/prepared.ts";
import { prefixEnd } from "./matching.ts";

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

/** A contact row with its contact type's name and category joined in. */
export type ContactView = ContactRow & { type_name: string | null; type_category: string | null };

const withType = (db: Db) =>
  db
    .selectFrom("contacts")
    .leftJoin("contact_types", "contact_types.id", "contacts.contact_type_id")
    .selectAll("contacts")
    .select(["contact_types.name as type_name", "contact_types.category as type_category"]);

const contactByNumber = preparedQuery<[string, number], ContactView>(2, (db, projectId, contactNumber) =>
  withType(db).where("contacts.project_id", "=", projectId).where("contacts.contact_number", "=", contactNumber),
);

export async function findContactRow(db: Db, projectId: string, contactNumber: number): Promise<ContactView | undefined> {
  return (await contactByNumber(db, projectId, contactNumber))[0];
}

/**
 * GET one in one statement (interface §2.1): the row, its type, and the duplicateSignal
 * counts of other contacts sharing its email / phone match keys (index lookups).
 */
const contactWithSignal = preparedQuery<[string, number], ContactView & { email_matches: number; phone_matches: number }>(
  2,
  (db, projectId, contactNumber) =>
    withType(db)
      .select((eb) => [
        eb
          .selectFrom("contacts as other")
          .select(eb.fn.countAll<number>().as("n"))
          .whereRef("other.project_id", "=", "contacts.project_id")
          .whereRef("other.email_key", "=", "contacts.email_key")
          .whereRef("other.id", "!=", "contacts.id")
          .as("email_matches"),
        eb
          .selectFrom("contacts as other")
          .select(eb.fn.countAll<number>().as("n"))
          .whereRef("other.project_id", "=", "contacts.project_id")
          .whereRef("other.phone_key", "=", "contacts.phone_key")
          .whereRef("other.id", "!=", "contacts.id")
          .as("phone_matches"),
      ])
      .where("contacts.project_id", "=", projectId)
      .where("contacts.contact_number", "=", contactNumber) as never,
);

export async function findContactWithSignal(db: Db, projectId: string, contactNumber: number) {
  return (await contactWithSignal(db, projectId, contactNumber))[0];
}

/** The non-search filters of GET /contacts as one condition; each is an index lookup. */
function filterCondition(eb: ExpressionBuilder<Database, "contacts">, f: ContactFilters): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [];
  if (f.emailKey !== undefined) conditions.push(eb("contacts.email_key", "=", f.emailKey));
  if (f.phoneKey !== undefined) conditions.push(eb("contacts.phone_key", "=", f.phoneKey));
  if (f.contactTypeIds) {
    conditions.push(f.contactTypeIds.length ? eb("contacts.contact_type_id", "in", f.contactTypeIds) : sql<SqlBool>`0 = 1`);
  }
  if (f.updatedSince) conditions.push(eb("contacts.updated_at", ">=", f.updatedSince));
  for (const tagId of f.tagIds ?? []) {
    conditions.push(
      eb.exists(
        eb
          .selectFrom("contact_tags")
          .select("contact_tags.tag_id")
          .whereRef("contact_tags.contact_id", "=", "contacts.id")
          .where("contact_tags.tag_id", "=", tagId),
      ),
    );
  }
  return eb.and(conditions);
}

const hasFilters = (f: ContactFilters) =>
  f.emailKey !== undefined || f.phoneKey !== undefined || f.contactTypeIds !== undefined || !!f.updatedSince || !!f.tagIds?.length;

/** One page of contacts, newest update first (decisions §5): `limit + 1` rows. */
export async function listContactRows(db: Db, projectId: string, f: ContactFilters, limit: number): Promise<ContactView[]> {
  let q = withType(db).where("contacts.project_id", "=", projectId);
  if (f.searchTokens?.length) {
    // The search already applied every filter and the cursor; fetch its page in order.
    const ids = await searchContactIds(db, projectId, f, limit + 1);
    if (ids.length === 0) return [];
    q = q.where("contacts.id", "in", ids);
  } else {
    if (hasFilters(f)) q = q.where((eb) => filterCondition(eb as never, f));
    if (f.after) {
      const [updatedAt, number] = f.after;
      q = q.where((eb) =>
        eb.or([
          eb("contacts.updated_at", "<", updatedAt),
          eb.and([eb("contacts.updated_at", "=", updatedAt), eb("contacts.contact_number", "<", number)]),
        ]),
      );
    }
  }
  return q.orderBy("contacts.updated_at", "desc").orderBy("contacts.contact_number", "desc").limit(limit + 1).execute();
}

const tagsOfOne = preparedQuery<[number], { contact_id: number; id: string; name: string }>(1, (db, contactId) =>
  db
    .selectFrom("contact_tags")
    .innerJoin("tags", "tags.id", "contact_tags.tag_id")
    .select(["contact_tags.contact_id", "tags.id", "tags.name"])
    .where("contact_tags.contact_id", "=", contactId)
    .orderBy("tags.name"),
);

/**
 * `search` (decisions §5): the first token's prefix range of the term index, already
 * carrying each contact's order keys, gives the newest matches without reading contacts;
 * further tokens and the other filters are checked per candidate through indexes. A
 * contact matching through several terms appears once. Returns up to `wanted` ids.
 */
async function searchContactIds(db: Db, projectId: string, f: ContactFilters, wanted: number): Promise<number[]> {
  const [first, ...rest] = f.searchTokens!;
  const ids: number[] = [];
  let after = f.after;
  for (let round = 0; round < 50 && ids.length < wanted; round++) {
    const batch = wanted * 2;
    let q = db
      .selectFrom("contact_search_terms as t")
      .select(["t.contact_id", "t.updated_at", "t.contact_number"])
      .where("t.project_id", "=", projectId)
      .where("t.term", ">=", first!)
      .where("t.term", "<", prefixEnd(first!));
    for (const token of rest) {
      q = q.where(({ exists, selectFrom }) =>
        exists(
          selectFrom("contact_search_terms as o")
            .select("o.contact_id")
            .whereRef("o.contact_id", "=", "t.contact_id")
            .where("o.term", ">=", token)
            .where("o.term", "<", prefixEnd(token)),
        ),
      );
    }
    if (hasFilters(f)) {
      q = q.where(({ exists, selectFrom }) =>
        exists(
          selectFrom("contacts")
            .select("contacts.id")
            .whereRef("contacts.id", "=", "t.contact_id")
            .where((eb) => filterCondition(eb as never, f)),
        ),
      );
    }
    if (after) {
      const [updatedAt, number] = after;
      q = q.where((eb) =>
        eb.or([eb("t.updated_at", "<", updatedAt), eb.and([eb("t.updated_at", "=", updatedAt), eb("t.contact_number", "<", number)])]),
      );
    }
    const rows = await q.orderBy("t.updated_at", "desc").orderBy("t.contact_number", "desc").limit(batch).execute();
    for (const r of rows) if (!ids.includes(r.contact_id) && ids.length < wanted) ids.push(r.contact_id);
    if (rows.length < batch) break;
    const last = rows[rows.length - 1]!;
    after = [last.updated_at, last.contact_number];
  }
  return ids;
}

export async function tagsOfContacts(db: Db, contactIds: number[]) {
  if (contactIds.length === 0) return [];
  if (contactIds.length === 1) return tagsOfOne(db, contactIds[0]!);
  return db
    .selectFrom("contact_tags")
    .innerJoin("tags", "tags.id", "contact_tags.tag_id")
    .select(["contact_tags.contact_id", "tags.id", "tags.name"])
    .where("contact_tags.contact_id", "in", contactIds)
    .orderBy("tags.name")
    .execute();
}

export async function insertContactRow(db: Db, row: NewContactRow): Promise<number> {
  const inserted = await db.insertInto("contacts").values(row).returning("id").executeTakeFirstOrThrow();
  return inserted.id;
}

export async function updateContactRow(db: Db, id: number, row: Partial<NewContactRow>): Promise<void> {
  await db.updateTable("contacts").set(row).where("id", "=", id).execute();
}

export async function contactNumberTaken(db: Db, projectId: string, contactNumber: number): Promise<boolean> {
  return (await findContactRow(db, projectId, contactNumber)) !== undefined;
}

export async function replaceContactTags(db: Db, contactId: number, tagIds: string[]): Promise<void> {
  await db.deleteFrom("contact_tags").where("contact_id", "=", contactId).execute();
  if (tagIds.length) {
    await db.insertInto("contact_tags").values(tagIds.map((tag_id) => ({ contact_id: contactId, tag_id }))).execute();
  }
}

export async function replaceSearchTerms(
  db: Db,
  contact: { projectId: string; id: number; updatedAt: string; contactNumber: number },
  terms: string[],
): Promise<void> {
  await db.deleteFrom("contact_search_terms").where("contact_id", "=", contact.id).execute();
  if (terms.length) {
    await db
      .insertInto("contact_search_terms")
      .values(
        terms.map((term) => ({
          project_id: contact.projectId,
          term,
          contact_id: contact.id,
          updated_at: contact.updatedAt,
          contact_number: contact.contactNumber,
        })),
      )
      .execute();
  }
}

/** Keeps the copied order keys of the search terms in step with the contact. */
export async function touchSearchTerms(db: Db, contactId: number, updatedAt: string): Promise<void> {
  await db.updateTable("contact_search_terms").set({ updated_at: updatedAt }).where("contact_id", "=", contactId).execute();
}

/**
 * Takes the next contact number and counts the contact toward the quota, in the request's
 * transaction; the caller refuses the create when the count passes the quota.
 */
export async function allocateContactNumber(db: Db, projectId: string) {
  return db
    .updateTable("projects")
    .set((eb) => ({ last_contact_number: eb("last_contact_number", "+", 1), contact_count: eb("contact_count", "+", 1) }))
    .where("id", "=", projectId)
    .returning(["last_contact_number", "contact_count", "contact_quota", "default_region"])
    .executeTakeFirstOrThrow();
}

/** After a relabel to CR-n, generated numbers continue past n (decisions §12). */
export async function moveContactCounterPast(db: Db, projectId: string, n: number): Promise<void> {
  await db
    .updateTable("projects")
    .set({ last_contact_number: n })
    .where("id", "=", projectId)
    .where("last_contact_number", "<", n)
    .execute();
}

export async function projectRegion(db: Db, projectId: string): Promise<string> {
  const row = await db.selectFrom("projects").select("default_region").where("id", "=", projectId).executeTakeFirstOrThrow();
  return row.default_region;
}
