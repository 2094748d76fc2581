import { z } from "@hono/zod-openapi";
import { validationError } from "../errors.ts";
import { contactNumbersOfItems, lockContacts, requireContactNumber } from "../contacts/service.ts";
import { atomicFlag, batchItems, ItemErrorSchema, parseItem, runBatch, summarise, type ItemOutcome } from "../lib/batch.ts";
import type { Db } from "../storage/schema.ts";
import { CreateInteractionBody } from "./schemas.ts";
import { createInteraction } from "./service.ts";

/** POST /interactions/batch (docs/api.md §18.4): each item is a log with its contactId. */
export const InteractionBatchBody = z
  .strictObject({ atomic: atomicFlag, items: batchItems })
  .openapi("InteractionBatch", {
    example: {
      items: [
        { contactId: "CR-1", type: "note", note: "Imported from the old CRM.", date: "2024-03-01T10:00:00Z", uniqueIdentifier: "old-crm-9912" },
      ],
    },
  });

const LOG_OUTCOMES = ["created", "replayed"] as const;

export const InteractionBatchAnswer = z
  .object({
    results: z.array(
      z.object({
        index: z.number().int(),
        status: z.number().int(),
        result: z.enum([...LOG_OUTCOMES, "error", "skipped"]),
        contactId: z.string().optional(),
        id: z.string().optional().openapi({ description: "The log's id: the one created, or the stored one a uniqueIdentifier replayed." }),
        error: ItemErrorSchema.optional(),
      }),
    ),
    summary: z.object({ created: z.number().int(), replayed: z.number().int(), failed: z.number().int() }),
  })
  .openapi("InteractionBatchResult");

/**
 * Applies a batch of logs, each as POST /contacts/{contactId}/interactions would: 201
 * created, 200 replayed (its uniqueIdentifier was used before on the contact, so a history
 * import sent again writes nothing twice), or that call's error.
 */
export async function applyInteractionBatch(db: Db, projectId: string, batch: z.infer<typeof InteractionBatchBody>, now: string) {
  const apply = async (item: unknown): Promise<ItemOutcome> => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) parseItem(CreateInteractionBody, item);
    const { contactId, ...fields } = item as Record<string, unknown>;
    const input = parseItem(CreateInteractionBody, fields);
    if (contactId === undefined) throw validationError("contactId", "contactId is required: it names the contact the log belongs to.");
    if (typeof contactId !== "string") throw validationError("contactId", "contactId must be a string.");
    const { log, created } = await createInteraction(db, projectId, requireContactNumber(contactId), input, now);
    return { status: created ? 201 : 200, result: created ? "created" : "replayed", contactId: log.contactId, id: log.id };
  };
  // Every item's contact locked first, in number order (docs/api.md §20.6: no cycle with a merge).
  await lockContacts(db, projectId, contactNumbersOfItems(batch.items));
  const results = await runBatch(db, batch.items, batch.atomic, apply);
  return { results, summary: summarise(results, LOG_OUTCOMES) } as z.infer<typeof InteractionBatchAnswer>;
}
