import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, created, errors, json, jsonRequest, reading, security, writing } from "../http/openapi.ts";
import type { Prepare } from "../http/transaction.ts";
import { toPage } from "../lib/pagination.ts";
import { isoNow } from "../lib/time.ts";
import { listAttempts, listWebhooks, toWebhook } from "./repository.ts";
import {
  AttemptList,
  CreateWebhookBody,
  PageQuery,
  PatchWebhookBody,
  RedeliverBody,
  TestResult,
  WebhookIdParam,
  WebhookList,
  WebhookSchema,
  WebhookWithSecret,
} from "./schemas.ts";
import { checkUrl } from "./address-policy.ts";
import { inFlightOf } from "./dispatcher.ts";
import { createWebhook, deleteWebhook, patchWebhook, redeliver, requireWebhook, rotateSecret, sendTestPing, type CheckedUrl } from "./service.ts";

/** Webhook subscriptions (docs/api.md §13.2, §13); scope webhooks:manage. */
export const webhookRoutes = new OpenAPIHono<AppEnv>();

const tags = ["Webhooks"];
const scope = "webhooks:manage" as const;
const params = WebhookIdParam;

/**
 * Checks the body's `url` (DNS included) before the transaction opens (docs/api.md §13.3: one
 * project's slow lookup never holds the writer others wait on). The zod schema still
 * validates the body inside; a url that is not a string is left to it. The verdict waits
 * for the handler here, by request, not among every route's variables.
 */
const checkedUrls = new WeakMap<Request, CheckedUrl>();
const checkUrlFirst: Prepare = async (c) => {
  const url = (JSON.parse(c.get("rawBody")) as { url?: unknown } | null)?.url;
  if (typeof url !== "string") return;
  const { env, resolve } = c.get("deps").webhooks;
  checkedUrls.set(c.req.raw, { url, verdict: await checkUrl(url, env, resolve, false) });
};

webhookRoutes.openapi(
  createRoute({ method: "get", path: "/webhooks", operationId: "listWebhooks", summary: "List subscriptions", description: "The project's subscriptions, oldest first, without their secrets.", tags, security, middleware: reading(scope), request: { query: PageQuery }, responses: { 200: json(WebhookList, "One page, oldest first."), ...commonErrors } }),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const { cursors } = c.get("deps");
    const filters = { list: "webhooks" };
    const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
    const rows = await listWebhooks(c.get("db"), c.get("caller").projectId, limit, after);
    return c.json(toPage(rows, limit, (r) => [r.created_at, r.id], toWebhook, cursors, filters), 200);
  },
);

webhookRoutes.openapi(
  createRoute({ method: "post", path: "/webhooks", operationId: "createWebhook", summary: "Create a subscription", description: "The answer carries the signing secret, once. `filter` narrows the contact events delivered (tags by name or id; unknown fields, categories or tags are 422 `filter.<key>`); `ordering: per-contact` sends a contact's deliveries one at a time in order (docs/webhooks.md §8).", tags, security, middleware: writing(scope, { prepare: checkUrlFirst }), request: { body: jsonRequest(CreateWebhookBody) }, responses: { 201: created(WebhookWithSecret, "Created, with its secret."), ...commonErrors } }),
  async (c) => {
    const webhook = await createWebhook(c.get("db"), c.get("deps").secrets, c.get("caller").projectId, c.req.valid("json"), checkedUrls.get(c.req.raw), isoNow(c.get("deps").clock));
    c.header("Location", `/v1/webhooks/${webhook.id}`);
    return c.json(webhook, 201);
  },
);

webhookRoutes.openapi(
  createRoute({ method: "get", path: "/webhooks/{id}", operationId: "getWebhook", summary: "Get a subscription", description: "Its status, consecutiveFailures, lastSuccessAt and lastFailureReason tell its health.", tags, security, middleware: reading(scope), request: { params }, responses: { 200: json(WebhookSchema, "The subscription, without its secret."), ...commonErrors, 404: errors[404] } }),
  async (c) => c.json(toWebhook(await requireWebhook(c.get("db"), c.get("caller").projectId, c.req.valid("param").id)), 200),
);

webhookRoutes.openapi(
  createRoute({ method: "patch", path: "/webhooks/{id}", operationId: "updateWebhook", summary: "Update a subscription", description: "Setting status active again resets consecutiveFailures. A `filter` replaces the one stored (null removes it); filter and ordering apply to events recorded from then on.", tags, security, middleware: writing(scope, { prepare: checkUrlFirst }), request: { params, body: jsonRequest(PatchWebhookBody) }, responses: { 200: json(WebhookSchema, "The subscription."), ...commonErrors, 404: errors[404] } }),
  async (c) => c.json(await patchWebhook(c.get("db"), c.get("caller").projectId, c.req.valid("param").id, c.req.valid("json"), checkedUrls.get(c.req.raw), isoNow(c.get("deps").clock)), 200),
);

webhookRoutes.openapi(
  createRoute({ method: "delete", path: "/webhooks/{id}", operationId: "deleteWebhook", summary: "Delete a subscription", description: "Nothing more is delivered to it; its pending deliveries are dropped.", tags, security, middleware: writing(scope, { body: false }), request: { params }, responses: { 204: { description: "Deleted." }, ...commonErrors, 404: errors[404] } }),
  async (c) => {
    await deleteWebhook(c.get("db"), c.get("caller").projectId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

webhookRoutes.openapi(
  createRoute({ method: "post", path: "/webhooks/{id}/test", operationId: "testWebhook", summary: "Send a signed ping now", description: "Sent at once, outside the retry schedule; the answer tells the outcome.", tags, security, middleware: writing(scope, { body: false, transaction: false }), request: { params }, responses: { 200: json(TestResult, "The ping's outcome."), ...commonErrors, 404: errors[404] } }),
  async (c) => c.json(await sendTestPing(c.get("db"), c.get("deps").webhooks, c.get("caller").projectId, c.req.valid("param").id), 200),
);

webhookRoutes.openapi(
  createRoute({ method: "post", path: "/webhooks/{id}/rotate-secret", operationId: "rotateWebhookSecret", summary: "Rotate the signing secret", description: "For 24 h deliveries carry two signatures, the new one first.", tags, security, middleware: writing(scope, { body: false }), request: { params }, responses: { 200: json(WebhookWithSecret, "The subscription with its new secret."), ...commonErrors, 404: errors[404] } }),
  async (c) => c.json(await rotateSecret(c.get("db"), c.get("deps").secrets, c.get("caller").projectId, c.req.valid("param").id, c.get("deps").clock.now()), 200),
);

webhookRoutes.openapi(
  createRoute({ method: "post", path: "/webhooks/{id}/redeliver", operationId: "redeliverWebhookEvents", summary: "Queue events again", description: "Same event ids, new delivery ids; at most 10,000 events per call; an event whose delivery to the subscription still waits for its first attempt is not queued twice (one sent, being sent or retrying is). The filter is not applied. 409 while the subscription is disabled.", tags, security, middleware: writing(scope), request: { params, body: jsonRequest(RedeliverBody) }, responses: { 202: json(z.object({ queued: z.number().int() }).openapi("Queued"), "Queued."), ...commonErrors, 404: errors[404], 409: errors[409] } }),
  async (c) => c.json(await redeliver(c.get("db"), c.get("caller").projectId, c.req.valid("param").id, c.req.valid("json"), c.get("deps").clock.now(), inFlightOf(c.get("deps").webhooks)), 202),
);

webhookRoutes.openapi(
  createRoute({ method: "get", path: "/webhooks/{id}/attempts", operationId: "listWebhookAttempts", summary: "List delivery attempts", description: "Every attempt of every delivery to the subscription, newest first: status code, duration, error and the start of the answer.", tags, security, middleware: reading(scope), request: { params, query: PageQuery }, responses: { 200: json(AttemptList, "One page, newest first."), ...commonErrors, 404: errors[404] } }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    await requireWebhook(c.get("db"), c.get("caller").projectId, id);
    const { cursors } = c.get("deps");
    const filters = { attempts: id };
    const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
    const rows = await listAttempts(c.get("db"), id, limit, after);
    const page = toPage(rows, limit, (r) => [r.at, r.id], (r) => ({
      id: r.id,
      eventId: r.event_id,
      deliveryId: r.delivery_id,
      attempt: r.attempt,
      at: r.at,
      statusCode: r.status_code,
      durationMs: r.duration_ms,
      error: r.error,
      responseSnippet: r.response_snippet,
    }), cursors, filters);
    return c.json(page, 200);
  },
);
