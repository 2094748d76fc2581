/* @ts-self-types="./merges.d.ts" */
import { CrmApiError } from "./errors.js";
import { paginator } from "./paginate.js";
/** Builds the client's `duplicates`, `merge` and `undoMerge` over an openapi-fetch client. */
export function mergeHelpers(client) {
    const paginate = paginator(client);
    const post = client.POST;
    const headersOf = (idempotencyKey) => (idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey });
    async function send(path, init) {
        const { data, error, response } = await post(path, init);
        if (error !== undefined || !response.ok || data === undefined)
            throw new CrmApiError(error, response);
        return data;
    }
    /** Every group of `GET /duplicates` (docs/api.md §20.1), the most recently written first, page after page. */
    function duplicates(options = {}) {
        const query = options.limit === undefined ? {} : { limit: options.limit };
        return paginate("/duplicates", { params: { query }, signal: options.signal });
    }
    /** `POST /contacts/{survivorId}/merge` (docs/api.md §20.2): `contactIds` (1 to 10) merged into `survivorId`. */
    function merge(survivorId, contactIds, options = {}) {
        const { fields, dryRun, idempotencyKey, signal } = options;
        const body = { contactIds: [...contactIds], ...(fields === undefined ? {} : { fields }), ...(dryRun === undefined ? {} : { dryRun }) };
        return send("/contacts/{contactId}/merge", { params: { path: { contactId: survivorId } }, body, headers: headersOf(idempotencyKey), signal });
    }
    /** `POST /merges/{mergeId}/undo` (docs/api.md §20.4), within 30 days of the merge. */
    function undoMerge(mergeId, options = {}) {
        return send("/merges/{mergeId}/undo", { params: { path: { mergeId } }, headers: headersOf(options.idempotencyKey), signal: options.signal });
    }
    return { duplicates, merge, undoMerge };
}
