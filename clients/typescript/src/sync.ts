/**
 * Syncing in (docs/api.md §18): `upsertContact` over `PUT /contacts?matchOn=…` (§18.2), and
 * `batchContacts` / `batchInteractions` over the batch routes (§18.4) for an input of any
 * length: cut into chunks of at most 1,000 items (the routes' maximum), each chunk one
 * request with its own `Idempotency-Key` (so the client's retries of a chunk never write it
 * twice), sent in order, and their answers merged as if one batch had been sent: every
 * `index` counts from the start of the whole input, and the summaries are summed.
 *
 * `atomic` is all-or-nothing per chunk only: chunks already answered stay written. When a
 * chunk is rejected (or fails as a whole), the chunks after it are not sent and a
 * `BatchError` says how far the input got (`completed`).
 */
import type { Client } from "openapi-fetch";
import { CrmApiError } from "./errors.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];

/** What `matchOn` may name (docs/api.md §18.2): email, phone, or a unique custom field by id or title. */
export type MatchOn = "email" | "phone" | `customFields.${string}`;
export type UpsertResult = "created" | "updated" | "unchanged";

export interface UpsertOptions {
  matchOn: MatchOn;
  /** `merge` (default): the body is a merge patch; `fill`: only fields empty on the stored contact are written. */
  update?: "merge" | "fill";
  /** `replace` (default): the body's tags replace the contact's; `add`: they join them. */
  tags?: "replace" | "add";
  /** Sent as `Idempotency-Key` (default: a random UUID, the same on every retry of this call). */
  idempotencyKey?: string;
  /** Sent as `If-Match`, e.g. `"4"` (docs/api.md §18.1): 412 when the contact found has another version. */
  ifMatch?: string;
  signal?: AbortSignal;
}

export interface Upserted {
  /** The contact (or its receipt, for a key without contacts:read). */
  contact: Schemas["Contact"] | Schemas["ContactReceipt"];
  /** The `Upsert-Result` header: what the call did. */
  result: UpsertResult;
  response: Response;
}

/** One result of a batch, `index` relative to the whole input. */
export type ContactBatchItemResult = Schemas["ContactBatchResult"]["results"][number];
export type InteractionBatchItemResult = Schemas["InteractionBatchResult"]["results"][number];
export type ContactBatchAnswer = Schemas["ContactBatchResult"];
export type InteractionBatchAnswer = Schemas["InteractionBatchResult"];

type BatchFlags = { atomic?: boolean };
/** A contacts batch of any length: the operation, its upsert options, and the items as the single calls take them. */
export type ContactBatchInput = BatchFlags &
  (
    | { operation: "create"; items: readonly Schemas["CreateContact"][] }
    | { operation: "upsert"; matchOn: MatchOn; update?: "merge" | "fill"; tags?: "replace" | "add"; items: readonly Schemas["CreateContact"][] }
    | { operation: "update"; items: readonly (Schemas["PatchContact"] & { contactId: string })[] }
  );
/** An interaction of `POST /interactions/batch`: the single call's body plus its `contactId`. */
export type InteractionBatchItem = (Schemas["CreateTypedInteraction"] | Schemas["CreateNoteInteraction"]) & { contactId: string };
export type InteractionBatchInput = BatchFlags & { items: readonly InteractionBatchItem[] };

export const MAX_BATCH_ITEMS = 1000;

export interface BatchOptions {
  /** Items per request, 1 to 1,000 (default 1,000). */
  chunkSize?: number;
  /**
   * Base of the chunks' `Idempotency-Key`s: chunk n (from 0) sends `<idempotencyKey>-<n>`, so a
   * program that restarts and sends the same input again gets the stored answers of the
   * chunks already written. Default: a random UUID per chunk.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Called after each chunk answered 200, with the merged answer so far. */
  onChunk?: (progress: { chunk: number; completed: number; total: number }) => void;
}

interface Answer {
  results: { index: number }[];
  summary: Record<string, number>;
}

/** A batch that stopped at a chunk: `results` and `summary` of what was answered, `completed` items before the failed chunk. */
export class BatchError extends CrmApiError {
  constructor(
    body: unknown,
    response: Response,
    /** The merged results so far; a rejected atomic chunk's results included (its items say "error" or "skipped"). */
    readonly results: (ContactBatchItemResult | InteractionBatchItemResult)[],
    /** Summed summaries of the chunks answered 200 (what was written or replayed). */
    readonly summary: Record<string, number>,
    /** Items of the input whose chunks were answered 200: resume with `items.slice(completed)`. */
    readonly completed: number,
    /** The failed chunk, from 0. */
    readonly chunk: number,
  ) {
    super(body, response);
    this.name = "BatchError";
  }
}

type Send = (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** Sends `items` in chunks through `send`, in order, and merges the answers (see the file's comment). */
async function sendInChunks<A extends Answer>(send: (chunk: readonly unknown[], key: string) => Promise<{ data?: unknown; error?: unknown; response: Response }>, items: readonly unknown[], zero: A["summary"], options: BatchOptions): Promise<A> {
  const size = options.chunkSize ?? MAX_BATCH_ITEMS;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH_ITEMS) throw new RangeError(`chunkSize must be an integer from 1 to ${MAX_BATCH_ITEMS}`);
  const results: A["results"] = [];
  const summary: Record<string, number> = { ...zero };
  for (let start = 0, chunk = 0; start < items.length; start += size, chunk++) {
    const key = options.idempotencyKey === undefined ? crypto.randomUUID() : `${options.idempotencyKey}-${chunk}`;
    const { data, error, response } = await send(items.slice(start, start + size), key);
    const shift = (r: { index: number }) => ({ ...r, index: r.index + start });
    if (response.status !== 200 || data === undefined) {
      const rejected = (error as { results?: { index: number }[] } | undefined)?.results ?? [];
      throw new BatchError(error, response, [...results, ...rejected.map(shift)] as BatchError["results"], summary, start, chunk);
    }
    const answer = data as A;
    results.push(...answer.results.map(shift));
    for (const [name, count] of Object.entries(answer.summary)) summary[name] = (summary[name] ?? 0) + count;
    options.onChunk?.({ chunk, completed: Math.min(start + size, items.length), total: items.length });
  }
  return { results, summary } as A;
}

/** Builds the client's `upsertContact`, `batchContacts` and `batchInteractions` over an openapi-fetch client. */
export function syncHelpers<Paths extends {}>(client: Client<Paths>) {
  const put = client.PUT as unknown as Send;
  const post = client.POST as unknown as Send;

  /** `PUT /contacts?matchOn=…` (docs/api.md §18.2): the contact and what was done; a failure throws `CrmApiError` (409 ERR_AMBIGUOUS_MATCH: `matches`). */
  async function upsertContact(contact: Schemas["CreateContact"], options: UpsertOptions): Promise<Upserted> {
    const { matchOn, update, tags, idempotencyKey, ifMatch, signal } = options;
    const headers: Record<string, string> = { "Idempotency-Key": idempotencyKey ?? crypto.randomUUID() };
    if (ifMatch !== undefined) headers["If-Match"] = ifMatch;
    const query = Object.fromEntries(Object.entries({ matchOn, update, tags }).filter(([, v]) => v !== undefined));
    const { data, error, response } = await put("/contacts", { params: { query }, body: contact, headers, signal });
    if (error !== undefined || !response.ok || data === undefined) throw new CrmApiError(error, response);
    const header = response.headers.get("upsert-result");
    const result: UpsertResult = header === "updated" || header === "unchanged" || header === "created" ? header : response.status === 201 ? "created" : "updated";
    return { contact: data as Upserted["contact"], result, response };
  }

  /** `POST /contacts/batch` for any number of items (docs/api.md §18.4), in chunks of at most 1,000. */
  function batchContacts(input: ContactBatchInput, options: BatchOptions = {}): Promise<ContactBatchAnswer> {
    const { items, ...rest } = input;
    const body = { atomic: false, ...rest };
    return sendInChunks<ContactBatchAnswer>(
      (chunk, key) => post("/contacts/batch", { body: { ...body, items: chunk }, headers: { "Idempotency-Key": key }, signal: options.signal }),
      items,
      { created: 0, updated: 0, unchanged: 0, failed: 0 },
      options,
    );
  }

  /** `POST /interactions/batch` for any number of items (docs/api.md §18.4), in chunks of at most 1,000. */
  function batchInteractions(input: InteractionBatchInput, options: BatchOptions = {}): Promise<InteractionBatchAnswer> {
    const atomic = input.atomic ?? false;
    return sendInChunks<InteractionBatchAnswer>(
      (chunk, key) => post("/interactions/batch", { body: { atomic, items: chunk }, headers: { "Idempotency-Key": key }, signal: options.signal }),
      input.items,
      { created: 0, replayed: 0, failed: 0 },
      options,
    );
  }

  return { upsertContact, batchContacts, batchInteractions };
}
