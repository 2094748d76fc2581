/* @ts-self-types="./changes.d.ts" */
import { CrmApiError } from "./errors.js";
import { retryAfterMs } from "./retry.js";
export const DEFAULT_POLL_INTERVAL_MS = 5_000;
/** Waits `ms`; false when `signal` aborted (before or during the wait). */
function pause(ms, signal) {
    return new Promise((resolve) => {
        if (signal?.aborted)
            return resolve(false);
        const onAbort = () => {
            clearTimeout(timer);
            resolve(false);
        };
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve(true);
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
    });
}
/** Builds `followChanges` over an openapi-fetch client (see the file's comment). */
export function changeFollower(client) {
    const get = client.GET;
    function followChanges(options = {}) {
        const { limit, object, signal, stop = "never" } = options;
        const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
        if (!(pollIntervalMs >= 0))
            throw new RangeError("pollIntervalMs must be 0 or more");
        let position = options.after;
        async function* follow() {
            for (;;) {
                if (signal?.aborted)
                    return;
                const query = {};
                if (position !== undefined)
                    query.after = position;
                if (limit !== undefined)
                    query.limit = limit;
                if (object !== undefined)
                    query.object = object;
                let result;
                try {
                    result = await get("/changes", { params: { query }, signal });
                }
                catch (error) {
                    if (signal?.aborted)
                        return;
                    throw error;
                }
                const { data, error, response } = result;
                if (response.status === 429) {
                    // The client's own retries gave up (or were off): wait as long as the service asks, then go on.
                    const wait = retryAfterMs(response.headers.get("retry-after")) ?? pollIntervalMs;
                    if (!(await pause(wait, signal)))
                        return;
                    continue;
                }
                // 410 ERR_CURSOR_EXPIRED among them: the copy is too far behind; read the contacts again (docs/sync.md §10.5).
                if (data === undefined || error !== undefined)
                    throw new CrmApiError(error, response);
                const from = position;
                const last = data.data.length - 1;
                for (const [i, change] of data.data.entries()) {
                    position = i === last ? data.pagination.nextCursor : from;
                    yield { change, cursor: position };
                }
                position = data.pagination.nextCursor;
                if (data.pagination.hasMore)
                    continue;
                if (stop === "when-caught-up")
                    return;
                if (!(await pause(pollIntervalMs, signal)))
                    return;
            }
        }
        return {
            get cursor() {
                return position;
            },
            [Symbol.asyncIterator]: () => follow(),
        };
    }
    // Started with `after`, `position` is never undefined again: the overload that says so holds.
    return followChanges;
}
