/** A `Retry-After` beyond one hour counts as one hour (docs/webhooks.md §4). */
export const RETRY_AFTER_CAP_MS = 3_600_000;

/**
 * Delay before the next attempt after failed attempt number `attempt` (1-based), or null
 * when the delivery is exhausted: k schedule entries allow 1 + k attempts (docs/webhooks.md §2.2).
 * Each step gets ±10 % jitter; a 429's Retry-After delays the next attempt at least that
 * long, whatever the schedule says, capped at one hour (docs/webhooks.md §4).
 */
export function nextAttemptDelay(schedule: number[], attempt: number, retryAfterMs: number | null, random = Math.random): number | null {
  const step = schedule[attempt - 1];
  if (step === undefined) return null;
  const jittered = Math.round(step * (0.9 + 0.2 * random()));
  if (retryAfterMs === null) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, RETRY_AFTER_CAP_MS));
}
