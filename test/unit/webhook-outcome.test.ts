/**
 * What an attempt's result leads to (src/webhooks/outcome.ts, docs/webhooks.md §2, docs/api.md §3): one test
 * per rule, with a fixed clock and a fixed jitter draw, no database and no receiver.
 */
import { describe, expect, test } from "bun:test";
import { attemptOutcome, type AttemptFacts, type AttemptResult } from "../../src/webhooks/outcome.ts";

const NOW = Date.parse("2026-01-15T09:30:00.000Z");
const SCHEDULE = [10_000, 60_000, 300_000];
const at = (ms: number) => new Date(NOW + ms).toISOString();
const answered = (statusCode: number, retryAfterMs: number | null = null): AttemptResult => ({ statusCode, error: null, retryAfterMs });
const facts = (result: AttemptResult, attempt = 1, more: Partial<AttemptFacts> = {}): AttemptFacts => ({
  result,
  attempt,
  now: NOW,
  deliveryId: "dlv_1",
  schedule: SCHEDULE,
  random: () => 0.5,
  ...more,
});

describe("attemptOutcome", () => {
  test("an attempt succeeds on 2xx: delivered, nothing retried, nothing disabled", () => {
    for (const status of [200, 201, 204, 299]) {
      expect(attemptOutcome(facts(answered(status)))).toEqual({ state: "delivered", error: null, retryAt: null, disable: null });
    }
  });

  test("anything else fails, 3xx included: retried after the schedule's step, with the status as the reason", () => {
    for (const status of [301, 302, 400, 404, 500, 503]) {
      expect(attemptOutcome(facts(answered(status)))).toEqual({ state: "retry", error: `HTTP ${status}`, retryAt: at(10_000), disable: null });
    }
  });

  test("no answer at all (refused, timed out, blocked address) fails with its error as the reason", () => {
    const result = { statusCode: null, error: "the attempt timed out after 10000 ms", retryAfterMs: null };
    expect(attemptOutcome(facts(result))).toEqual({ state: "retry", error: "the attempt timed out after 10000 ms", retryAt: at(10_000), disable: null });
  });

  test("failed attempt n waits the n-th schedule step from the attempt's time", () => {
    SCHEDULE.forEach((step, i) => expect(attemptOutcome(facts(answered(500), i + 1)).retryAt).toBe(at(step)));
  });

  test("each retry step gets ±10 % jitter", () => {
    expect(attemptOutcome(facts(answered(500), 1, { random: () => 0 })).retryAt).toBe(at(9_000));
    expect(attemptOutcome(facts(answered(500), 1, { random: () => 0.999999 })).retryAt).toBe(at(11_000));
  });

  test("a 410 Gone disables the subscription at once, without retries, whatever attempt it was", () => {
    for (const attempt of [1, 2, 4]) {
      expect(attemptOutcome(facts(answered(410), attempt))).toEqual({
        state: "disabled",
        error: "HTTP 410",
        retryAt: null,
        disable: { reason: "the endpoint answered 410 Gone", unlessSucceededSince: false },
      });
    }
  });

  test("a 429 with Retry-After delays the next attempt at least that long, whatever the schedule says", () => {
    expect(attemptOutcome(facts(answered(429, 45_000))).retryAt).toBe(at(45_000));
  });

  test("a 429's Retry-After shorter than the step changes nothing", () => {
    expect(attemptOutcome(facts(answered(429, 2_000))).retryAt).toBe(at(10_000));
  });

  test("a Retry-After beyond one hour counts as one hour", () => {
    expect(attemptOutcome(facts(answered(429, 86_400_000))).retryAt).toBe(at(3_600_000));
  });

  test("Retry-After is honoured on a 429 only: a 503's is ignored", () => {
    expect(attemptOutcome(facts(answered(503, 45_000))).retryAt).toBe(at(10_000));
  });

  test("k schedule entries allow 1 + k attempts: the last failure exhausts the delivery", () => {
    expect(attemptOutcome(facts(answered(500), SCHEDULE.length)).state).toBe("retry");
    expect(attemptOutcome(facts(answered(500), SCHEDULE.length + 1))).toEqual({
      state: "exhausted",
      error: "HTTP 500",
      retryAt: null,
      disable: { reason: "delivery dlv_1 failed 4 attempts; last: HTTP 500", unlessSucceededSince: true },
    });
  });

  test("an exhausted delivery stays exhausted even when a 429 asked for Retry-After", () => {
    expect(attemptOutcome(facts(answered(429, 1_000), SCHEDULE.length + 1)).state).toBe("exhausted");
  });

  test("exhaustion disables the subscription only if nothing succeeded on it since the delivery began", () => {
    expect(attemptOutcome(facts(answered(500), SCHEDULE.length + 1)).disable?.unlessSucceededSince).toBe(true);
    expect(attemptOutcome(facts(answered(410))).disable?.unlessSucceededSince).toBe(false);
  });

  test("with an empty schedule the first failure is the last", () => {
    expect(attemptOutcome(facts(answered(500), 1, { schedule: [] })).state).toBe("exhausted");
  });

  test("the outcome is a function of its inputs: the same facts give the same state", () => {
    const f = facts(answered(500), 2);
    expect(attemptOutcome(f)).toEqual(attemptOutcome(f));
  });
});
