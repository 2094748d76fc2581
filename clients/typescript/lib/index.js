/* @ts-self-types="./index.d.ts" */
/**
 * @crm-service/client — the typed client of the CRM service (docs/api.md §16.3). Only fetch
 * and Web Crypto: runs on Node 20+, Bun, Deno and browsers.
 */
export { apiBaseUrl, createClient } from "./client.js";
export { DEFAULT_POLL_INTERVAL_MS } from "./changes.js";
export { CrmApiError, isErrorEnvelope, unwrap } from "./errors.js";
export { DEFAULT_RETRY } from "./retry.js";
export { BatchError, MAX_BATCH_ITEMS, } from "./sync.js";
export { verifyWebhook, WebhookVerificationError } from "./webhooks.js";
