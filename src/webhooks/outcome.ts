import { nextAttemptDelay } from "./retry.ts";

/** What an attempt answered, as far as the rules care (src/webhooks/sender.ts's SendResult fits). */
export interface AttemptResult {
  /** The receiver's status, or null when nothing came back (refused, timed out, blocked address). */
  statusCode: number | null;
  /** Why nothing usable came back, when nothing did. */
  error: string | null;
  /** The answer's Retry-After, in milliseconds from now. */
  retryAfterMs: number | null;
}

/**
 * The subscription is disabled by this outcome: at once on 410 Gone, or on exhaustion
 * only when nothing succeeded on the subscription since the delivery began
 * (docs/webhooks.md §4). That last condition is the subscription's streak at write time, so the record
 * stage checks it in the same statement that disables (src/webhooks/deliveries.ts).
 */
export interface Disable {
  reason: string;
  unlessSucceededSince: boolean;
}

/**
 * The next state of a delivery after an attempt: delivered; tried again at `retryAt`;
 * exhausted (no retries left: disables the subscription unless it succeeded meanwhile);
 * or disabled (410 Gone: the subscription is disabled at once, the delivery not retried).
 */
export type NextState =
  | { state: "delivered"; error: null; retryAt: null; disable: null }
  | { state: "retry"; error: string; retryAt: string; disable: null }
  | { state: "exhausted"; error: string; retryAt: null; disable: Disable }
  | { state: "disabled"; error: string; retryAt: null; disable: Disable };

export interface AttemptFacts {
  result: AttemptResult;
  /** This attempt's number, 1-based. */
  attempt: number;
  /** When the attempt finished (the service's clock, ms since the epoch). */
  now: number;
  /** The delivery, named in the reason an exhausted delivery disables its subscription with. */
  deliveryId: string;
  /** The retry schedule (CRM_WEBHOOK_RETRY_SCHEDULE): k entries allow 1 + k attempts. */
  schedule: number[];
  /** The jitter's random source (tests fix it). */
  random?: () => number;
}

/** 2xx, and only 2xx, is a success (docs/webhooks.md §4: 3xx included in failures). */
export const isSuccess = (r: AttemptResult) => r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

/** The reason recorded for a failed attempt. */
export const failureReason = (r: AttemptResult) => r.error ?? `HTTP ${r.statusCode}`;

/**
 * The rules of docs/webhooks.md §4, §2.2 from an attempt's result to what happens next, with no
 * I/O and no clock of its own (the dispatcher records what it returns): 2xx is delivered;
 * 410 Gone disables the subscription at once; any other failure waits the schedule's next
 * step with ±10 % jitter, a 429's Retry-After at least that long (capped at one hour),
 * until the schedule runs out, which exhausts the delivery.
 */
export function attemptOutcome(f: AttemptFacts): NextState {
  const r = f.result;
  if (isSuccess(r)) return { state: "delivered", error: null, retryAt: null, disable: null };
  const error = failureReason(r);
  if (r.statusCode === 410) return { state: "disabled", error, retryAt: null, disable: { reason: "the endpoint answered 410 Gone", unlessSucceededSince: false } };
  const delay = nextAttemptDelay(f.schedule, f.attempt, r.statusCode === 429 ? r.retryAfterMs : null, f.random);
  if (delay === null) {
    const reason = `delivery ${f.deliveryId} failed ${f.attempt} attempts; last: ${error}`;
    return { state: "exhausted", error, retryAt: null, disable: { reason, unlessSucceededSince: true } };
  }
  return { state: "retry", error, retryAt: new Date(f.now + delay).toISOString(), disable: null };
}
