import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { EVENT_TYPES, type EventType } from "./catalog.ts";
import { eventEnvelopes, PingEvent } from "./payloads.ts";

/** Headers of every delivery of one event (docs/webhooks.md §2, §1): both signature schemes. */
const deliveryHeaders = (event: string) => z.object({
  "X-Service-Event": z.literal(event).openapi({ description: "Event name." }),
  "X-Service-Delivery": z.string().openapi({
    description: "Delivery id: one per (event, subscription), the same on every retry. Dedupe on it.",
    example: "dlv_6tQ0pWc2Xz9LmB4nR8sKj1",
  }),
  "X-Service-Signature": z.string().openapi({
    description: "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">`; two v1 entries while a rotated secret overlaps.",
    example: "t=1767000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
  }),
  "webhook-id": z.string().openapi({ description: "Standard Webhooks: the delivery id.", example: "dlv_6tQ0pWc2Xz9LmB4nR8sKj1" }),
  "webhook-timestamp": z.string().openapi({ description: "Standard Webhooks: unix seconds.", example: "1767000000" }),
  "webhook-signature": z.string().openapi({
    description: "Standard Webhooks: `v1,<base64 signature>`, space-separated when two secrets overlap.",
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  }),
});

const summaries: Record<EventType, [string, string]> = {
  "contact.created": ["contactCreatedWebhook", "A contact was created (API, manual entry, web form); CSV imports do not fire it."],
  "contact.updated": ["contactUpdatedWebhook", "A contact was updated; `changedFields` names what changed, `previous` their former values."],
  "contact.deleted": ["contactDeletedWebhook", "A contact went to the trash (DELETE), or was merged into another (`reason: merged`)."],
  "contact.restored": ["contactRestoredWebhook", "A contact came back from the trash."],
  "contact.erased": ["contactErasedWebhook", "A contact was erased (at once, or purged from the trash after 30 days): purge every copy of it."],
  "contact.merged": ["contactMergedWebhook", "Contacts were merged into this one, which keeps its contactId."],
  "interaction_log.created": ["interactionLogCreatedWebhook", "An interaction log was added to a contact."],
  "web_form.submitted": ["webFormSubmittedWebhook", "A web form was submitted."],
};

const acknowledged = {
  200: { description: "Any 2xx acknowledges the delivery; anything else, or no answer within the timeout, is retried." },
};

/**
 * The events and the test ping in the document's `webhooks` (OpenAPI 3.1,
 * docs/api.md §16.1): what a receiver gets, typed by the same schemas that build the payloads.
 */
export function registerEventWebhooks(api: OpenAPIHono<AppEnv>) {
  const registry = api.openAPIRegistry;
  registry.registerComponent("securitySchemes", "webhookSignature", {
    type: "apiKey",
    in: "header",
    name: "X-Service-Signature",
    description:
      "Deliveries are signed, not keyed: verify X-Service-Signature (docs/webhooks.md §3) or the Standard Webhooks headers " +
      "with the subscription's secret, and refuse a timestamp more than 300 s away. See docs/webhooks.md.",
  });
  const hook = (name: string, operationId: string, summary: string, schema: z.ZodType) =>
    registry.registerWebhook({
      method: "post",
      path: name,
      operationId,
      summary,
      tags: ["Webhooks"],
      security: [{ webhookSignature: [] }],
      request: { headers: deliveryHeaders(name), body: { required: true, content: { "application/json": { schema } } } },
      responses: acknowledged,
    });
  for (const type of EVENT_TYPES) hook(type, summaries[type][0], summaries[type][1], eventEnvelopes[type]);
  hook("ping", "pingWebhook", "A test ping sent by POST /webhooks/{id}/test.", PingEvent);
}
