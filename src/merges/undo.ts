import { sql } from "kysely";
import type { Db } from "../storage/schema.ts";
import { jsonColumn } from "../storage/query.ts";
import { ApiError, notFound } from "../errors.ts";
import { eventOf, recordChanges, type StagedChange } from "../changes/record.ts";
import { previousValues, subjectOf } from "../changes/diff.ts";
import * as contacts from "../contacts/repository.ts";
import { contactOf, formatContactId, lockContacts, quotaExceeded, writeContactState } from "../contacts/service.ts";
import { stateFromRow } from "../contacts/state.ts";
import { reinstateContact } from "../contacts/trash.ts";
import type { Contact } from "../contacts/schemas.ts";
import { revertedState } from "./fields.ts";
import { findMerge, markUndone, snapshotOf, type MergeSnapshot } from "./repository.ts";

const conflict = (message: string) => new ApiError("ERR_CONFLICT", message);

/**
 * `POST /merges/{mergeId}/undo` (docs/api.md §20.4): within 30 days, the merged contacts come
 * back with their ids, fields, tags and logs as before (logs added to the survivor since
 * stay with it), and the survivor's fields the merge set and nobody changed since go back.
 * 410 ERR_UNDO_EXPIRED after 30 days; 409 when it was undone already, or one of the contacts
 * was since erased, deleted or merged again.
 */
export async function undoMerge(db: Db, projectId: string, mergeId: string, now: string): Promise<{ contact: Contact; restoredContacts: Contact[] }> {
  const merge = await findMerge(db, projectId, mergeId);
  if (!merge) throw notFound("Merge");
  if (merge.undone_at !== null) throw conflict(`Merge ${mergeId} was undone already.`);
  if (now > merge.undo_until) throw new ApiError("ERR_UNDO_EXPIRED", `Merge ${mergeId} can no longer be undone: its 30 days ended ${merge.undo_until}.`);
  const snapshot = snapshotOf(merge);
  if (!snapshot) throw conflict(`Merge ${mergeId} cannot be undone: one of its contacts was erased.`);

  // As a merge: the project's row, then every contact's lock in number order.
  const counted = await db
    .updateTable("projects")
    .set({ contact_count: sql<number>`contact_count + ${snapshot.merged.length}` })
    .where("id", "=", projectId)
    .returning(["contact_count", "contact_quota", "default_region"])
    .executeTakeFirstOrThrow();
  const survivorNumber = await numberOf(db, merge.survivor_id);
  if (survivorNumber === null) throw conflict(`Merge ${mergeId} cannot be undone: its surviving contact was erased.`);
  await lockContacts(db, projectId, [survivorNumber, ...snapshot.merged.map((m) => m.contactNumber)]);

  // Read again under the locks: an undo of the same merge on another node may have just committed.
  if ((await findMerge(db, projectId, mergeId))?.undone_at !== null) throw conflict(`Merge ${mergeId} was undone already.`);
  const survivor = await contacts.findContactRow(db, projectId, survivorNumber);
  if (!survivor || survivor.id !== merge.survivor_id) throw conflict(`Merge ${mergeId} cannot be undone: ${formatContactId(survivorNumber)} was since deleted or merged.`);
  const mergedRows = [];
  for (const m of snapshot.merged) {
    const row = await contacts.findTrashedContactRow(db, projectId, m.contactNumber, merge.survivor_id);
    if (!row || row.id !== m.id) throw conflict(`Merge ${mergeId} cannot be undone: ${formatContactId(m.contactNumber)} was since erased.`);
    mergedRows.push(row);
  }
  if (counted.contact_quota !== null && counted.contact_count > counted.contact_quota) throw quotaExceeded(counted.contact_quota);

  const staged: StagedChange[] = [];
  // The survivor first: it gives back unique values the merge gave it.
  const current = stateFromRow(survivor, jsonColumn(survivor.tags).map((t) => t.id));
  const reverted = revertedState(current, snapshot.survivor.before, snapshot.survivor.after);
  const written = await writeContactState(db, projectId, survivor, current, reverted, now);
  const contact = written.contact;
  const data = { contact, changedFields: written.changed, previous: previousValues(contactOf(survivor), written.changed) };
  const updated = eventOf("contact.updated", data, now, subjectOf(survivor.id, contact, written.changes));

  const restoredContacts: Contact[] = [];
  for (const [i, row] of mergedRows.entries()) {
    const restored = await reinstateContact(db, projectId, row, counted.default_region, now);
    restoredContacts.push(restored);
    const event = eventOf("contact.restored", { contact: restored }, now, subjectOf(row.id, restored));
    staged.push({ projectId, object: "contact", id: restored.contactId, contactId: row.id, action: "restored", at: now, events: [event] });
    for (const id of await moveLogsBack(db, snapshot.merged[i]!, survivor.id)) {
      const changes = [{ field: "contactId", from: contact.contactId, to: restored.contactId }];
      staged.push({ projectId, object: "interaction_log", id, contactId: row.id, action: "updated", changes, at: now, events: [] });
    }
  }
  staged.push({ projectId, object: "contact", id: contact.contactId, contactId: survivor.id, action: "updated", changes: written.changes, at: now, events: [updated] });
  await recordChanges(db, staged);
  await markUndone(db, mergeId, now);
  return { contact, restoredContacts };
}

async function numberOf(db: Db, id: number): Promise<number | null> {
  const row = await db.selectFrom("contacts").select("contact_number").where("id", "=", id).executeTakeFirst();
  return row ? Number(row.contact_number) : null;
}

/** The logs that moved in the merge and are still the survivor's go back, with the identifiers they gave up; the ids moved. */
async function moveLogsBack(db: Db, merged: MergeSnapshot["merged"][number], survivorId: number): Promise<string[]> {
  const back: string[] = [];
  for (let i = 0; i < merged.logs.length; i += 500) {
    const chunk = merged.logs.slice(i, i + 500);
    const rows = await db.updateTable("interaction_logs").set({ contact_id: merged.id }).where("id", "in", chunk).where("contact_id", "=", survivorId).returning("id").execute();
    back.push(...rows.map((r) => r.id));
  }
  for (const [id, identifier] of Object.entries(merged.identifiers)) {
    await db.updateTable("interaction_logs").set({ unique_identifier: identifier }).where("id", "=", id).where("contact_id", "=", merged.id).execute();
  }
  return back.sort();
}
