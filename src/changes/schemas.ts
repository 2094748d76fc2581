import { z } from "@hono/zod-openapi";
import { cursorParam, limitParam, paginationSchema, queryInteger } from "../lib/pagination.ts";
import { timestampSchema } from "../lib/time.ts";

const OBJECTS = ["contact", "interaction_log"] as const;

const FieldChangeSchema = z
  .object({ field: z.string(), from: z.unknown(), to: z.unknown() })
  .openapi("FieldChange", { example: { field: "email", from: "ada@old.example.com", to: "ada@example.com" } });

/** A change record (docs/api.md §19.1). An erased contact's keep seq, at, object, id and action only. */
export const ChangeRecordSchema = z
  .object({
    seq: z.number().int().openapi({ description: "Per project, from 1, without gaps.", example: 42 }),
    at: timestampSchema,
    object: z.enum(OBJECTS),
    id: z.string().openapi({ description: "The contactId (for a contact) or the interaction log's id.", example: "CR-7" }),
    action: z.enum(["created", "updated", "deleted", "restored", "merged", "erased"]),
    changes: z
      .array(FieldChangeSchema)
      .optional()
      .openapi({ description: "What the change set: contact field names, address.<part>, customFields.<id>, tags (names), contactId." }),
    actor: z
      .object({ type: z.enum(["api_key", "admin", "import", "form", "system"]), id: z.string().nullable() })
      .optional()
      .openapi({ example: { type: "api_key", id: "key_2b1kV0yXcW8n4sQ3eF6gHj" } }),
    requestId: z.string().nullable().optional().openapi({ example: "req_5d1c4c5e1b2a4f0e9d8c7b6a5f4e3d2c" }),
  })
  .openapi("ChangeRecord");
export type ChangeRecord = z.infer<typeof ChangeRecordSchema>;

const FEED_LIMIT = "must be an integer from 1 to 1000.";
const repeatable = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).max(20, "must be given at most 20 times.")]).optional();

export const ChangesQuery = z.object({
  after: cursorParam.openapi({ description: "pagination.nextCursor of the previous page, or a list's Changes-Cursor header. Absent: from the oldest change kept." }),
  limit: z
    .preprocess(queryInteger, z.number({ error: FEED_LIMIT }).int(FEED_LIMIT).min(1, FEED_LIMIT).max(1000, FEED_LIMIT))
    .default(100)
    .openapi({ description: "Page size, 1–1,000.", example: 100 }),
  object: repeatable(z.enum(OBJECTS, { error: "must be contact or interaction_log." })).openapi({ description: "Repeatable: only these objects." }),
});

export const HistoryQuery = z.object({
  field: repeatable(z.string().min(1).max(200)).openapi({
    description: "Repeatable: only records that changed this field (a top-level name such as address also takes its parts).",
  }),
  limit: limitParam,
  cursor: cursorParam,
});

export const ChangeFeedPage = z
  .object({
    data: z.array(ChangeRecordSchema),
    pagination: z.object({
      nextCursor: z.string().openapi({ description: "Always set, even on an empty page: poll again with it." }),
      hasMore: z.boolean(),
    }),
  })
  .openapi("ChangeFeedPage");

export const HistoryPage = z.object({ data: z.array(ChangeRecordSchema), pagination: paginationSchema }).openapi("ContactHistoryPage");
