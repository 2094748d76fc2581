import { findContactIdentity, findContactRow } from "../contacts/repository.ts";
import { missingContact } from "../contacts/missing.ts";
import { lockUntilCommit } from "../storage/query.ts";
import { contactLock, contactOf as contactOfRow, formatContactId } from "../contacts/service.ts";
import type { Db } from "../storage/schema.ts";
import { notFound, validationError } from "../errors.ts";
import { eventOf, recordChange } from "../changes/record.ts";
import { subjectOf } from "../changes/diff.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import { newId } from "../lib/ids.ts";
import { toPage } from "../lib/pagination.ts";
import { toIso } from "../lib/time.ts";
import { findInteractionType } from "../reference/repository.ts";
import * as repo from "./repository.ts";
import type { CreateInteractionInput, InteractionLog } from "./schemas.ts";

const NOTE_TYPE = { id: "note", name: "Note" };

/** A stored log as the API shows it (docs/api.md §12.1). */
export function toLog(row: repo.LogRow, contactId: string): InteractionLog {
  return {
    id: row.id,
    contactId,
    interactionType: row.interaction_type_id ? { id: row.interaction_type_id, name: row.type_name ?? "" } : NOTE_TYPE,
    note: row.note,
    fields: JSON.parse(row.fields),
    date: row.date,
    uniqueIdentifier: row.unique_identifier,
    createdAt: row.created_at,
  };
}

async function contactOf(db: Db, projectId: string, contactNumber: number) {
  const contact = await findContactIdentity(db, projectId, contactNumber);
  if (!contact) throw notFound("Contact");
  return contact;
}

/**
 * Adds a log to a contact's timeline (docs/api.md §12) at `now`, the service's clock (issue 11). With a uniqueIdentifier already
 * used on this contact, answers the stored log and `created: false`; nothing is written and
 * no event fires. Concurrent first calls create once: on SQLite they run one at a time on
 * the writer; on PostgreSQL the unique constraint makes the later insert wait for the
 * first to commit and then write nothing (docs/scaling.md §6).
 */
export async function createInteraction(db: Db, projectId: string, contactNumber: number, input: CreateInteractionInput, now: string) {
  // The whole contact, read once: its event's subject comes from the same read (a second
  // read could miss a contact another node trashed in between, PostgreSQL).
  // Under the contact's lock, as its other writers: a log is never added to a contact a merge
  // is moving away meanwhile (docs/api.md §20.6; PostgreSQL, a no-op on SQLite).
  await lockUntilCommit(db, contactLock(projectId, contactNumber));
  const contact = await findContactRow(db, projectId, contactNumber);
  if (!contact) throw await missingContact(db, projectId, contactNumber);
  const contactId = formatContactId(contact.contact_number);
  if (input.uniqueIdentifier !== undefined) {
    const existing = await repo.findLogByUniqueIdentifier(db, contact.id, input.uniqueIdentifier);
    if (existing) return { log: toLog(existing, contactId), created: false };
  }
  const type = input.interactionTypeId === undefined ? undefined : await findInteractionType(db, projectId, input.interactionTypeId);
  if (input.interactionTypeId !== undefined && !type) {
    throw validationError("interactionTypeId", "interactionTypeId is not an interaction type of this project.");
  }
  const row: repo.NewLogRow = {
    id: newId("il"),
    project_id: projectId,
    contact_id: contact.id,
    interaction_type_id: type?.id ?? null,
    note: input.note ?? "",
    fields: JSON.stringify(input.fields ?? {}),
    date: input.date ? toIso(input.date)! : now,
    unique_identifier: input.uniqueIdentifier ?? null,
    created_at: now,
  };
  if (!(await repo.insertLog(db, row))) {
    // A concurrent call with this uniqueIdentifier committed first (another node): its log is the answer.
    const existing = await repo.findLogByUniqueIdentifier(db, contact.id, input.uniqueIdentifier!);
    if (!existing) throw new Error(`interaction log ${row.id} was neither written nor found by its uniqueIdentifier`);
    return { log: toLog(existing, contactId), created: false };
  }
  // The answer is the row as written: reading it back would cost a statement for nothing new.
  const log = toLog({ ...row, type_name: type?.name ?? null }, contactId);
  const data = { interactionLog: log, contact: { contactId, firstName: contact.first_name, lastName: contact.last_name, email: contact.email } };
  // Subscription filters judge the log's contact as it is now (docs/webhooks.md §8).
  const subject = subjectOf(contact.id, contactOfRow(contact));
  const event = eventOf("interaction_log.created", data, now, subject);
  // What a follower needs to place the log (docs/api.md §19.1): its contact and fields, from null.
  const changes = Object.entries({ contactId, interactionType: log.interactionType, note: log.note, fields: Object.keys(log.fields).length > 0 ? log.fields : null, date: log.date })
    .filter(([, to]) => to !== null && to !== "")
    .map(([field, to]) => ({ field, from: null, to }));
  await recordChange(db, { projectId, object: "interaction_log", id: log.id, contactId: contact.id, action: "created", changes, at: now, events: [event] });
  return { log, created: true };
}

export async function listInteractions(
  db: Db,
  cursors: CursorCodec,
  projectId: string,
  contactNumber: number,
  query: { interactionTypeId?: string; since?: string; until?: string; limit: number; cursor?: string },
) {
  const contact = await contactOf(db, projectId, contactNumber);
  const { limit, cursor, ...rest } = query;
  const bound = { contact: contact.id, ...rest };
  const filters: repo.LogFilters = {
    interactionTypeId: rest.interactionTypeId,
    since: rest.since ? toIso(rest.since)! : undefined,
    until: rest.until ? toIso(rest.until)! : undefined,
    after: cursor ? (cursors.decode(cursor, bound) as [string, string]) : undefined,
  };
  const rows = await repo.listLogs(db, contact.id, filters, limit);
  const contactId = formatContactId(contact.contact_number);
  return toPage(rows, limit, (r) => [r.date, r.id], (r) => toLog(r, contactId), cursors, bound);
}
