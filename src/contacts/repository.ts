import type { ExpressionBuilder, SelectQueryBuilder } from "kysely";
import type { ContactRow, Database, Db, NewContactRow } from "../storage/schema.ts";
import { contactsByIds, filterOnlyIn, idList, jsonArrayFrom } from "../storage/query.ts";
import { preparedInsert, preparedQuery } from "../storage/prepared.ts";
import { termHead } from "./matching.ts";
import { forgetTypoWords, rememberTypoWords } from "./search/typo-keys.ts";
import { BIT_COLUMNS, termBitsOf } from "./search/term-bits.ts";

/** A contact row with its contact type's name and category joined in. */
export type ContactView = ContactRow & { type_name: string | null; type_category: string | null };

/** For pages of contacts: one join for the whole page. */
export const withType = (db: Db, from: SelectQueryBuilder<Database, "contacts", {}> = db.selectFrom("contacts")) =>
  from
    .leftJoin("contact_types", "contact_types.id", "contacts.contact_type_id")
    .selectAll("contacts")
    .select(["contact_types.name as type_name", "contact_types.category as type_category"]);

/** A contact's tags, by name, as a JSON array column. */
export type TagsColumn = Array<{ id: string; name: string }> | string;

/**
 * The tags of the row's contact (`contacts.id`), by name, as a JSON array column: a page's
 * contacts and their tags in one statement (a second statement for the tags cost more than a
 * contact row, and on PostgreSQL a round trip and a plan). CROSS JOIN keeps the contact's
 * tag rows outer in SQLite (statistics cannot turn it round).
 */
export const tagsColumn = (db: Db, eb: ExpressionBuilder<Database, "contacts">) =>
  jsonArrayFrom(
    db,
    eb
      .selectFrom("contact_tags")
      .crossJoin("tags")
      .select(["tags.id", "tags.name"])
      .whereRef("tags.id", "=", "contact_tags.tag_id")
      .whereRef("contact_tags.contact_id", "=", "contacts.id")
      .orderBy("tags.name"),
  ).as("tags");

/**
 * For one contact, in one statement: the type by two scalar subqueries (the join's per-run
 * setup in SQLite cost a point lookup ~4×: 73 → 20 µs, docs/performance.md) and the tags
 * as a JSON array.
 */
const withTypeOfOne = (db: Db) =>
  db
    .selectFrom("contacts")
    .selectAll("contacts")
    .select((eb) => [
      eb.selectFrom("contact_types").select("name").whereRef("contact_types.id", "=", "contacts.contact_type_id").as("type_name"),
      eb.selectFrom("contact_types").select("category").whereRef("contact_types.id", "=", "contacts.contact_type_id").as("type_category"),
      tagsColumn(db, eb),
    ]);

const contactsOfPage = preparedQuery<[string, unknown], ContactView & { tags: TagsColumn }>(2, (db, projectId, ids) =>
  withType(db, contactsByIds(db, ids))
    .select((eb) => tagsColumn(db, eb as never))
    .where(filterOnlyIn(db)("contacts.project_id"), "=", projectId) as never,
);

/**
 * A page's contacts with their types and tags, in the order of `ids`, each found by its
 * primary key with the ids as the outer loop (`contactsByIds`): with `id IN (…)`,
 * statistics taken while the table was small made SQLite scan every contact instead. The
 * ids are one value, so the statement is built and compiled once: building a list of 50
 * ids anew cost about 0.2 ms a page, as much as SQLite reading the rows (docs/performance.md).
 */
export async function contactRowsByIds(db: Db, projectId: string, ids: number[]): Promise<Array<ContactView & { tags: TagsColumn }>> {
  if (ids.length === 0) return [];
  const position = new Map(ids.map((id, i) => [id, i]));
  const rows = await contactsOfPage(db, projectId, idList(db, ids));
  return rows.sort((a, b) => position.get(Number(a.id))! - position.get(Number(b.id))!);
}

const contactByNumber = preparedQuery<[string, number], ContactView & { tags: TagsColumn }>(2, (db, projectId, contactNumber) =>
  withTypeOfOne(db).where("contacts.project_id", "=", projectId).where("contacts.contact_number", "=", contactNumber).where("contacts.deleted_at", "is", null) as never,
);

/**
 * A contact in the trash (docs/api.md §19.3), as findContactRow reads a live one (no tags:
 * they wait in trashed_tags); with `mergedInto`, one merged away into that contact
 * (docs/api.md §20.3), which the trash's own routes never see.
 */
export async function findTrashedContactRow(db: Db, projectId: string, contactNumber: number, mergedInto: number | null = null) {
  return (await withTypeOfOne(db)
    .where("contacts.project_id", "=", projectId)
    .where("contacts.contact_number", "=", contactNumber)
    .where("contacts.deleted_at", "is not", null)
    .where("contacts.merged_into", mergedInto === null ? "is" : "=", mergedInto)
    .executeTakeFirst()) as (ContactView & { tags: TagsColumn }) | undefined;
}

export async function findContactRow(db: Db, projectId: string, contactNumber: number): Promise<(ContactView & { tags: TagsColumn }) | undefined> {
  return (await contactByNumber(db, projectId, contactNumber))[0];
}

/** What a contact's logs need of it (interactions): its id, number and names, no tags. */
const contactIdentity = preparedQuery<
  [string, number],
  ContactIdentity
>(2, (db, projectId, contactNumber) =>
  db
    .selectFrom("contacts")
    .select(["id", "contact_number", "first_name", "last_name", "email", "deleted_at", "merged_into"])
    .where("project_id", "=", projectId)
    .where("contact_number", "=", contactNumber),
);

type ContactIdentity = {
  id: number;
  contact_number: number;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  deleted_at: string | null;
  merged_into: number | null;
};

/** A live contact's identity; with `trashed`, one in the trash too (erasure, history, a number's reservation). */
export async function findContactIdentity(db: Db, projectId: string, contactNumber: number, options: { trashed?: boolean } = {}): Promise<ContactIdentity | undefined> {
  const row = (await contactIdentity(db, projectId, contactNumber))[0];
  return row && (row.deleted_at === null || options.trashed) ? row : undefined;
}

/**
 * GET one in one statement (docs/api.md §11.1): the row, its type and tags, and the duplicateSignal
 * counts of other contacts sharing its email / phone match keys (index lookups).
 */
const contactWithSignal = preparedQuery<[string, number], ContactView & { tags: TagsColumn; email_matches: number; phone_matches: number }>(
  2,
  (db, projectId, contactNumber) =>
    withTypeOfOne(db)
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
      .where("contacts.contact_number", "=", contactNumber)
      .where("contacts.deleted_at", "is", null) as never,
);

export async function findContactWithSignal(db: Db, projectId: string, contactNumber: number) {
  return (await contactWithSignal(db, projectId, contactNumber))[0];
}

const tagsOfOne = preparedQuery<[number], { contact_id: number; id: string; name: string }>(1, (db, contactId) =>
  db
    .selectFrom("contact_tags")
    .innerJoin("tags", "tags.id", "contact_tags.tag_id")
    .select(["contact_tags.contact_id", "tags.id", "tags.name"])
    .where("contact_tags.contact_id", "=", contactId)
    .orderBy("tags.name"),
);

export async function tagsOfContacts(db: Db, contactIds: number[]) {
  if (contactIds.length === 0) return [];
  if (contactIds.length === 1) return tagsOfOne(db, contactIds[0]!);
  // CROSS JOIN keeps the page's tag rows outer in SQLite: stale statistics made it walk every project's tags by name.
  return db
    .selectFrom("contact_tags")
    .crossJoin("tags")
    .select(["contact_tags.contact_id", "tags.id", "tags.name"])
    .whereRef("tags.id", "=", "contact_tags.tag_id")
    .where("contact_tags.contact_id", "in", contactIds)
    .orderBy("tags.name")
    .execute();
}

/** Every column a new contact row sets, in one order: the insert below is compiled once. */
const CONTACT_COLUMNS = [
  "project_id", "contact_number", "identity_type", "source", "first_name", "last_name", "email", "email_key", "phone",
  "phone_key", "business_name", "website", "address", "contact_type_id", "subscribed", "sms_subscribed", "notes",
  "custom_fields", "created_at", "updated_at",
] as const satisfies ReadonlyArray<keyof NewContactRow>;

const insertContact = preparedQuery<unknown[], { id: number }>(CONTACT_COLUMNS.length, (db, ...slots) =>
  db
    .insertInto("contacts")
    .values(Object.fromEntries(CONTACT_COLUMNS.map((column, i) => [column, slots[i]])) as never)
    .returning("id"),
);

export async function insertContactRow(db: Db, row: NewContactRow): Promise<number> {
  const [inserted] = await insertContact(db, ...CONTACT_COLUMNS.map((column) => row[column] ?? null));
  return inserted!.id;
}

/** A batch's rows (docs/api.md §18.4), 256 to a statement: each one's id by its contact number. */
const insertContactRowsOfBatch = preparedInsert<"contacts", { id: number; contact_number: number }>("contacts", CONTACT_COLUMNS, {
  maxRows: 256,
  returning: ["id", "contact_number"],
});

export async function insertContactRows(db: Db, rows: NewContactRow[]): Promise<Map<number, number>> {
  const inserted = await insertContactRowsOfBatch(db, rows.map((row) => CONTACT_COLUMNS.map((column) => row[column] ?? null)));
  return new Map(inserted.map((r) => [Number(r.contact_number), Number(r.id)]));
}

/** The contacts numbered `from` to `to`, as findContactRow reads one: a batch's new contacts in one statement. */
export async function findContactRowsNumbered(db: Db, projectId: string, from: number, to: number) {
  return (await withTypeOfOne(db)
    .where("contacts.project_id", "=", projectId)
    .where("contacts.contact_number", ">=", from)
    .where("contacts.contact_number", "<=", to)
    .execute()) as Array<ContactView & { tags: TagsColumn }>;
}

/** The columns a changed contact's write sets: all it has but its keys and creation time (compiled once, below). */
const UPDATED_COLUMNS = CONTACT_COLUMNS.filter((c) => c !== "project_id" && c !== "created_at");

const updateContact = preparedQuery<unknown[], { id: number }>(UPDATED_COLUMNS.length + 3, (db, ...slots) =>
  db
    .updateTable("contacts")
    .set({ ...Object.fromEntries(UPDATED_COLUMNS.map((column, i) => [column, slots[i]])), version: slots[UPDATED_COLUMNS.length] } as never)
    .where("id", "=", slots[UPDATED_COLUMNS.length + 1] as never)
    .where("version", "=", slots[UPDATED_COLUMNS.length + 2] as never)
    .returning("id"),
);

/**
 * Writes a changed contact (every column of `row`) and takes its version from `version`
 * to the next (docs/api.md §18.1); false when the stored row is no longer at `version` (a
 * concurrent change committed first), and nothing was written.
 */
export async function updateContactRow(db: Db, id: number, row: Omit<NewContactRow, "created_at">, version: number): Promise<boolean> {
  const updated = await updateContact(db, ...UPDATED_COLUMNS.map((column) => row[column] ?? null), version + 1, id, version);
  return updated.length === 1;
}

/** A number held by a contact, or once held by an erased one (docs/import-export.md §3: never given again). */
export async function contactNumberTaken(db: Db, projectId: string, contactNumber: number): Promise<boolean> {
  if (await findContactIdentity(db, projectId, contactNumber, { trashed: true })) return true;
  const erased = await db
    .selectFrom("erased_contacts")
    .select("contact_number")
    .where("project_id", "=", projectId)
    .where("contact_number", "=", contactNumber)
    .executeTakeFirst();
  return erased !== undefined;
}

/** The copied order keys of a contact's tag and term rows (db/0001_init.sql). */
export interface OrderKeys {
  id: number;
  updatedAt: string;
  contactNumber: number;
}

const insertContactTagRows = preparedInsert("contact_tags", ["contact_id", "tag_id", "updated_at", "contact_number"], { maxRows: 256 });
const insertSearchTermRows = preparedInsert(
  "contact_search_terms",
  ["project_id", "term", "contact_id", "head", "updated_at", "contact_number", ...BIT_COLUMNS],
  { maxRows: 256 },
);

/** A contact's term rows: each carries the bits of all its terms (src/contacts/search/term-bits.ts). */
function termRowsOf(projectId: string, contact: OrderKeys, terms: string[]): unknown[][] {
  const bits = termBitsOf(terms);
  return terms.map((term) => [projectId, term, contact.id, termHead(term), contact.updatedAt, contact.contactNumber, ...bits]);
}

/** Tag rows of a contact that has none yet (a new one), in one statement. */
export async function insertContactTags(db: Db, contact: OrderKeys, tagIds: string[]): Promise<void> {
  await insertContactTagRows(db, tagIds.map((tagId) => [contact.id, tagId, contact.updatedAt, contact.contactNumber]));
}

/** Search-term rows of a contact that has none yet (a new one), in one statement. */
export async function insertSearchTerms(db: Db, projectId: string, contact: OrderKeys, terms: string[]): Promise<void> {
  await insertSearchTermRows(db, termRowsOf(projectId, contact, terms));
  await rememberTypoWords(db, projectId, terms);
}

/** The tag and search-term rows of a batch's new contacts (docs/api.md §18.4), in a few statements. */
export async function insertTagsAndTermsOfMany(db: Db, projectId: string, contacts: Array<OrderKeys & { tagIds: string[]; terms: string[] }>) {
  await insertContactTagRows(db, contacts.flatMap((c) => c.tagIds.map((tagId) => [c.id, tagId, c.updatedAt, c.contactNumber])));
  await insertSearchTermRows(db, contacts.flatMap((c) => termRowsOf(projectId, c, c.terms)));
  await rememberTypoWords(db, projectId, contacts.flatMap((c) => c.terms));
}

// The statements of a contact's update, compiled once: Kysely's building and SQLite's
// compiling of each cost more than running it (src/storage/prepared.ts).
const deleteTagsOf = preparedQuery<[number], never>(1, (db, id) => db.deleteFrom("contact_tags").where("contact_id", "=", id));
const deleteTermsOf = preparedQuery<[number], never>(1, (db, id) => db.deleteFrom("contact_search_terms").where("contact_id", "=", id));
const orderKeysOfTags = preparedQuery<[string, number, number], never>(3, (db, updatedAt, contactNumber, id) =>
  db.updateTable("contact_tags").set({ updated_at: updatedAt, contact_number: contactNumber }).where("contact_id", "=", id),
);
const orderKeysOfTerms = preparedQuery<[string, number, number], never>(3, (db, updatedAt, contactNumber, id) =>
  db.updateTable("contact_search_terms").set({ updated_at: updatedAt, contact_number: contactNumber }).where("contact_id", "=", id),
);

export async function replaceContactTags(db: Db, contact: OrderKeys, tagIds: string[]): Promise<void> {
  await deleteTagsOf(db, contact.id);
  await insertContactTags(db, contact, tagIds);
}

/** A contact's terms anew; its former words no contact holds any more leave the typo index (docs/api.md §11.6). */
export async function replaceSearchTerms(db: Db, projectId: string, contact: OrderKeys, terms: string[]): Promise<void> {
  const before = await db.selectFrom("contact_search_terms").select("term").where("contact_id", "=", contact.id).execute();
  await deleteTermsOf(db, contact.id);
  await insertSearchTerms(db, projectId, contact, terms);
  const kept = new Set(terms);
  await forgetTypoWords(db, projectId, before.map((r) => r.term).filter((t) => !kept.has(t)));
}

/** Keeps the copied order keys of tag and term rows in step with the contact (`which`: the rows not just written anew). */
export async function syncOrderKeys(db: Db, contact: OrderKeys, which = { tags: true, terms: true }): Promise<void> {
  if (which.tags) await orderKeysOfTags(db, contact.updatedAt, contact.contactNumber, contact.id);
  if (which.terms) await orderKeysOfTerms(db, contact.updatedAt, contact.contactNumber, contact.id);
}

/**
 * Takes the next contact number and counts the contact toward the quota, in the request's
 * transaction; the caller refuses the create when the count passes the quota.
 */
const takeContactNumber = preparedQuery<
  [string],
  { last_contact_number: number; contact_count: number; contact_quota: number | null; default_region: string }
>(1, (db, projectId) =>
  db
    .updateTable("projects")
    .set((eb) => ({ last_contact_number: eb("last_contact_number", "+", 1), contact_count: eb("contact_count", "+", 1) }))
    .where("id", "=", projectId)
    .returning(["last_contact_number", "contact_count", "contact_quota", "default_region"]),
);

export async function allocateContactNumber(db: Db, projectId: string) {
  const [counter] = await takeContactNumber(db, projectId);
  if (!counter) throw new Error(`no project ${projectId}`);
  return counter;
}

/**
 * Takes up to `wanted` numbers at once (a batch's creates, docs/api.md §18.4), as many as
 * the quota leaves: `granted` of them, from `first` on. As allocateContactNumber, it holds
 * the project's row until the commit on PostgreSQL.
 */
export async function allocateContactNumbers(db: Db, projectId: string, wanted: number) {
  const counter = await db
    .updateTable("projects")
    .set((eb) => ({ last_contact_number: eb("last_contact_number", "+", wanted), contact_count: eb("contact_count", "+", wanted) }))
    .where("id", "=", projectId)
    .returning(["last_contact_number", "contact_count", "contact_quota", "default_region"])
    .executeTakeFirstOrThrow();
  const over = counter.contact_quota === null ? 0 : Math.min(wanted, Math.max(0, counter.contact_count - counter.contact_quota));
  if (over > 0) {
    await db
      .updateTable("projects")
      .set((eb) => ({ last_contact_number: eb("last_contact_number", "-", over), contact_count: eb("contact_count", "-", over) }))
      .where("id", "=", projectId)
      .execute();
  }
  return { first: counter.last_contact_number - wanted + 1, granted: wanted - over, quota: counter.contact_quota, region: counter.default_region };
}

/** After a relabel to CR-n, generated numbers continue past n (docs/api.md §11.4). */
export async function moveContactCounterPast(db: Db, projectId: string, n: number): Promise<void> {
  await db
    .updateTable("projects")
    .set({ last_contact_number: n })
    .where("id", "=", projectId)
    .where("last_contact_number", "<", n)
    .execute();
}

const regionOf = preparedQuery<[string], { default_region: string }>(1, (db, projectId) =>
  db.selectFrom("projects").select("default_region").where("id", "=", projectId),
);

export async function projectRegion(db: Db, projectId: string): Promise<string> {
  const [row] = await regionOf(db, projectId);
  if (!row) throw new Error(`no project ${projectId}`);
  return row.default_region;
}

/**
 * Numbers of the contacts whose email or phone match key is `value` (at most `limit`),
 * lowest first. Sorted here, not by ORDER BY: that tempted SQLite to walk the project's
 * contacts in number order instead of looking the key up in its index.
 */
const byMatchKey = (column: "email_key" | "phone_key") =>
  preparedQuery<[string, string, number], { contact_number: number }>(3, (db, projectId, value, limit) =>
    db.selectFrom("contacts").select("contact_number").where("project_id", "=", projectId).where(column, "=", value).limit(limit),
  );
const matchKeyQueries = { email_key: byMatchKey("email_key"), phone_key: byMatchKey("phone_key") };

export async function contactNumbersByMatchKey(db: Db, projectId: string, column: "email_key" | "phone_key", value: string, limit: number) {
  const rows = await matchKeyQueries[column](db, projectId, value, limit);
  return rows.map((r) => Number(r.contact_number)).sort((a, b) => a - b);
}

export async function contactNumbersOf(db: Db, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom("contacts").select("contact_number").where("id", "in", ids).orderBy("contact_number").execute();
  return rows.map((r) => Number(r.contact_number));
}
