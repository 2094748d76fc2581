import { z } from "@hono/zod-openapi";
import { timestampSchema } from "../lib/time.ts";
import { ContactReceiptSchema, ContactSchema } from "../contacts/schemas.ts";

const contactId = z.string().max(40).openapi({ example: "CR-9" });

/** `POST /contacts/{contactId}/merge` (docs/api.md §20.2). */
export const MergeBody = z
  .strictObject({
    contactIds: z
      .array(contactId)
      .min(1, "must name 1 to 10 contacts.")
      .max(10, "must name 1 to 10 contacts.")
      .openapi({ description: "The contacts merged into the path's contact (1 to 10); they stop existing as such, their ids answer 308." }),
    fields: z
      .record(z.string().max(200), contactId)
      .refine((f) => Object.keys(f).length <= 100, "must choose at most 100 fields.")
      .optional()
      .openapi({
        description:
          "Per field, the contact to take its value from (the path's or one of contactIds): a contact field name, `tags`, " +
          "`customFields` or `customFields.<id>`. Others: the survivor's non-empty value, else the most recently updated other's.",
        example: { email: "CR-9", "customFields.cf_2b1kV0yXcW8n4sQ3eF6gHj": "CR-9" },
      }),
    dryRun: z.boolean().optional().openapi({ description: "true: answer the contact the merge would make; nothing is written." }),
  })
  // CR-2: a project's second contact (the batch example makes it), so the example can run as it is.
  .openapi("MergeContacts", { example: { contactIds: ["CR-2"], fields: { email: "CR-2" } } });

export const MergeSchema = z
  .object({
    id: z.string().nullable().openapi({ description: "mrg_… (null on a dry run).", example: "mrg_2b1kV0yXcW8n4sQ3eF6gHj" }),
    mergedContactIds: z.array(z.string()).openapi({ example: ["CR-9"] }),
    at: timestampSchema,
    undoUntil: timestampSchema.nullable().openapi({ description: "POST /merges/{mergeId}/undo works until then (null on a dry run)." }),
  })
  .openapi("Merge");

export const MergeResultSchema = z
  .object({ contact: z.union([ContactSchema, ContactReceiptSchema]), merge: MergeSchema })
  .openapi("MergeResult");

export const UndoResultSchema = z
  .object({
    contact: z.union([ContactSchema, ContactReceiptSchema]).openapi({ description: "The surviving contact after the undo." }),
    restoredContacts: z.array(z.union([ContactSchema, ContactReceiptSchema])).openapi({ description: "The merged contacts, back." }),
    merge: MergeSchema.extend({ undoneAt: timestampSchema }),
  })
  .openapi("UndoMergeResult");

export const MergeIdParam = z.object({
  mergeId: z.string().max(64).openapi({ param: { name: "mergeId", in: "path" }, example: "mrg_2b1kV0yXcW8n4sQ3eF6gHj" }),
});
