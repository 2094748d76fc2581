import { z } from "@hono/zod-openapi";
import { validationError } from "../errors.ts";
import { atomicFlag, batchItems, ItemErrorSchema, parseItem, runBatch, settle, summarise, type ItemOutcome } from "../lib/batch.ts";
import type { Db } from "../storage/schema.ts";
import { matchOnSchema, PatchContactBody, tagsModeSchema, updateModeSchema } from "./schemas.ts";
import { createContactsOfBatch } from "./batch-create.ts";
import { contactNumbersOfItems, lockContacts, patchContact, requireContactNumber } from "./service.ts";

/** POST /contacts/batch (docs/api.md §18.4). */
export const ContactBatchBody = z
  .strictObject({
    operation: z.enum(["create", "upsert", "update"]),
    matchOn: matchOnSchema.optional().openapi({ description: "Required with operation upsert, refused with the others." }),
    update: updateModeSchema.optional(),
    tags: tagsModeSchema.optional(),
    atomic: atomicFlag,
    items: batchItems,
  })
  .openapi("ContactBatch", {
    example: { operation: "upsert", matchOn: "email", items: [{ email: "ada@example.com", firstName: "Ada" }, { email: "grace@example.com" }] },
  });

export type ContactBatch = z.infer<typeof ContactBatchBody>;

const CONTACT_OUTCOMES = ["created", "updated", "unchanged"] as const;

export const ContactBatchAnswer = z
  .object({
    results: z.array(
      z.object({
        index: z.number().int(),
        status: z.number().int(),
        result: z.enum([...CONTACT_OUTCOMES, "error", "skipped"]),
        contactId: z.string().optional(),
        error: ItemErrorSchema.optional(),
      }),
    ),
    summary: z.object({ created: z.number().int(), updated: z.number().int(), unchanged: z.number().int(), failed: z.number().int() }),
  })
  .openapi("ContactBatchResult");

/** An update item: its contactId and the PATCH body it carries. */
const UpdateItemBody = PatchContactBody.omit({ contactId: true });

/**
 * Applies a contact batch in the request's transaction, each item as its single call
 * (POST, PUT ?matchOn, PATCH) would be: the same validation, fieldNames, statuses and
 * events (docs/api.md §18.4).
 */
export async function applyContactBatch(db: Db, projectId: string, batch: ContactBatch, now: string) {
  if (batch.operation === "upsert" && batch.matchOn === undefined) throw validationError("matchOn", "matchOn is required with operation upsert.");
  if (batch.operation !== "upsert") {
    for (const name of ["matchOn", "update", "tags"] as const) {
      if (batch[name] !== undefined) throw validationError(name, `${name} is only for operation upsert.`);
    }
  }
  const apply = async (item: unknown): Promise<ItemOutcome> => {
    // As PATCH checks them: the body first (422), then the contact (404).
    if (!isObject(item)) parseItem(UpdateItemBody, item);
    const { contactId, ...fields } = item as Record<string, unknown>;
    const input = parseItem(UpdateItemBody, fields);
    if (contactId === undefined) throw validationError("contactId", "contactId is required: it names the contact to update.");
    if (typeof contactId !== "string") throw validationError("contactId", "contactId must be a string.");
    const { contact, changed } = await patchContact(db, projectId, requireContactNumber(contactId), input, now);
    return { status: 200, result: changed.length > 0 ? "updated" : "unchanged", contactId: contact.contactId };
  };
  const upsert = batch.operation === "upsert" ? { matchOn: batch.matchOn!, update: batch.update ?? "merge", tags: batch.tags ?? "replace" } : undefined;
  // Every item's contact locked first, in number order (docs/api.md §20.6: no cycle with a merge).
  if (batch.operation === "update") await lockContacts(db, projectId, contactNumbersOfItems(batch.items));
  const results =
    batch.operation === "update"
      ? await runBatch(db, batch.items, batch.atomic, apply)
      : settle(await createContactsOfBatch(db, projectId, batch.items, now, upsert), batch.atomic);
  return { results, summary: summarise(results, CONTACT_OUTCOMES) } as z.infer<typeof ContactBatchAnswer>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
