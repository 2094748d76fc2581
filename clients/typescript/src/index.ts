/**
 * @crm-service/client — the typed client of the CRM service (docs/api.md §16.3). Only fetch
 * and Web Crypto: runs on Node 20+, Bun, Deno and browsers.
 */
export { apiBaseUrl, createClient, type ClientOptions, type CrmClient } from "./client.js";
export { DEFAULT_POLL_INTERVAL_MS, type ChangeFeed, type ChangeObject, type ChangeRecord, type FollowChanges, type FollowChangesOptions, type FollowedChange } from "./changes.js";
export { CrmApiError, isErrorEnvelope, unwrap, type ErrorCode, type ErrorEnvelope } from "./errors.js";
export type { DuplicateGroup, DuplicatesOptions, MergeField, MergeOptions, MergeResult, UndoMergeOptions, UndoMergeResult } from "./merges.js";
export type { ListItem, ListPath, PaginateInit } from "./paginate.js";
export { DEFAULT_RETRY, type FetchLike, type RetryOptions } from "./retry.js";
export {
  BatchError,
  MAX_BATCH_ITEMS,
  type BatchOptions,
  type ContactBatchAnswer,
  type ContactBatchInput,
  type ContactBatchItemResult,
  type InteractionBatchAnswer,
  type InteractionBatchInput,
  type InteractionBatchItem,
  type InteractionBatchItemResult,
  type MatchOn,
  type Upserted,
  type UpsertOptions,
  type UpsertResult,
} from "./sync.js";
export { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookEvent, type WebhookHeaders } from "./webhooks.js";
export type { components, operations, paths, webhooks } from "./schema.js";

import type { components } from "./schema.js";

/** A named schema of the document: `Schema<"Contact">`, `Schema<"InteractionLog">`. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];
