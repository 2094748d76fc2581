/**
 * The service's one source of "now" (issue 11): every time window (Idempotency-Key 24 h,
 * docs/api.md §11; the rotated secret's 24 h and the 30-day event log, docs/webhooks.md §3.4; key
 * expiry, docs/api.md §2) is measured against it. The running service gets it as a
 * dependency (src/server.ts), so tests drive time with their own clock instead of waiting.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The wall clock: what production always runs on. */
export const systemClock: Clock = { now: () => Date.now() };
