import { sql } from "kysely";
import type { Db } from "../storage/schema.ts";
import { inSavepoint } from "../storage/unit-of-work.ts";
import { ApiError, notFound } from "../errors.ts";
import { newId } from "../lib/ids.ts";
import { eventOf, recordChanges, type StagedChange } from "../changes/record.ts";
import { subjectOf } from "../changes/diff.ts";
import * as contacts from "../contacts/repository.ts";
import { formatContactId, lockContacts, parseContactId, writeContactState } from "../contacts/service.ts";
import { stateFromRow } from "../contacts/state.ts";
import { retireContact } from "../contacts/trash.ts";
import type { Contact } from "../contacts/schemas.ts";
import { jsonColumn } from "../storage/query.ts";
import { mergedState } from "./fields.ts";
import { insertMerge, mergedTarget, UNDO_DAYS, type MergeSnapshot } from "./repository.ts";
import { mergedError } from "./redirect.ts";

export interface MergeRequest {
  contactIds: string[];
  fields?: Record<string, string>;
  dryRun?: boolean;
}

export interface MergeResult {
  contact: Contact;
  merge: { id: string | null; mergedContactIds: string[]; at: string; undoUntil: string | null };
}

/** Thrown to roll a dry run's savepoint back with everything it wrote. */
class DryRun extends Error {
  constructor(readonly result: MergeResult) {
    super("dry run");
  }
}

/**
 * `POST /contacts/{contactId}/merge` (docs/api.md §20.2). With `dryRun` the merge runs in
 * a savepoint that is rolled back: the answer is the contact the merge would make, and
 * nothing (change, event, merge) is kept.
 */
export async function mergeContacts(db: Db, projectId: string, survivorNumber: number, request: MergeRequest, now: string): Promise<MergeResult> {
  const others = otherNumbers(survivorNumber, request.contactIds);
  if (!request.dryRun) return merge(db, projectId, survivorNumber, others, request.fields, now);
  const attempt = await inSavepoint(db, "merge_dry_run", async () => {
    const result = await merge(db, projectId, survivorNumber, others, request.fields, now);
    throw new DryRun({ ...result, merge: { ...result.merge, id: null, undoUntil: null } });
  });
  if (!attempt.ok && attempt.error instanceof DryRun) return attempt.error.result;
  throw attempt.ok ? new Error("a dry run kept its writes") : attempt.error;
}

/** The others' numbers: 1 to 10 contactIds, none repeated, not the survivor (422 `contactIds`). */
function otherNumbers(survivorNumber: number, contactIds: string[]): number[] {
  const numbers = contactIds.map((id) => {
    const n = parseContactId(id);
    if (n === null) throw new ApiError("ERR_FORM_VALIDATION", `${id} is not a contactId.`, "contactIds");
    return n;
  });
  if (numbers.includes(survivorNumber)) throw new ApiError("ERR_FORM_VALIDATION", "contactIds must not name the contact merged into.", "contactIds");
  if (new Set(numbers).size !== numbers.length) throw new ApiError("ERR_FORM_VALIDATION", "contactIds must not repeat a contact.", "contactIds");
  return numbers;
}

async function merge(db: Db, projectId: string, survivorNumber: number, others: number[], fields: Record<string, string> | undefined, now: string): Promise<MergeResult> {
  // The project's row first (the others leave the quota's count), then every contact's lock
  // in number order: two merges sharing a contact, or a merge and a PATCH of one of its
  // contacts, take turns, and never in a cycle (PostgreSQL).
  await db.updateTable("projects").set({ contact_count: sql<number>`contact_count - ${others.length}` }).where("id", "=", projectId).execute();
  await lockContacts(db, projectId, [survivorNumber, ...others]);
  const survivor = await contacts.findContactRow(db, projectId, survivorNumber);
  if (!survivor) throw notFound("Contact");
  const otherRows: Array<NonNullable<typeof survivor>> = [];
  for (const n of others) {
    const row = await contacts.findContactRow(db, projectId, n);
    if (row) {
      otherRows.push(row);
      continue;
    }
    const target = await mergedTarget(db, projectId, n);
    if (target !== null) throw mergedError(formatContactId(n), formatContactId(target), "contactIds");
    throw new ApiError("ERR_FORM_VALIDATION", `${formatContactId(n)} is not a contact of this project.`, "contactIds");
  }
  // The most recently updated other gives a field the survivor lacks (docs/api.md §20.2).
  otherRows.sort((a, b) => (a.updated_at === b.updated_at ? b.contact_number - a.contact_number : a.updated_at < b.updated_at ? 1 : -1));
  const sideOf = (row: (typeof otherRows)[number]) => ({
    contactId: formatContactId(row.contact_number),
    state: stateFromRow(row, jsonColumn(row.tags).map((t) => t.id)),
  });
  const before = sideOf(survivor);
  const after = mergedState(before, otherRows.map(sideOf), fields);

  const staged: StagedChange[] = [];
  const moved: MergeSnapshot["merged"] = [];
  const mergedContactIds = otherRows.map((r) => formatContactId(r.contact_number));
  // The others leave first, so the survivor can take their unique values.
  for (const row of otherRows) {
    const contact = await retireContact(db, projectId, row, now, survivor.id);
    const event = eventOf("contact.deleted", { contactId: contact.contactId, reason: "merged", mergedInto: formatContactId(survivorNumber) }, now, subjectOf(row.id, contact));
    const changes = [{ field: "mergedInto", from: null, to: formatContactId(survivorNumber) }];
    staged.push({ projectId, object: "contact", id: contact.contactId, contactId: row.id, action: "deleted", changes, at: now, events: [event] });
    moved.push({ id: row.id, contactNumber: row.contact_number, ...(await moveLogs(db, row.id, survivor.id)) });
  }
  for (const [i, m] of moved.entries()) {
    for (const id of m.logs) {
      const changes = [{ field: "contactId", from: mergedContactIds[i], to: formatContactId(survivorNumber) }];
      staged.push({ projectId, object: "interaction_log", id, contactId: survivor.id, action: "updated", changes, at: now, events: [] });
    }
  }
  const written = await writeContactState(db, projectId, survivor, before.state, after, now);
  const mergeId = newId("mrg");
  const undoUntil = new Date(Date.parse(now) + UNDO_DAYS * 86_400_000).toISOString();
  const snapshot: MergeSnapshot = { survivor: { before: before.state, after }, merged: moved };
  await insertMerge(db, {
    id: mergeId,
    project_id: projectId,
    survivor_id: survivor.id,
    merged_ids: JSON.stringify(otherRows.map((r) => r.id)),
    snapshot: JSON.stringify(snapshot),
    at: now,
    undo_until: undoUntil,
  });
  const contact = written.contact;
  const event = eventOf("contact.merged", { contact, mergedContactIds, mergeId }, now, subjectOf(survivor.id, contact, written.changes));
  staged.push({ projectId, object: "contact", id: contact.contactId, contactId: survivor.id, action: "merged", changes: written.changes, at: now, events: [event] });
  await recordChanges(db, staged);
  return { contact, merge: { id: mergeId, mergedContactIds, at: now, undoUntil } };
}

/**
 * Moves a merged contact's interaction logs to the survivor (docs/api.md §20.2): a log whose
 * uniqueIdentifier the survivor already uses keeps its content without it (the identifier
 * is kept in the merge, for its undo).
 */
async function moveLogs(db: Db, fromId: number, toId: number): Promise<Omit<MergeSnapshot["merged"][number], "id" | "contactNumber">> {
  const logs = await db.selectFrom("interaction_logs").select(["id", "unique_identifier"]).where("contact_id", "=", fromId).orderBy("id").execute();
  if (logs.length === 0) return { logs: [], identifiers: {} };
  const wanted = logs.flatMap((l) => (l.unique_identifier === null ? [] : [l.unique_identifier]));
  const taken = new Set<string>();
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = await db
      .selectFrom("interaction_logs")
      .select("unique_identifier")
      .where("contact_id", "=", toId)
      .where("unique_identifier", "in", wanted.slice(i, i + 500))
      .execute();
    for (const r of rows) if (r.unique_identifier !== null) taken.add(r.unique_identifier);
  }
  const identifiers: Record<string, string> = {};
  for (const log of logs) if (log.unique_identifier !== null && taken.has(log.unique_identifier)) identifiers[log.id] = log.unique_identifier;
  const clashing = Object.keys(identifiers);
  for (let i = 0; i < clashing.length; i += 500) {
    await db.updateTable("interaction_logs").set({ unique_identifier: null }).where("id", "in", clashing.slice(i, i + 500)).execute();
  }
  await db.updateTable("interaction_logs").set({ contact_id: toId }).where("contact_id", "=", fromId).execute();
  return { logs: logs.map((l) => l.id), identifiers };
}
