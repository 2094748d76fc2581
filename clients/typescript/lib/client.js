/* @ts-self-types="./client.d.ts" */
/**
 * `createClient`: a thin wrapper over openapi-fetch typed by the generated `paths`
 * (docs/api.md §16). Every operation is called as `crm.GET("/contacts/{contactId}", ...)`,
 * its parameters, body and answers typed from the OpenAPI document; the wrapper adds the
 * key, the `/v1` base, retries and idempotency keys (retry.ts) and `paginate` (paginate.ts).
 */
import createOpenApiClient, {} from "openapi-fetch";
import { paginator } from "./paginate.js";
import { DEFAULT_RETRY, retryingFetch } from "./retry.js";
import { changeFollower } from "./changes.js";
import { mergeHelpers } from "./merges.js";
import { syncHelpers } from "./sync.js";
/** The API's base address: `baseUrl` without a trailing slash, ending in `/v1`. */
export function apiBaseUrl(baseUrl) {
    const trimmed = baseUrl.replace(/\/+$/, "");
    return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}
export function createClient(options) {
    const send = options.fetch ?? ((request) => globalThis.fetch(request));
    const policy = options.retry === false ? { ...DEFAULT_RETRY, maxAttempts: 1 } : { ...DEFAULT_RETRY, ...options.retry };
    const client = createOpenApiClient({
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
