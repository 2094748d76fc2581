import type { ContactRow, Db, NewContactRow } from "../db/schema.ts";
import { preparedQuery } from "../db/prepared.ts";
import { termHead } from "./matching.ts";

/** A contact row with its contact type's name and category joined in. */
export type ContactView = ContactRow & { type_name: string | null; type_category: string | null };

/** For pages of contacts: one join for the whole page. */
export const withType = (db: Db) =>
  db
    .selectFrom("contacts")
    .leftJoin("contact_types", "contact_types.id", "contacts.contact_type_id")
    .selectAll("contacts")
    .select(["contact_types.name as type_name", "contact_types.category as type_category"]);

/**
 * For one contact: the type by two scalar subqueries. SQLite sets up a join per run (its
 * Bloom filter), which cost a point lookup ~4× (bench/RESULTS.md: 73 → 20 µs for GET one).
 */
const withTypeOfOne = (db: Db) =>
  db
    .selectFrom("contacts")
    .selectAll("contacts")
    .select((eb) => [
      eb.selectFrom("contact_types").select("name").whereRef("contact_types.id", "=", "contacts.contact_type_id").as("type_name"),
      eb.selectFrom("contact_types").select("category").whereRef("contact_types.id", "=", "contacts.contact_type_id").as("type_category"),
    ]);

const contactByNumber = preparedQuery<[string, number], ContactView>(2, (db, projectId, contactNumber) =>
  withTypeOfOne(db).where("contacts.project_id", "=", projectId).where("contacts.contact_number", "=", contactNumber),
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
      .where("contacts.contact_number", "=", contactNumber) as never,
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

/** The copied order keys of a contact's tag and term rows (db/0001_init.sql). */
export interface OrderKeys {
  id: number;
  updatedAt: string;
  contactNumber: number;
}

export async function replaceContactTags(db: Db, contact: OrderKeys, tagIds: string[]): Promise<void> {
  await db.deleteFrom("contact_tags").where("contact_id", "=", contact.id).execute();
  if (tagIds.length) {
    await db
      .insertInto("contact_tags")
      .values(tagIds.map((tag_id) => ({ contact_id: contact.id, tag_id, updated_at: contact.updatedAt, contact_number: contact.contactNumber })))
      .execute();
  }
}

export async function replaceSearchTerms(db: Db, projectId: string, contact: OrderKeys, terms: string[]): Promise<void> {
  await db.deleteFrom("contact_search_terms").where("contact_id", "=", contact.id).execute();
  if (terms.length) {
    await db
      .insertInto("contact_search_terms")
      .values(
        terms.map((term) => ({
          project_id: projectId,
          term,
          contact_id: contact.id,
          head: termHead(term),
          updated_at: contact.updatedAt,
          contact_number: contact.contactNumber,
        })),
      )
      .execute();
  }
}

/** Keeps the copied order keys of tag and term rows in step with the contact. */
export async function syncOrderKeys(db: Db, contact: OrderKeys): Promise<void> {
  const keys = { updated_at: contact.updatedAt, contact_number: contact.contactNumber };
  await db.updateTable("contact_tags").set(keys).where("contact_id", "=", contact.id).execute();
  await db.updateTable("contact_search_terms").set(keys).where("contact_id", "=", contact.id).execute();
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
