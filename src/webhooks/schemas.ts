import { z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../events/catalog.ts";
import { HTTP_URL_PATTERN, isUri } from "../lib/formats.ts";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";
import { isoTimeSchema, timestampSchema } from "../lib/time.ts";
import { OrderingSchema, WebhookFilterSchema } from "./filter.ts";

const webhookExample = {
  id: "wh_2b1kV0yXcW8n4sQ3eF6gHj",
  url: "https://hooks.example.com/crm",
  events: ["contact.created", "contact.updated"],
  description: "Sync to the billing system",
  status: "active",
  consecutiveFailures: 0,
  lastSuccessAt: "2026-01-15T09:30:01.201Z",
  lastFailureReason: null,
  filter: null,
  ordering: "none",
  createdAt: "2026-01-02T08:00:00.000Z",
  updatedAt: "2026-01-02T08:00:00.000Z",
};

const events = z
  .array(z.enum([...EVENT_TYPES, "*"], { error: `must be one of ${EVENT_TYPES.join(", ")}, *.` }))
  .min(1, 'must have at least 1 item; ["*"] means every event.')
  .refine((list) => !list.includes("*") || list.length === 1, 'must not mix "*" with other values.')
  .openapi({ example: ["contact.created", "contact.updated"] });

/**
 * A receiver's URL (docs/api.md §13.3): a valid `format: uri` (no space), as the document
 * says; the address policy (src/webhooks/address-policy.ts) checks the scheme the pattern
 * states (https; http too in a sandbox), credentials and the address.
 */
const url = z
  .string()
  .max(2048, "must be at most 2048 characters.")
  .refine(isUri, "is not a valid URL.")
  .openapi({ format: "uri", pattern: HTTP_URL_PATTERN, example: "https://hooks.example.com/crm" });
const description = z.string().max(1000, "must be at most 1000 characters.").nullable().optional();
/** docs/webhooks.md §8.1: written whole (a PATCH replaces the filter; null removes it). */
const filter = WebhookFilterSchema.nullable().optional();

export const CreateWebhookBody = z
  .strictObject({ url, events, description, filter, ordering: OrderingSchema.optional() })
  .openapi("CreateWebhook", {
    example: {
      url: "https://hooks.example.com/crm",
      events: ["contact.created", "contact.updated"],
      description: "Sync to the billing system",
      filter: { contactTypeCategory: ["Customer"], changedFields: ["email", "address"] },
      ordering: "per-contact",
    },
  });
export const PatchWebhookBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description,
    status: z.enum(["active", "disabled"]).optional(),
    filter,
    ordering: OrderingSchema.optional(),
  })
  .openapi("PatchWebhook");

export const WebhookSchema = z
  .object({
    id: z.string().openapi({ example: "wh_2b1kV0yXcW8n4sQ3eF6gHj" }),
    url: z.url(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(["active", "disabled"]),
    consecutiveFailures: z.number().int(),
    lastSuccessAt: timestampSchema.nullable(),
    lastFailureReason: z.string().nullable(),
    filter: WebhookFilterSchema.nullable().openapi({ description: "As stored: tags by id; null when the subscription takes every event its `events` name." }),
    ordering: OrderingSchema,
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .openapi("Webhook", { example: webhookExample });
export type Webhook = z.infer<typeof WebhookSchema>;

export const WebhookWithSecret = WebhookSchema.extend({
  secret: z.string().openapi({ description: "Signing secret, shown once." }),
}).openapi("WebhookWithSecret", { example: { ...webhookExample, secret: "whsec_XjM6mL/7Q/PSjz8FO54zXKV8mIgQjk2LJll43xRJ+UY=" } });

export const WebhookList = listEnvelope(WebhookSchema, "WebhookList");
export const WebhookIdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
export const PageQuery = z.object({ limit: limitParam, cursor: cursorParam });

export const TestResult = z
  .object({ delivered: z.boolean(), statusCode: z.number().int().nullable(), error: z.string().nullable() })
  .openapi("WebhookTestResult");

/** One redeliver call queues at most this many events (docs/webhooks.md §5). */
export const REDELIVER_MAX = 10_000;

export const RedeliverBody = z
  .strictObject({
    eventIds: z.array(z.string()).min(1).max(REDELIVER_MAX, "must have at most 10,000 items.").optional(),
    since: isoTimeSchema.optional(),
    until: isoTimeSchema.optional(),
  })
  .superRefine((b, ctx) => {
    if ((b.eventIds === undefined) === (b.since === undefined)) {
      ctx.addIssue({ code: "custom", path: ["eventIds"], message: "or since is required, but not both." });
    } else if (b.until !== undefined && b.since === undefined) {
      ctx.addIssue({ code: "custom", path: ["until"], message: "requires since." });
    }
  })
  // eventIds or since, not both: an example built from every property would be refused.
  .openapi("Redeliver", { example: { since: "2026-01-15T09:30:00Z", until: "2026-01-15T10:30:00Z" } });

export const AttemptSchema = z
  .object({
    id: z.string(),
    eventId: z.string(),
    deliveryId: z.string(),
    attempt: z.number().int(),
    at: timestampSchema,
    statusCode: z.number().int().nullable(),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    responseSnippet: z.string().nullable(),
  })
  .openapi("DeliveryAttempt");
export const AttemptList = listEnvelope(AttemptSchema, "DeliveryAttemptList");
