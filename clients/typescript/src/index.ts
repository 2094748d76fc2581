/**
 * @crm-service/client — the typed client of the CRM service (docs/api.md §16.3). Only fetch
 * and Web Crypto: runs on Node 20+, Bun, Deno and browsers.
 */
export { apiBaseUrl, createClient, type ClientOptions, type CrmClient } from "./client.ts";
export { CrmApiError, isErrorEnvelope, unwrap, type ErrorCode, type ErrorEnvelope } from "./errors.ts";
export type { ListItem, ListPath, PaginateInit } from "./paginate.ts";
export { DEFAULT_RETRY, type FetchLike, type RetryOptions } from "./retry.ts";
export { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookEvent, type WebhookHeaders } from "./webhooks.ts";
export type { components, operations, paths, webhooks } from "./schema.d.ts";

import type { components } from "./schema.d.ts";

/** A named schema of the document: `Schema<"Contact">`, `Schema<"InteractionLog">`. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];
