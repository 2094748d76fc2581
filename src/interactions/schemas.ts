import { z } from "@hono/zod-openapi";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";
import { erasedShape } from "../lib/erased.ts";
import { isoTimeSchema, timestampSchema } from "../lib/time.ts";


/** Body of POST /contacts/{contactId}/interactions (docs/api.md §12). */
export const CreateInteractionBody = z
  .strictObject({
    interactionTypeId: z.string().optional(),
    type: z.literal("note", { error: 'must be "note".' }).optional(),
    note: z.string().max(65_535, "must be at most 65535 characters.").optional(),
    date: isoTimeSchema.optional().openapi({ description: "Defaults to now." }),
    fields: z
      .record(
        z.string().min(1, "must have a name of 1–64 characters.").max(64, "must have a name of 1–64 characters."),
        z.string({ error: "must be a string." }).max(2000, "must be at most 2000 characters."),
      )
      .refine((f) => Object.keys(f).length <= 50, "must have at most 50 entries.")
      .optional(),
    uniqueIdentifier: z.string().min(1).max(255, "must be at most 255 characters.").optional().openapi({
      description: "Makes the write idempotent per contact: a repeat answers 200 with the stored log.",
    }),
  })
  .superRefine((body, ctx) => {
    const given = Number(body.interactionTypeId !== undefined) + Number(body.type !== undefined);
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        path: ["interactionTypeId"],
        message: 'or type "note" is required, but not both.',
      });
    }
  })
  .openapi("CreateInteraction", {
    // A note: every project takes it as it is (interaction type ids are the project's own, docs/api.md §10.2).
    example: { type: "note", note: "Called about the renewal; sending a quote.", uniqueIdentifier: "call-8841" },
  });

export type CreateInteractionInput = z.infer<typeof CreateInteractionBody>;

export const InteractionLogSchema = z
  .object({
    id: z.string().openapi({ example: "il_4mZ0r1rV7m3cP2oW9yQeAa" }),
    contactId: z.string(),
    interactionType: z.object({ id: z.string(), name: z.string() }),
    note: z.string(),
    fields: z.record(z.string(), z.string()),
    date: timestampSchema,
    uniqueIdentifier: z.string().nullable(),
    createdAt: timestampSchema,
  })
  .openapi("InteractionLog", {
    example: {
      id: "il_TajkCCpNUxYOmrqKA5vPU6",
      contactId: "CR-1",
      interactionType: { id: "it_6xGxHzGt7qv2HWcmBJFm2n", name: "Call" },
      note: "Called about the renewal; sending a quote.",
      fields: { outcome: "quote requested" },
      date: "2026-01-15T09:30:00.000Z",
      uniqueIdentifier: "call-8841",
      createdAt: "2026-01-15T09:31:02.114Z",
    },
  });

export type InteractionLog = z.infer<typeof InteractionLogSchema>;

/**
 * What a uniqueIdentifier replay answers a key without `contacts:read` (docs/security.md §3,
 * docs/security.md §3): the stored log's id, contact and creation time, not its note or
 * fields, which only that scope may read. Strict, so a whole log never matches it.
 */
export const InteractionLogReceiptSchema = z
  .strictObject({
    id: z.string().openapi({ example: "il_TajkCCpNUxYOmrqKA5vPU6" }),
    contactId: z.string().openapi({ example: "CR-1" }),
    createdAt: timestampSchema,
  })
  .openapi("InteractionLogReceipt", {
    description: "A replayed log's answer to a key without contacts:read: its id, contactId and createdAt only.",
    example: { id: "il_TajkCCpNUxYOmrqKA5vPU6", contactId: "CR-1", createdAt: "2026-01-15T09:31:02.114Z" },
  });

export type InteractionLogReceipt = z.infer<typeof InteractionLogReceiptSchema>;

/** A log whose contact was erased since (docs/import-export.md §3): every field but its ids is null. */
export const ErasedInteractionLog = z
  .object(erasedShape(InteractionLogSchema.shape, ["id", "contactId"]))
  .openapi("ErasedInteractionLog", { description: "The log's contact was erased: every field but id and contactId is null." });

/** A log receipt replayed after its contact was erased: its createdAt is null. */
export const ErasedInteractionLogReceipt = z
  .strictObject(erasedShape(InteractionLogReceiptSchema.shape, ["id", "contactId"]))
  .openapi("ErasedInteractionLogReceipt", { description: "A log receipt whose contact was erased since: every field but id and contactId is null." });

/**
 * The answer of a uniqueIdentifier replay: the stored log, or its receipt (docs/security.md §3);
 * the erased shape for an Idempotency-Key replay of a log whose contact was erased since.
 */
export const InteractionReplayAnswer = z
  .union([InteractionLogSchema, InteractionLogReceiptSchema, ErasedInteractionLog, ErasedInteractionLogReceipt])
  .openapi({}, { unionPreferredType: "oneOf" });

/** The answer of a created log: the log; its erased shape as InteractionReplayAnswer says. */
export const InteractionCreatedAnswer = z.union([InteractionLogSchema, ErasedInteractionLog]).openapi({}, { unionPreferredType: "oneOf" });

export const ListInteractionsQuery = z.object({
  interactionTypeId: z.string().optional().openapi({ description: 'An interaction type id, or "note".' }),
  since: isoTimeSchema.optional(),
  until: isoTimeSchema.optional(),
  limit: limitParam,
  cursor: cursorParam,
});

export const InteractionList = listEnvelope(InteractionLogSchema, "InteractionLogList");
