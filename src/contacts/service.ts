import { isUniqueViolation, jsonColumn, lockUntilCommit, locksUntilCommit } from "../storage/query.ts";
import type { Db, NewContactRow } from "../storage/schema.ts";
import { ApiError, notFound } from "../errors.ts";
import { eventOf, recordChange } from "../changes/record.ts";
import { contactChanges, previousValues, subjectOf } from "../changes/diff.ts";
import { defaultContactType } from "../reference/repository.ts";
import { applyContactInput, storedReference, type ContactReference } from "./apply.ts";
import { emailKey, phoneKey } from "./matching.ts";
import { searchTerms } from "./search/terms.ts";
import * as repo from "./repository.ts";
import { missingContact } from "./missing.ts";
import type { ContactView, TagsColumn } from "./repository.ts";
import type { Contact, ContactInput } from "./schemas.ts";
import { checkPrecondition, type Precondition } from "./preconditions.ts";
import { blankState, changedFields, stateFromRow, type ContactState } from "./state.ts";
import { indexDuplicates, keysOfRow } from "../duplicates/maintain.ts";
import { claimUniqueValues, releaseUniqueValues, uniqueFieldsOf, uniqueValuesOf } from "./unique-values.ts";

type Category = NonNullable<Contact["contactType"]>["category"];

export const formatContactId = (n: number) => `CR-${n}`;

/** `CR-<digits>` → its number; null for anything else (then the contact is not found). */
export function parseContactId(contactId: string): number | null {
  const m = /^CR-(\d{1,15})$/.exec(contactId);
  return m ? Number(m[1]) : null;
}

/** The number of a `contactId` in a path; any other form names no contact: 404. */
export function requireContactNumber(contactId: string): number {
  const n = parseContactId(contactId);
  if (n === null) throw notFound("Contact");
  return n;
}

/** The lock a contact's writers take (patchContact): by its number, as requests address it. */
export const contactLock = (projectId: string, contactNumber: number) => `contact:${projectId}:${contactNumber}`;

/**
 * Takes the locks of several contacts at once, in number order (one round trip on
 * PostgreSQL): a merge's contacts, a batch's items. Writers that each hold one contact's lock
 * and wait for another's could otherwise wait on each other in a cycle.
 */
export async function lockContacts(db: Db, projectId: string, contactNumbers: number[]): Promise<void> {
  const sorted = [...new Set(contactNumbers)].sort((a, b) => a - b);
  await locksUntilCommit(db, sorted.map((n) => contactLock(projectId, n)));
}

/** The contact numbers a batch's items name (`contactId`), for lockContacts. */
export function contactNumbersOfItems(items: readonly unknown[]): number[] {
  const numbers: number[] = [];
  for (const item of items) {
    const contactId = typeof item === "object" && item !== null ? (item as { contactId?: unknown }).contactId : undefined;
    const n = typeof contactId === "string" ? parseContactId(contactId) : null;
    if (n !== null) numbers.push(n);
  }
  return numbers;
}

/** A new contact's number until the counter gives it one (no contactId parses to it). */
const UNNUMBERED = -1;

/**
 * Creates a contact (docs/api.md §11) and records contact.created. `now` is
 * read from the service's clock (issue 11), or the system's in the CLI.
 */
export async function createContact(
  db: Db,
  projectId: string,
  input: ContactInput,
  options: { source?: string; emitEvent?: boolean; now: string },
): Promise<Contact> {
  const now = options.now;
  const contactTypeId = (await defaultContactType(db, projectId))?.id ?? null;
  const state = await newContactState(storedReference(db, projectId, now), input, { source: options.source, contactTypeId });
  const uniqueFields = Object.keys(state.customFields).length > 0 ? await uniqueFieldsOf(db, projectId) : [];
  const uniqueValues = uniqueValuesOf(uniqueFields, state.customFields);
  // The number and the quota last, once the input is known good: on PostgreSQL the
  // project's row stays locked from here to the commit, and creates in one project take
  // turns on it (docs/scaling.md §6: exact numbers and quota across nodes), so it is held for
  // the inserts only, not for validation and lookups.
  const counter = await repo.allocateContactNumber(db, projectId);
  if (counter.contact_quota !== null && counter.contact_count > counter.contact_quota) throw quotaExceeded(counter.contact_quota);
  state.contactNumber = counter.last_contact_number;
  const row = toRow(state, projectId, counter.default_region);
  const id = await repo.insertContactRow(db, { ...row, created_at: now, updated_at: now });
  const keys = { id, updatedAt: now, contactNumber: state.contactNumber };
  await indexDuplicates(db, projectId, [{ contactId: id, before: [], after: keysOfRow(row) }], now);
  await repo.insertContactTags(db, keys, state.tagIds);
  await repo.insertSearchTerms(db, projectId, keys, termsOf(state, row.phone_key));
  await claimUniqueValues(db, projectId, id, uniqueValues, uniqueFields);
  const contact = await loadContact(db, projectId, state.contactNumber);
  const events = options.emitEvent === false ? [] : [eventOf("contact.created", { contact }, now, subjectOf(id, contact))];
  await recordChange(db, { projectId, object: "contact", id: contact.contactId, contactId: id, action: "created", changes: contactChanges(null, contact), at: now, events });
  return contact;
}

/** A new contact's state from its input, checked against `reference`; numbered when it is written. */
export async function newContactState(reference: ContactReference, input: ContactInput, defaults: { source?: string; contactTypeId: string | null }) {
  const blank = blankState(UNNUMBERED);
  if (defaults.source) blank.source = defaults.source;
  blank.contactTypeId = defaults.contactTypeId;
  const state = await applyContactInput(reference, blank, input);
  if (state.contactNumber !== UNNUMBERED) throw new ApiError("ERR_FORM_VALIDATION", "contactId is set by the service.", "contactId");
  return state;
}

export const quotaExceeded = (quota: number) => new ApiError("ERR_QUOTA_EXCEEDED", `The project's contact quota of ${quota} is exhausted.`);

/**
 * Merge-patches a contact (docs/api.md §11) at `now` (as createContact); a PATCH that
 * changes nothing writes nothing and keeps its version. With `ifMatch` (docs/api.md §18.1)
 * the stored version must match, checked again by the update itself, so a concurrent
 * change in between (another node) is a 412 too.
 */
export async function patchContact(db: Db, projectId: string, contactNumber: number, input: ContactInput, now: string, ifMatch?: Precondition) {
  // Writes of one contact take turns across nodes, so the read below is the state the
  // update replaces (a no-op on SQLite, whose writer is one).
  await lockUntilCommit(db, contactLock(projectId, contactNumber));
  const row = await repo.findContactRow(db, projectId, contactNumber);
  if (!row) throw await missingContact(db, projectId, contactNumber);
  checkPrecondition(ifMatch, row.version);
  const before = stateFromRow(row, jsonColumn(row.tags).map((t) => t.id));
  const after = await applyContactInput(storedReference(db, projectId, now), before, input);
  const changed = changedFields(before, after);
  if (changed.length === 0) return { contact: contactOf(row), changed };
  const { contact, changes } = await writeContactState(db, projectId, row, before, after, now, ifMatch);
  const previousContactId = changed.includes("contactId") ? { previousContactId: formatContactId(before.contactNumber) } : {};
  const data = { contact, changedFields: changed, previous: previousValues(contactOf(row), changed), ...previousContactId };
  const event = eventOf("contact.updated", data, now, subjectOf(row.id, contact, changes));
  await recordChange(db, { projectId, object: "contact", id: contact.contactId, contactId: row.id, action: "updated", changes, at: now, events: [event] });
  return { contact, changed };
}

/**
 * Writes a live contact's new state over `row` (read under its lock): the row, its unique
 * values, duplicate keys, tags and search terms; the contact as GET reads it and its field
 * changes. The caller records the change (a PATCH, a merge's survivor, an undo).
 */
export async function writeContactState(
  db: Db,
  projectId: string,
  row: ContactView & { tags: TagsColumn },
  before: ContactState,
  after: ContactState,
  now: string,
  ifMatch?: Precondition,
) {
  const changed = changedFields(before, after);
  if (after.contactNumber !== before.contactNumber) {
    if (await repo.contactNumberTaken(db, projectId, after.contactNumber)) {
      throw new ApiError("ERR_CONFLICT", `contactId ${formatContactId(after.contactNumber)} is already in use.`, "contactId");
    }
    await repo.moveContactCounterPast(db, projectId, after.contactNumber);
  }
  const uniqueFields = changed.includes("customFields") ? await uniqueFieldsOf(db, projectId) : [];
  const uniqueValues = uniqueValuesOf(uniqueFields, after.customFields);
  const region = await repo.projectRegion(db, projectId);
  const newRow = toRow(after, projectId, region);
  const updated = await repo
    .updateContactRow(db, row.id, { ...newRow, updated_at: now }, row.version)
    .catch((error) => {
      // The number was free when checked, and a concurrent create or PATCH (another node) took it since.
      if (isUniqueViolation(error)) throw new ApiError("ERR_CONFLICT", `contactId ${formatContactId(after.contactNumber)} is already in use.`, "contactId");
      throw error;
    });
  // Another transaction changed the contact after it was read (PostgreSQL, READ COMMITTED).
  if (!updated && ifMatch) checkPrecondition(ifMatch, row.version + 1);
  if (!updated) throw new ApiError("ERR_CONFLICT", "The contact changed while this request was applied; send it again.");
  await indexDuplicates(db, projectId, [{ contactId: row.id, before: keysOfRow(row), after: keysOfRow(newRow) }], now);
  if (uniqueFields.length > 0) {
    await releaseUniqueValues(db, row.id);
    await claimUniqueValues(db, projectId, row.id, uniqueValues, uniqueFields);
  }
  const keys = { id: row.id, updatedAt: now, contactNumber: after.contactNumber };
  // Rows written anew carry the new order keys already; the others are brought in step.
  const tagsRewritten = changed.includes("tags");
  const termsRewritten = changed.some((f) => ["firstName", "lastName", "businessName", "email", "phone", "contactId"].includes(f));
  if (tagsRewritten) await repo.replaceContactTags(db, keys, after.tagIds);
  if (termsRewritten) await repo.replaceSearchTerms(db, projectId, keys, termsOf(after, newRow.phone_key));
  await repo.syncOrderKeys(db, keys, { tags: !tagsRewritten, terms: !termsRewritten });
  const contact = await loadContact(db, projectId, after.contactNumber);
  return { contact, changed, changes: contactChanges(contactOf(row), contact) };
}

/** GET one contact with duplicateSignal (docs/api.md §11.1): one statement. */
export async function getContactWithSignal(db: Db, projectId: string, contactNumber: number) {
  const row = await repo.findContactWithSignal(db, projectId, contactNumber);
  if (!row) throw notFound("Contact");
  const contact = contactOf(row);
  return { ...contact, duplicateSignal: { emailMatches: Number(row.email_matches), phoneMatches: Number(row.phone_matches) } };
}

export async function loadContact(db: Db, projectId: string, contactNumber: number): Promise<Contact> {
  const row = await repo.findContactRow(db, projectId, contactNumber);
  if (!row) throw notFound("Contact");
  return contactOf(row);
}

/** A row read with its tags (findContactRow, findContactWithSignal) → the API contact. */
export function contactOf(row: ContactView & { tags: TagsColumn }): Contact {
  return mapContact(row, jsonColumn(row.tags));
}

/**
 * Rows (with their type joined) → API contacts. Rows read with their tags (`tagsColumn`, a
 * page read by ids) carry them; the tags of the others are read in one more statement.
 */
export async function toContacts(db: Db, rows: Array<ContactView & { tags?: TagsColumn }>): Promise<Contact[]> {
  const tags = await repo.tagsOfContacts(db, rows.filter((r) => r.tags === undefined).map((r) => r.id));
  const tagsByContact = new Map<number, Array<{ id: string; name: string }>>();
  for (const t of tags) {
    const list = tagsByContact.get(t.contact_id) ?? [];
    list.push({ id: t.id, name: t.name });
    tagsByContact.set(t.contact_id, list);
  }
  return rows.map((row) => mapContact(row, row.tags !== undefined ? jsonColumn(row.tags) : (tagsByContact.get(row.id) ?? [])));
}

function mapContact(row: ContactView, tags: Array<{ id: string; name: string }>): Contact {
  const s = stateFromRow(row, []);
  return {
    contactId: formatContactId(row.contact_number),
    version: row.version,
    identityType: s.identityType,
    source: s.source,
    firstName: s.firstName,
    lastName: s.lastName,
    email: s.email,
    phone: s.phone,
    businessName: s.businessName,
    website: s.website,
    address: s.address,
    contactType:
      row.contact_type_id && row.type_name
        ? { id: row.contact_type_id, name: row.type_name, category: row.type_category as Category }
        : null,
    tags,
    subscribed: s.subscribed,
    smsSubscribed: s.smsSubscribed,
    notes: s.notes,
    customFields: s.customFields,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toRow(s: ContactState, projectId: string, region: string): Omit<NewContactRow, "created_at" | "updated_at"> {
  return {
    project_id: projectId,
    contact_number: s.contactNumber,
    identity_type: s.identityType,
    source: s.source,
    first_name: s.firstName,
    last_name: s.lastName,
    email: s.email,
    email_key: emailKey(s.email),
    phone: s.phone,
    phone_key: phoneKey(s.phone, region),
    business_name: s.businessName,
    website: s.website,
    address: JSON.stringify(s.address),
    contact_type_id: s.contactTypeId,
    subscribed: s.subscribed ? 1 : 0,
    sms_subscribed: s.smsSubscribed ? 1 : 0,
    notes: s.notes,
    custom_fields: JSON.stringify(s.customFields),
  };
}

/** The contact's search terms (docs/api.md §11.6); `phoneKey` as its row stores it. */
export const termsOf = (s: ContactState, phoneKey: string | null | undefined) => searchTerms({ ...s, phoneKey: phoneKey ?? null, contactId: formatContactId(s.contactNumber) });
