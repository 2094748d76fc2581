/**
 * The web-form limiter (docs/api.md §6, §7): 10 a minute per address and form, 60 a minute
 * per address, and never more than a fixed number of buckets, whatever it is sent. Time is
 * a number the test moves.
 */
import { describe, expect, test } from "bun:test";
import { MAX_LIMITER_ENTRIES, SubmissionLimiter } from "../../src/forms/limiter.ts";

function limiter(maxEntries?: number) {
  const clock = { now: 1_000_000 };
  const l = new SubmissionLimiter(() => clock.now, 10, 60, maxEntries);
  return { l, clock };
}

describe("SubmissionLimiter", () => {
  test("10 a minute per address and form, then refused with a Retry-After", () => {
    const { l } = limiter();
    for (let i = 0; i < 10; i++) expect(l.check("198.51.100.1", "frm_a").allowed).toBe(true);
    const refused = l.check("198.51.100.1", "frm_a");
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(l.check("198.51.100.2", "frm_a").allowed).toBe(true);
  });

  test("60 a minute per address across forms", () => {
    const { l } = limiter();
    for (let i = 0; i < 60; i++) expect(l.check("198.51.100.1", `frm_${i % 7}`).allowed).toBe(true);
    expect(l.check("198.51.100.1", "frm_new").allowed).toBe(false);
  });

  test(`it never holds more than ${MAX_LIMITER_ENTRIES.toLocaleString("en-US")} buckets per map, however many addresses and forms it is sent`, () => {
    const { l } = limiter();
    for (let i = 0; i < MAX_LIMITER_ENTRIES * 3; i++) l.check(`2001:db8::${i.toString(16)}`, `frm_${i}`);
    expect(l.size.perForm).toBeLessThanOrEqual(MAX_LIMITER_ENTRIES);
    expect(l.size.perAddress).toBeLessThanOrEqual(MAX_LIMITER_ENTRIES);
  });

  test("when full, the bucket used least recently goes: an address in active use keeps its count", () => {
    const { l } = limiter(3);
    for (let i = 0; i < 10; i++) l.check("198.51.100.1", "frm_a");
    // Two other clients, then the first again (it is now the most recent), then one more client.
    l.check("198.51.100.2", "frm_a");
    l.check("198.51.100.3", "frm_a");
    expect(l.check("198.51.100.1", "frm_a").allowed).toBe(false);
    l.check("198.51.100.4", "frm_a");
    expect(l.size).toEqual({ perForm: 3, perAddress: 3 });
    expect(l.check("198.51.100.1", "frm_a").allowed).toBe(false);
  });

  test("buckets that are full again are dropped after a minute", () => {
    const { l, clock } = limiter();
    for (let i = 0; i < 100; i++) l.check(`198.51.100.${i}`, "frm_a");
    expect(l.size.perAddress).toBe(100);
    clock.now += 61_000;
    l.check("203.0.113.1", "frm_a");
    expect(l.size).toEqual({ perForm: 1, perAddress: 1 });
  });
});
