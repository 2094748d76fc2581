/* @ts-self-types="./retry.d.ts" */
/**
 * The client's fetch: retries and idempotency keys (docs/api.md §4, §8, §16).
 *
 * - 429 and 5xx answers, and network errors, are retried up to `maxAttempts` tries in all.
 *   The wait before retry n is exponential backoff with full jitter,
 *   `random(0, min(maxDelayMs, baseDelayMs * 2^(n-1)))`; when the answer carries
 *   `Retry-After` the wait is at least that. A `Retry-After` longer than `maxDelayMs` is
 *   not waited out: that answer is returned as is (never a shorter wait than the server asked).
 * - Any other status (2xx, 3xx, 4xx) is returned at once: a 4xx repeated unchanged fails again.
 * - Every POST carries an `Idempotency-Key` (the caller's, else a random UUID), the same
 *   on each of its retries, so a retried create whose first answer was lost is answered
 *   from the server's stored response instead of creating twice.
 */
export const DEFAULT_RETRY = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 20_000 };
/** Milliseconds a `Retry-After` value (seconds or an HTTP date) asks for; undefined when absent or unreadable. */
export function retryAfterMs(value, now = Date.now()) {
    if (value === null || value.trim() === "")
        return undefined;
    const trimmed = value.trim();
    if (/^\d+$/.test(trimmed))
        return Number(trimmed) * 1000;
    const date = Date.parse(trimmed);
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
/** Wait before try `attempt + 1` (`attempt` ≥ 1 tries made); null: do not retry. */
export function retryDelayMs(attempt, retryAfter, policy, random = Math.random) {
    const backoff = random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    if (retryAfter === undefined)
        return backoff;
    if (retryAfter > policy.maxDelayMs)
        return null;
    return Math.max(retryAfter, backoff);
}
export const isRetryableStatus = (status) => status === 429 || status >= 500;
function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal.aborted)
            return reject(signal.reason);
        const onAbort = () => {
            clearTimeout(timer);
            reject(signal.reason);
        };
        const timer = setTimeout(() => {
            signal.removeEventListener("abort", onAbort);
            resolve();
        }, ms);
        signal.addEventListener("abort", onAbort, { once: true });
    });
}
const isAbort = (error) => error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
/** Sets an `Idempotency-Key` on a POST that has none (docs/api.md §16). */
export function withIdempotencyKey(request) {
    if (request.method !== "POST" || request.headers.has("idempotency-key"))
        return request;
    const headers = new Headers(request.headers);
    headers.set("Idempotency-Key", crypto.randomUUID());
    return new Request(request, { headers });
}
/** Wraps `inner` with the idempotency key and the retry policy above. */
export function retryingFetch(inner, policy) {
    return async function fetchWithRetries(original) {
        const request = withIdempotencyKey(original);
        for (let attempt = 1;; attempt++) {
            let response;
            try {
                // A clone per try: the body stream of `request` is never consumed, so it can be sent again.
                response = await inner(request.clone());
            }
            catch (error) {
                if (isAbort(error) || attempt >= policy.maxAttempts)
                    throw error;
            }
            if (response && (!isRetryableStatus(response.status) || attempt >= policy.maxAttempts))
                return response;
            const wait = retryDelayMs(attempt, retryAfterMs(response?.headers.get("retry-after") ?? null), policy);
            if (wait === null)
                return response;
            await response?.body?.cancel();
            await sleep(wait, request.signal);
        }
    };
}
