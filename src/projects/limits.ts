/**
 * A new project's per-key limits unless given (docs/api.md §6): each number written once
 * here, read by the project's creation, the CLI's help and the OpenAPI document's text.
 */

/** Requests a minute per key. */
export const DEFAULT_REQUESTS_PER_MINUTE = 120;

/** POST /contacts an hour per key (the routes that declare `limitCreates()`, src/auth/limits.ts). */
export const DEFAULT_CONTACT_CREATES_PER_HOUR = 600;

/** Items of batch writes an hour per key, both batch routes together (docs/api.md §18.4). */
export const DEFAULT_BATCH_ITEMS_PER_HOUR = 60_000;
