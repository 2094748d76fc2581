/* @ts-self-types="./sync.d.ts" */
import { CrmApiError } from "./errors.js";
export const MAX_BATCH_ITEMS = 1000;
/** A batch that stopped at a chunk: `results` and `summary` of what was answered, `completed` items before the failed chunk. */
export class BatchError extends CrmApiError {
    results;
    summary;
    completed;
    chunk;
    constructor(body, response, 
    /** The merged results so far; a rejected atomic chunk's results included (its items say "error" or "skipped"). */
    results, 
    /** Summed summaries of the chunks answered 200 (what was written or replayed). */
    summary, 
    /** Items of the input whose chunks were answered 200: resume with `items.slice(completed)`. */
    completed, 
    /** The failed chunk, from 0. */
    chunk) {
        super(body, response);
        this.results = results;
        this.summary = summary;
        this.completed = completed;
        this.chunk = chunk;
        this.name = "BatchError";
    }
}
/** Sends `items` in chunks through `send`, in order, and merges the answers (see the file's comment). */
async function sendInChunks(send, items, zero, options) {
    const size = options.chunkSize ?? MAX_BATCH_ITEMS;
    if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH_ITEMS)
        throw new RangeError(`chunkSize must be an integer from 1 to ${MAX_BATCH_ITEMS}`);
    const results = [];
    const summary = { ...zero };
    for (let start = 0, chunk = 0; start < items.length; start += size, chunk++) {
        const key = options.idempotencyKey === undefined ? crypto.randomUUID() : `${options.idempotencyKey}-${chunk}`;
        const { data, error, response } = await send(items.slice(start, start + size), key);
        const shift = (r) => ({ ...r, index: r.index + start });
        if (response.status !== 200 || data === undefined) {
            const rejected = error?.results ?? [];
            throw new BatchError(error, response, [...results, ...rejected.map(shift)], summary, start, chunk);
        }
        const answer = data;
        results.push(...answer.results.map(shift));
        for (const [name, count] of Object.entries(answer.summary))
            summary[name] = (summary[name] ?? 0) + count;
        options.onChunk?.({ chunk, completed: Math.min(start + size, items.length), total: items.length });
    }
    return { results, summary };
}
/** Builds the client's `upsertContact`, `batchContacts` and `batchInteractions` over an openapi-fetch client. */
export function syncHelpers(client) {
    const put = client.PUT;
    const post = client.POST;
    /** `PUT /contacts?matchOn=…` (docs/api.md §18.2): the contact and what was done; a failure throws `CrmApiError` (409 ERR_AMBIGUOUS_MATCH: `matches`). */
    async function upsertContact(contact, options) {
        const { matchOn, update, tags, idempotencyKey, ifMatch, signal } = options;
        const headers = { "Idempotency-Key": idempotencyKey ?? crypto.randomUUID() };
        if (ifMatch !== undefined)
            headers["If-Match"] = ifMatch;
        const query = Object.fromEntries(Object.entries({ matchOn, update, tags }).filter(([, v]) => v !== undefined));
        const { data, error, response } = await put("/contacts", { params: { query }, body: contact, headers, signal });
        if (error !== undefined || !response.ok || data === undefined)
            throw new CrmApiError(error, response);
        const header = response.headers.get("upsert-result");
        const result = header === "updated" || header === "unchanged" || header === "created" ? header : response.status === 201 ? "created" : "updated";
        return { contact: data, result, response };
    }
    /** `POST /contacts/batch` for any number of items (docs/api.md §18.4), in chunks of at most 1,000. */
    function batchContacts(input, options = {}) {
        const { items, ...rest } = input;
        const body = { atomic: false, ...rest };
        return sendInChunks((chunk, key) => post("/contacts/batch", { body: { ...body, items: chunk }, headers: { "Idempotency-Key": key }, signal: options.signal }), items, { created: 0, updated: 0, unchanged: 0, failed: 0 }, options);
    }
    /** `POST /interactions/batch` for any number of items (docs/api.md §18.4), in chunks of at most 1,000. */
    function batchInteractions(input, options = {}) {
        const atomic = input.atomic ?? false;
        return sendInChunks((chunk, key) => post("/interactions/batch", { body: { atomic, items: chunk }, headers: { "Idempotency-Key": key }, signal: options.signal }), input.items, { created: 0, replayed: 0, failed: 0 }, options);
    }
    return { upsertContact, batchContacts, batchInteractions };
}
