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
type BatchFlags = {
    atomic?: boolean;
};
/** A contacts batch of any length: the operation, its upsert options, and the items as the single calls take them. */
export type ContactBatchInput = BatchFlags & ({
    operation: "create";
    items: readonly Schemas["CreateContact"][];
} | {
    operation: "upsert";
    matchOn: MatchOn;
    update?: "merge" | "fill";
    tags?: "replace" | "add";
    items: readonly Schemas["CreateContact"][];
} | {
    operation: "update";
    items: readonly (Schemas["PatchContact"] & {
        contactId: string;
    })[];
});
/** An interaction of `POST /interactions/batch`: the single call's body plus its `contactId`. */
export type InteractionBatchItem = (Schemas["CreateTypedInteraction"] | Schemas["CreateNoteInteraction"]) & {
    contactId: string;
};
export type InteractionBatchInput = BatchFlags & {
    items: readonly InteractionBatchItem[];
};
export declare const MAX_BATCH_ITEMS = 1000;
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
    onChunk?: (progress: {
        chunk: number;
        completed: number;
        total: number;
    }) => void;
}
/** A batch that stopped at a chunk: `results` and `summary` of what was answered, `completed` items before the failed chunk. */
export declare class BatchError extends CrmApiError {
    /** The merged results so far; a rejected atomic chunk's results included (its items say "error" or "skipped"). */
    readonly results: (ContactBatchItemResult | InteractionBatchItemResult)[];
    /** Summed summaries of the chunks answered 200 (what was written or replayed). */
    readonly summary: Record<string, number>;
    /** Items of the input whose chunks were answered 200: resume with `items.slice(completed)`. */
    readonly completed: number;
    /** The failed chunk, from 0. */
    readonly chunk: number;
    constructor(body: unknown, response: Response, 
    /** The merged results so far; a rejected atomic chunk's results included (its items say "error" or "skipped"). */
    results: (ContactBatchItemResult | InteractionBatchItemResult)[], 
    /** Summed summaries of the chunks answered 200 (what was written or replayed). */
    summary: Record<string, number>, 
    /** Items of the input whose chunks were answered 200: resume with `items.slice(completed)`. */
    completed: number, 
    /** The failed chunk, from 0. */
    chunk: number);
}
/** Builds the client's `upsertContact`, `batchContacts` and `batchInteractions` over an openapi-fetch client. */
export declare function syncHelpers<Paths extends {}>(client: Client<Paths>): {
    upsertContact: (contact: Schemas["CreateContact"], options: UpsertOptions) => Promise<Upserted>;
    batchContacts: (input: ContactBatchInput, options?: BatchOptions) => Promise<ContactBatchAnswer>;
    batchInteractions: (input: InteractionBatchInput, options?: BatchOptions) => Promise<InteractionBatchAnswer>;
};
export {};
