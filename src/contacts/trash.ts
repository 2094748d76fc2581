import { sql } from "kysely";
import { jsonColumn, lockUntilCommit } from "../storage/query.ts";
import type { Db } from "../storage/schema.ts";
import { ApiError, notFound } from "../errors.ts";
import { eventOf, recordChange } from "../changes/record.ts";
import { subjectOf } from "../changes/diff.ts";
import * as repo from "./repository.ts";
import { missingContact } from "./missing.ts";
import type { ContactView, TagsColumn } from "./repository.ts";
import { checkPrecondition, type Precondition } from "./preconditions.ts";
import { contactLock, contactOf, formatContactId, loadContact, quotaExceeded, termsOf, toRow } from "./service.ts";
import { stateFromRow } from "./state.ts";
import { indexDuplicates, keysOfRow } from "../duplicates/maintain.ts";
import { claimUniqueValues, releaseUniqueValues, uniqueFieldsOf, uniqueValuesOf } from "./unique-values.ts";

/** How long a deleted contact waits in the trash before it is erased (docs/api.md §19.3). */
export const TRASH_DAYS = 30;

/**
 * `DELETE /contacts/{contactId}` (docs/api.md §19.3): the contact goes to the trash. Its row
 * stays (its logs, history and number with it), and it leaves everything that finds
 * contacts: its tag links wait in `trashed_tags`, its search terms, email and phone match
 * keys and unique values go, and it stops counting toward the quota. So lists, search,
 * duplicateSignal, upsert and forms' email match pass it by without a filter of their own.
 */
export async function trashContact(db: Db, projectId: string, contactNumber: number, now: string, ifMatch?: Precondition): Promise<void> {
  // The project's row first, then the contact's lock: the order a batch takes them in
  // (numbers, then its items' contacts), so the two never wait on each other in a cycle
  // (PostgreSQL). A refusal below rolls the count back with the rest.
  await db.updateTable("projects").set({ contact_count: sql<number>`contact_count - 1` }).where("id", "=", projectId).execute();
  await lockUntilCommit(db, contactLock(projectId, contactNumber));
  const row = await repo.findContactRow(db, projectId, contactNumber);
  if (!row) throw await missingContact(db, projectId, contactNumber);
  checkPrecondition(ifMatch, row.version);
  const contact = await retireContact(db, projectId, row, now, null);
  const event = eventOf("contact.deleted", { contactId: contact.contactId, reason: "deleted" }, now, subjectOf(row.id, contact));
  await recordChange(db, { projectId, object: "contact", id: contact.contactId, contactId: row.id, action: "deleted", at: now, events: [event] });
}

/**
 * Takes a live contact out of everything that finds contacts (the trash, a merge's others):
 * its tag links wait in `trashed_tags`; its search terms, match and duplicate keys and
 * unique values go. `mergedInto`: the survivor it was merged into (docs/api.md §20.3).
 * The caller took it out of the quota's count and records the change.
 */
export async function retireContact(db: Db, projectId: string, row: ContactView & { tags: TagsColumn }, now: string, mergedInto: number | null) {
  const contact = contactOf(row);
  await db
    .updateTable("contacts")
    .set({ deleted_at: now, trashed_tags: JSON.stringify(contact.tags.map((t) => t.id)), email_key: null, phone_key: null, merged_into: mergedInto })
    .where("id", "=", row.id)
    .execute();
  await db.deleteFrom("contact_tags").where("contact_id", "=", row.id).execute();
  await db.deleteFrom("contact_search_terms").where("contact_id", "=", row.id).execute();
  await releaseUniqueValues(db, row.id);
  await indexDuplicates(db, projectId, [{ contactId: row.id, before: keysOfRow(row), after: [] }], now);
  return contact;
}

/**
 * `POST /contacts/{contactId}/restore` (docs/api.md §19.3): back from the trash with its logs,
 * tags that still exist, search terms and match keys; it counts toward the quota again (402
 * when full) and takes its unique values back (409 when another contact holds one now).
 * The restore is a change: a new version and updatedAt, so `updatedSince` mirrors see it.
 */
export async function restoreContact(db: Db, projectId: string, contactNumber: number, now: string) {
  // The project's row, then the contact's lock (as trashContact).
  const counted = await db
    .updateTable("projects")
    .set({ contact_count: sql<number>`contact_count + 1` })
    .where("id", "=", projectId)
    .returning(["contact_count", "contact_quota", "default_region"])
    .executeTakeFirstOrThrow();
  await lockUntilCommit(db, contactLock(projectId, contactNumber));
  const row = await repo.findTrashedContactRow(db, projectId, contactNumber);
  if (!row) {
    if (await repo.findContactIdentity(db, projectId, contactNumber)) {
      throw new ApiError("ERR_CONFLICT", `${formatContactId(contactNumber)} is not in the trash.`);
    }
    throw notFound("Contact");
  }
  if (counted.contact_quota !== null && counted.contact_count > counted.contact_quota) throw quotaExceeded(counted.contact_quota);
  const contact = await reinstateContact(db, projectId, row, counted.default_region, now);
  const event = eventOf("contact.restored", { contact }, now, subjectOf(row.id, contact));
  await recordChange(db, { projectId, object: "contact", id: contact.contactId, contactId: row.id, action: "restored", at: now, events: [event] });
  return contact;
}

/**
 * Brings a trashed or merged-away contact back (restore, a merge's undo): live again with its
 * tags that still exist, search terms, match and duplicate keys and unique values (409 when
 * another contact holds one now), as a new version. The caller counted it toward the quota
 * and records the change.
 */
export async function reinstateContact(db: Db, projectId: string, row: ContactView & { tags: TagsColumn }, region: string, now: string) {
  const contactNumber = row.contact_number;
  const tagIds = await existingTags(db, projectId, jsonColumn<string[]>(row.trashed_tags ?? "[]"));
  const state = stateFromRow(row, tagIds);
  const keys = toRow(state, projectId, region);
  await db
    .updateTable("contacts")
    .set({ deleted_at: null, trashed_tags: null, merged_into: null, email_key: keys.email_key, phone_key: keys.phone_key, version: row.version + 1, updated_at: now })
    .where("id", "=", row.id)
    .execute();
  const uniqueFields = Object.keys(state.customFields).length > 0 ? await uniqueFieldsOf(db, projectId) : [];
  await claimUniqueValues(db, projectId, row.id, uniqueValuesOf(uniqueFields, state.customFields), uniqueFields);
  const order = { id: row.id, updatedAt: now, contactNumber };
  await repo.insertContactTags(db, order, tagIds);
  await repo.insertSearchTerms(db, projectId, order, termsOf(state, keys.phone_key));
  await indexDuplicates(db, projectId, [{ contactId: row.id, before: [], after: keysOfRow(keys) }], now);
  return loadContact(db, projectId, contactNumber);
}

/** The tags of `ids` the project still has (a tag removed while the contact was in the trash is not linked again). */
async function existingTags(db: Db, projectId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom("tags").select("id").where("project_id", "=", projectId).where("id", "in", ids).execute();
  return rows.map((r) => r.id).sort();
}

/** Contacts in the trash longer than TRASH_DAYS at `now`: the purge erases them (src/jobs/retention.ts). */
export async function expiredTrash(db: Db, now: number, limit: number): Promise<Array<{ projectId: string; contactNumber: number }>> {
  const cutoff = new Date(now - TRASH_DAYS * 86_400_000).toISOString();
  const rows = await db
    .selectFrom("contacts")
    .select(["project_id", "contact_number"])
    .where("deleted_at", "is not", null)
    .where("deleted_at", "<", cutoff)
    // A merged-away contact stays as its survivor's redirect (docs/api.md §20.3).
    .where("merged_into", "is", null)
    .orderBy("deleted_at")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ projectId: r.project_id, contactNumber: Number(r.contact_number) }));
}
