import { applyInSavepoint, parseItem, type ItemResult } from "../../lib/batch.ts";
import type { Db } from "../../storage/schema.ts";
import { jsonColumn } from "../../storage/query.ts";
import { findContactRow } from "../../contacts/repository.ts";
import { missingContact } from "../../contacts/missing.ts";
import { PatchContactBody } from "../../contacts/schemas.ts";
import { lockContacts, parseContactId, patchContact } from "../../contacts/service.ts";
import { trashContact } from "../../contacts/trash.ts";
import { notFound } from "../../errors.ts";

/**
 * The contacts list's bulk actions (docs/admin.md §3), each contact as its single API call
 * would be: adding or removing a tag is PATCH /v1/contacts/{id} with the contact's tags plus
 * or minus one (the API's checks, contact.updated, its change record), delete is DELETE
 * /v1/contacts/{id} (the trash, contact.deleted, duplicate groups kept up). All in one unit
 * of work, each contact in a savepoint of it, as POST /v1/contacts/batch applies its items
 * (docs/api.md §18.4): a contact that fails (merged away or deleted meanwhile, a 101st tag)
 * is left as it was and listed with the API's reason; the others are done.
 */

/** Most contacts one bulk action takes: the largest page (limit 200). */
export const MAX_BULK = 200;

export type BulkAction = { kind: "add-tag"; tag: string } | { kind: "remove-tag"; tagId: string } | { kind: "delete" };

export interface BulkOutcome {
  /** Contacts changed (or deleted). */
  done: string[];
  /** Contacts that already had (or lacked) the tag: nothing written, no event. */
  unchanged: string[];
  failed: Array<{ contactId: string; message: string; mergedInto?: string }>;
}

export async function applyBulk(trx: Db, projectId: string, contactIds: string[], action: BulkAction, now: string): Promise<BulkOutcome> {
  const outcome: BulkOutcome = { done: [], unchanged: [], failed: [] };
  const numbered: Array<{ contactId: string; n: number }> = [];
  for (const contactId of new Set(contactIds)) {
    const n = parseContactId(contactId);
    if (n === null) outcome.failed.push({ contactId, message: notFound("Contact").message });
    else numbered.push({ contactId, n });
  }
  // Number order, the order batches and merges lock contacts in (docs/api.md §20.6). A
  // delete takes the project's row first (trashContact), so it takes the contacts' locks one by one after it.
  numbered.sort((a, b) => a.n - b.n);
  if (action.kind !== "delete") await lockContacts(trx, projectId, numbered.map((x) => x.n));
  for (const [index, { contactId, n }] of numbered.entries()) {
    const result: ItemResult = await applyInSavepoint(trx, index, async () => {
      if (action.kind === "delete") {
        await trashContact(trx, projectId, n, now);
        return { status: 204, result: "deleted" };
      }
      const row = await findContactRow(trx, projectId, n);
      if (!row) throw await missingContact(trx, projectId, n);
      const ids = jsonColumn(row.tags).map((t) => t.id);
      if (action.kind === "remove-tag" && !ids.includes(action.tagId)) return { status: 200, result: "unchanged" };
      const tags = action.kind === "add-tag" ? [...ids, action.tag] : ids.filter((id) => id !== action.tagId);
      const { changed } = await patchContact(trx, projectId, n, parseItem(PatchContactBody, { tags }), now);
      return { status: 200, result: changed.length > 0 ? "updated" : "unchanged" };
    });
    if (result.result === "error") outcome.failed.push({ contactId, message: result.error!.message, mergedInto: result.error!.mergedInto });
    else if (result.result === "unchanged") outcome.unchanged.push(contactId);
    else outcome.done.push(contactId);
  }
  return outcome;
}
