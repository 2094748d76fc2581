/**
 * `createClient`: a thin wrapper over openapi-fetch typed by the generated `paths`
 * (docs/api.md §16). Every operation is called as `crm.GET("/contacts/{contactId}", ...)`,
 * its parameters, body and answers typed from the OpenAPI document; the wrapper adds the
 * key, the `/v1` base, retries and idempotency keys (retry.ts) and `paginate` (paginate.ts).
 */
import createOpenApiClient, { type Client } from "openapi-fetch";
import { paginator } from "./paginate.js";
import { DEFAULT_RETRY, retryingFetch, type FetchLike, type RetryOptions } from "./retry.js";
import type { paths } from "./schema.js";
import { changeFollower, type FollowChanges } from "./changes.js";
import { mergeHelpers, type DuplicateGroup, type DuplicatesOptions, type MergeOptions, type MergeResult, type UndoMergeOptions, type UndoMergeResult } from "./merges.js";
import { syncHelpers, type BatchOptions, type ContactBatchAnswer, type ContactBatchInput, type InteractionBatchAnswer, type InteractionBatchInput, type Upserted, type UpsertOptions } from "./sync.js";
import type { components } from "./schema.js";

export interface ClientOptions {
  /**
   * Where the service runs, e.g. `http://127.0.0.1:8080` (its default address). The paths of the API live under
   * `/v1` (docs/api.md §1.2), which is appended unless `baseUrl` already ends in `/v1`, so both
   * `https://crm.example.com` and `https://crm.example.com/v1` work.
   */
  baseUrl: string;
  /** An API key (`crm_live_...` or `crm_test_...`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** The fetch to send with (default: the global fetch, looked up at each call). */
  fetch?: FetchLike;
  /** Retry policy of 429, 5xx and network errors (retry.ts); `false` never retries. */
  retry?: Partial<RetryOptions> | false;
}

/** The API's base address: `baseUrl` without a trailing slash, ending in `/v1`. */
export function apiBaseUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}

export interface CrmClient {
  GET: Client<paths>["GET"];
  POST: Client<paths>["POST"];
  PUT: Client<paths>["PUT"];
  PATCH: Client<paths>["PATCH"];
  DELETE: Client<paths>["DELETE"];
  /** Any method by name: `crm.request("get", "/ping")`. */
  request: Client<paths>["request"];
  /** openapi-fetch middleware (onRequest / onResponse / onError). */
  use: Client<paths>["use"];
  eject: Client<paths>["eject"];
  /** Every item of a list, page after page: `for await (const c of crm.paginate("/contacts")) ...`. */
  paginate: ReturnType<typeof paginator>;
  /**
   * Create or update the one contact holding `contact[matchOn]` (`PUT /contacts`, docs/api.md
   * §18.2): answers the contact and `result` (created, updated or unchanged); throws
   * `CrmApiError` on failure.
   */
  upsertContact(contact: components["schemas"]["CreateContact"], options: UpsertOptions): Promise<Upserted>;
  /**
   * `POST /contacts/batch` for any number of items (docs/api.md §18.4): chunks of 1,000 sent in
   * order, each with its own Idempotency-Key; results merged with `index` over the whole input.
   * `atomic` holds per chunk only. A chunk that fails throws `BatchError`.
   */
  batchContacts(input: ContactBatchInput, options?: BatchOptions): Promise<ContactBatchAnswer>;
  /** `POST /interactions/batch` for any number of items, chunked as `batchContacts`. */
  batchInteractions(input: InteractionBatchInput, options?: BatchOptions): Promise<InteractionBatchAnswer>;
  /**
   * Follows `GET /changes` (docs/api.md §19.2) from `after`: yields `{ change, cursor }` for each
   * change record, oldest first, `cursor` being the position to store once `change` is
   * applied; keeps polling every `pollIntervalMs` once caught up unless `stop` is
   * `"when-caught-up"`; waits out 429s; ends quietly when `signal` aborts. `feed.cursor` is the
   * position reached. Other failures throw `CrmApiError` (410 ERR_CURSOR_EXPIRED: read the
   * contacts again).
   */
  followChanges: FollowChanges;
  /**
   * Every group of likely duplicates (`GET /duplicates`, docs/api.md §20.1), the group written
   * to most recently first, following the cursors page after page; a failed page throws
   * `CrmApiError`.
   */
  duplicates(options?: DuplicatesOptions): AsyncIterable<DuplicateGroup>;
  /**
   * Merges `contactIds` (1 to 10) into `survivorId` (`POST /contacts/{contactId}/merge`,
   * docs/api.md §20.2): `fields` chooses per field which contact's value to keep, `dryRun`
   * answers the would-be contact and writes nothing. Answers `{ contact, merge }`; throws
   * `CrmApiError` (409 ERR_CONTACT_MERGED: `mergedInto`).
   */
  merge(survivorId: string, contactIds: readonly string[], options?: MergeOptions): Promise<MergeResult>;
  /**
   * Undoes a merge within 30 days (`POST /merges/{mergeId}/undo`, docs/api.md §20.4): answers
   * `{ contact, restoredContacts, merge }`; throws `CrmApiError` (409 ERR_CONFLICT, 410
   * ERR_UNDO_EXPIRED, 404, 402).
   */
  undoMerge(mergeId: string, options?: UndoMergeOptions): Promise<UndoMergeResult>;
}

export function createClient(options: ClientOptions): CrmClient {
  const send: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request));
  const policy = options.retry === false ? { ...DEFAULT_RETRY, maxAttempts: 1 } : { ...DEFAULT_RETRY, ...options.retry };
  const client = createOpenApiClient<paths>({
    baseUrl: apiBaseUrl(options.baseUrl),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(send, policy),
  });
  return {
    GET: client.GET,
    POST: client.POST,
    PUT: client.PUT,
    PATCH: client.PATCH,
    DELETE: client.DELETE,
    request: client.request,
    use: client.use,
    eject: client.eject,
    paginate: paginator(client),
    ...syncHelpers(client),
    followChanges: changeFollower(client),
    ...mergeHelpers(client),
  };
}
