import { indexDuplicates, keysOfRow } from "../duplicates/maintain.ts";
import { ApiError } from "../errors.ts";
import { eventOf, recordChanges } from "../changes/record.ts";
import { contactChanges, subjectOf } from "../changes/diff.ts";
import { applyInSavepoint, errorResult, parseItem, type ItemOutcome, type ItemResult } from "../lib/batch.ts";
import type { CustomField } from "../reference/custom-fields.ts";
import { allCustomFields, defaultContactType, findContactType, findTag } from "../reference/repository.ts";
import { lockUntilCommit } from "../storage/query.ts";
import type { Db } from "../storage/schema.ts";
import type { ContactReference } from "./apply.ts";
import * as repo from "./repository.ts";
import { CreateContactBody, type UpsertOptions } from "./schemas.ts";
import { contactOf, createContact, newContactState, quotaExceeded, termsOf, toRow } from "./service.ts";
import type { ContactState } from "./state.ts";
import { uniqueFieldsOf, uniqueValuesOf } from "./unique-values.ts";
import { matchingContacts, matchKey, matchLock, upsertContact } from "./upsert.ts";

/**
 * A batch's creates (docs/api.md §18.4) in a few multi-row statements rather than a dozen
 * per item: a batch of 1,000 is one numbering, a handful of inserts, one read back and one
 * insert of events. Every item is checked by the single call's own steps (parseItem,
 * newContactState) against reference data read once per batch, so its result is the
 * single call's: the same 422s, the quota's 402 from the first item past it, contacts
 * numbered in item order.
 *
 * An item that writes more than its own rows goes through the single call's function in a
 * savepoint of its own, in its turn: one that names a tag not yet made (it makes it), or
 * sets a unique custom field (its value is claimed against every other contact,
 * docs/api.md §18.3). Items before it are written first, so it sees them, as it would in
 * single calls.
 *
 * With `upsert` (operation upsert, docs/api.md §18.2), an item whose matchOn value no
 * contact holds, and no earlier item of the batch sent, is such a create (its value locked
 * first, as upsertContact does); any other goes through upsertContact, which then finds
 * the contact it matches, an earlier item's included. One that matches a stored contact
 * only updates it, so the creates before it need not be written first.
 */
export async function createContactsOfBatch(
  db: Db,
  projectId: string,
  items: readonly unknown[],
  now: string,
  upsert?: UpsertOptions,
): Promise<ItemResult[]> {
  const results: ItemResult[] = [];
  const reference = batchReference(db, projectId);
  const contactTypeId = (await defaultContactType(db, projectId))?.id ?? null;
  const uniqueFields = await uniqueFieldsOf(db, projectId);
  const matchValuesSent = new Set<string>();
  let ready: Array<{ index: number; state: ContactState }> = [];
  for (const [index, item] of items.entries()) {
    let state: ContactState;
    try {
      const input = parseItem(CreateContactBody, item);
      if (upsert) {
        const key = await matchKey(db, projectId, upsert.matchOn, input);
        const name = matchLock(projectId, key);
        if (matchValuesSent.has(name)) throw new OwnCallNeeded();
        matchValuesSent.add(name);
        await lockUntilCommit(db, name);
        // It updates (or is ambiguous): it creates nothing and cannot relabel (the body takes
        // no contactId), so the creates before it may wait.
        if ((await matchingContacts(db, projectId, key)).length > 0) throw new OwnCallNeeded(false);
      }
      state = await newContactState(reference, input, { contactTypeId });
      if (uniqueValuesOf(uniqueFields, state.customFields).length > 0) throw new OwnCallNeeded();
    } catch (error) {
      if (error instanceof ApiError) {
        results.push(errorResult(index, error));
        continue;
      }
      if (!(error instanceof OwnCallNeeded)) throw error;
      if (error.afterEarlierCreates) {
        results.push(...(await writeNewContacts(db, projectId, ready, now)));
        ready = [];
      }
      results.push(await applyInSavepoint(db, index, () => singleCall(db, projectId, item, now, upsert)));
      continue;
    }
    ready.push({ index, state });
  }
  results.push(...(await writeNewContacts(db, projectId, ready, now)));
  return results.sort((a, b) => a.index - b.index);
}

/** An item as its single call applies it: POST /contacts, or PUT /contacts?matchOn. */
async function singleCall(db: Db, projectId: string, item: unknown, now: string, upsert: UpsertOptions | undefined): Promise<ItemOutcome> {
  const input = parseItem(CreateContactBody, item);
  if (!upsert) {
    const contact = await createContact(db, projectId, input, { now });
    return { status: 201, result: "created", contactId: contact.contactId };
  }
  const { contact, result } = await upsertContact(db, projectId, input, { ...upsert, now });
  return { status: result === "created" ? 201 : 200, result, contactId: contact.contactId };
}

/** An item that needs its single call's function (see createContactsOfBatch); it may create, so the creates before it are written first. */
class OwnCallNeeded extends Error {
  constructor(readonly afterEarlierCreates = true) {
    super("the item takes its single call");
  }
}

/**
 * Writes checked new contacts: numbers for as many as the quota leaves (the rest are its
 * 402, as their single calls would be), their rows, tags and search terms, then
 * contact.created for each, with the contact as GET reads it.
 */
async function writeNewContacts(db: Db, projectId: string, ready: Array<{ index: number; state: ContactState }>, now: string): Promise<ItemResult[]> {
  if (ready.length === 0) return [];
  const { first, granted, quota, region } = await repo.allocateContactNumbers(db, projectId, ready.length);
  const written = ready.slice(0, granted);
  written.forEach((r, i) => (r.state.contactNumber = first + i));
  const newRows = written.map((r) => toRow(r.state, projectId, region));
  const ids = await repo.insertContactRows(
    db,
    newRows.map((row) => ({ ...row, created_at: now, updated_at: now })),
  );
  await indexDuplicates(db, projectId, newRows.map((row) => ({ contactId: ids.get(row.contact_number)!, before: [], after: keysOfRow(row) })), now);
  await repo.insertTagsAndTermsOfMany(
    db,
    projectId,
    written.map(({ state }, i) => ({ id: ids.get(state.contactNumber)!, updatedAt: now, contactNumber: state.contactNumber, tagIds: state.tagIds, terms: termsOf(state, newRows[i]!.phone_key) })),
  );
  const rows = granted > 0 ? await repo.findContactRowsNumbered(db, projectId, first, first + granted - 1) : [];
  const sorted = [...rows].sort((a, b) => a.contact_number - b.contact_number);
  const contacts = sorted.map(contactOf);
  await recordChanges(
    db,
    contacts.map((contact, i) => {
      const contactId = sorted[i]!.id;
      const events = [eventOf("contact.created", { contact }, now, subjectOf(contactId, contact))];
      return { projectId, object: "contact", id: contact.contactId, contactId, action: "created", changes: contactChanges(null, contact), at: now, events };
    }),
  );
  const refused = ready.slice(granted).map((r) => errorResult(r.index, quotaExceeded(quota!)));
  return [...written.map((r, i) => ({ index: r.index, status: 201, result: "created", contactId: contacts[i]!.contactId })), ...refused];
}

/**
 * The project's reference data for one batch, each read once: custom fields and contact
 * types cannot change inside the request's transaction. A tag is looked up until found;
 * one not yet made makes the item take createContact (OwnCallNeeded), which makes it.
 */
function batchReference(db: Db, projectId: string): ContactReference {
  let fields: Promise<CustomField[]> | undefined;
  const types = new Map<string, boolean>();
  const tags = new Map<string, { id: string; name: string }>();
  return {
    customFields: () => (fields ??= allCustomFields(db, projectId)),
    contactTypeExists: async (id) => {
      if (!types.has(id)) types.set(id, (await findContactType(db, projectId, id)) !== undefined);
      return types.get(id)!;
    },
    tags: async (refs) => {
      const found = new Map<string, { id: string; name: string }>();
      for (const ref of refs) {
        const tag = tags.get(ref) ?? (await findTag(db, projectId, ref));
        if (!tag) throw new OwnCallNeeded();
        tags.set(ref, tag);
        found.set(tag.id, tag);
      }
      return [...found.values()];
    },
  };
}
