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
export interface RetryOptions {
    /** Tries in all, the first included (1: never retry). Default 4. */
    maxAttempts: number;
    /** Backoff base in milliseconds. Default 500. */
    baseDelayMs: number;
    /** Longest wait between two tries, in milliseconds. Default 20,000. */
    maxDelayMs: number;
}
export declare const DEFAULT_RETRY: RetryOptions;
/** A fetch as openapi-fetch calls it. */
export type FetchLike = (request: Request) => Promise<Response>;
/** Milliseconds a `Retry-After` value (seconds or an HTTP date) asks for; undefined when absent or unreadable. */
export declare function retryAfterMs(value: string | null, now?: number): number | undefined;
/** Wait before try `attempt + 1` (`attempt` ≥ 1 tries made); null: do not retry. */
export declare function retryDelayMs(attempt: number, retryAfter: number | undefined, policy: RetryOptions, random?: () => number): number | null;
export declare const isRetryableStatus: (status: number) => boolean;
/** Sets an `Idempotency-Key` on a POST that has none (docs/api.md §16). */
export declare function withIdempotencyKey(request: Request): Request;
/** Wraps `inner` with the idempotency key and the retry policy above. */
export declare function retryingFetch(inner: FetchLike, policy: RetryOptions): FetchLike;
