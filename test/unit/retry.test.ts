/**
 * Retry delays (docs/operations.md §1, docs/webhooks.md §4, §2.2): ±10 % jitter per step, k schedule entries → 1 + k
 * attempts, a 429's Retry-After waits at least that long (a value beyond one hour counts as one hour).
 */
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { nextAttemptDelay } from "../../src/webhooks/retry.ts";
import { seededRandom } from "../helpers/random.ts";


const DEFAULT = [10_000, 60_000, 300_000, 1_800_000, 3_600_000, 7_200_000, 9_000_000];

describe("nextAttemptDelay: schedule and exhaustion", () => {
  test("the default schedule is 10s, 1m, 5m, 30m, 1h, 2h, 2.5h: about six hours in all", () => {
    const cfg = loadConfig({});
    expect(cfg.CRM_WEBHOOK_RETRY_SCHEDULE).toEqual(DEFAULT);
    const total = DEFAULT.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(5.5 * 3_600_000);
    expect(total).toBeLessThanOrEqual(6.5 * 3_600_000);
  });

  test("CRM_WEBHOOK_RETRY_SCHEDULE parses compressed schedules like 1s,1s and 250ms,2.5h", () => {
    expect(loadConfig({ CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s" }).CRM_WEBHOOK_RETRY_SCHEDULE).toEqual([1000, 1000]);
    expect(loadConfig({ CRM_WEBHOOK_RETRY_SCHEDULE: "250ms, 2.5h" }).CRM_WEBHOOK_RETRY_SCHEDULE).toEqual([250, 9_000_000]);
    expect(() => loadConfig({ CRM_WEBHOOK_RETRY_SCHEDULE: "soon" })).toThrow(/CRM_WEBHOOK_RETRY_SCHEDULE/);
  });

  test("attempt n (1-based) that fails waits about the n-th schedule entry", () => {
    for (let n = 1; n <= DEFAULT.length; n++) expect(nextAttemptDelay(DEFAULT, n, null, () => 0.5)).toBe(DEFAULT[n - 1]!);
  });

  for (const k of [0, 1, 2, 3, 7])
    test(`with ${k} schedule entries a delivery gets 1 + ${k} attempts, then is exhausted (null)`, () => {
      const schedule = DEFAULT.slice(0, k);
      let attempts = 1; // the first attempt is not a retry
      while (nextAttemptDelay(schedule, attempts, null) !== null) attempts++;
      expect(attempts).toBe(1 + k);
      expect(nextAttemptDelay(schedule, k + 1, null)).toBeNull();
      expect(nextAttemptDelay(schedule, k + 2, null)).toBeNull();
    });

  test("an exhausted delivery stays exhausted even when a 429 asked for Retry-After", () => {
    expect(nextAttemptDelay([1000, 1000], 3, 500)).toBeNull();
  });
});

describe("nextAttemptDelay: ±10 % jitter", () => {
  test("the extremes of the random source give 90 % and 110 % of the step", () => {
    expect(nextAttemptDelay([10_000], 1, null, () => 0)).toBe(9_000);
    expect(nextAttemptDelay([10_000], 1, null, () => 0.999999)).toBeLessThanOrEqual(11_000);
    expect(nextAttemptDelay([10_000], 1, null, () => 0.999999)).toBeGreaterThan(10_990);
  });

  test("every delay of 14,000 seeded draws lies within ±10 % of its step, and the draws spread over that band", () => {
    for (const step of DEFAULT) {
      const seen: number[] = [];
      const random = seededRandom(step);
      for (let i = 0; i < 2000; i++) {
        const d = nextAttemptDelay(DEFAULT, DEFAULT.indexOf(step) + 1, null, random)!;
        expect(d).toBeGreaterThanOrEqual(step * 0.9);
        expect(d).toBeLessThanOrEqual(step * 1.1);
        seen.push(d);
      }
      // Jitter is real: the draws cover most of the band, on both sides of the step.
      expect(Math.min(...seen)).toBeLessThan(step * 0.92);
      expect(Math.max(...seen)).toBeGreaterThan(step * 1.08);
      expect(new Set(seen).size).toBeGreaterThan(100);
    }
  });

  test("the default random source jitters too: 100 draws are not all the step itself", () => {
    const draws = Array.from({ length: 100 }, () => nextAttemptDelay([10_000], 1, null)!);
    expect(draws.every((d) => d >= 9_000 && d <= 11_000)).toBe(true);
    expect(new Set(draws).size).toBeGreaterThan(1);
  });

  test("delays are whole milliseconds", () => {
    for (let i = 0; i < 100; i++) expect(Number.isInteger(nextAttemptDelay([1234], 1, null))).toBe(true);
  });
});

describe("nextAttemptDelay: Retry-After of a 429", () => {
  test("a Retry-After shorter than the jittered step changes nothing", () => {
    expect(nextAttemptDelay([10_000], 1, 2_000, () => 0.5)).toBe(10_000);
    expect(nextAttemptDelay([10_000], 1, 2_000, () => 0)).toBe(9_000);
  });

  test("a Retry-After longer than the step is waited exactly that long, whatever the schedule says", () => {
    for (const r of [0, 0.5, 0.999]) {
      expect(nextAttemptDelay([10_000], 1, 15_000, () => r)).toBe(15_000);
      expect(nextAttemptDelay([1_000], 1, 3_000, () => r)).toBe(3_000);
      expect(nextAttemptDelay([1_000, 1_000], 2, 2_000, () => r)).toBe(2_000);
      expect(nextAttemptDelay([10_000], 1, 1_800_000, () => r)).toBe(1_800_000);
    }
  });

  test("a Retry-After beyond one hour counts as one hour", () => {
    expect(nextAttemptDelay([10_000], 1, 3_600_001, () => 0.5)).toBe(3_600_000);
    expect(nextAttemptDelay([60_000, 300_000], 2, 86_400_000, () => 0)).toBe(3_600_000);
  });

  test("a schedule step longer than one hour is not cut by a long Retry-After", () => {
    expect(nextAttemptDelay([9_000_000], 1, 86_400_000, () => 0.5)).toBe(9_000_000);
  });

  test("a Retry-After of zero or none keeps the plain jittered step", () => {
    expect(nextAttemptDelay([10_000], 1, 0, () => 0.5)).toBe(10_000);
    expect(nextAttemptDelay([10_000], 1, null, () => 0.5)).toBe(10_000);
  });
});
