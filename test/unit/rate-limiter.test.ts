/**
 * The per-key limiter the authenticate middleware consults (docs/api.md §6, §3), driven by an
 * injected clock: every request takes from the key's minute bucket, POST /contacts also from
 * its hourly create bucket; capacities follow the project's settings; a rejected request
 * consumes nothing; failed authentications are counted per client address. The headers are
 * the interface's trio plus the IETF pair.
 */
import { describe, expect, test } from "bun:test";
import type { Caller } from "../../src/auth/keys.ts";
import { RateLimiter, rateLimitHeaders } from "../../src/auth/rate-limiter.ts";

const T0 = 1_767_225_600_000;

function clock() {
  let now = T0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const caller = (over: Partial<Caller> = {}): Caller => ({
  keyId: "key_a",
  projectId: "prj_a",
  scopes: [],
  rateLimitPerMinute: 120,
  contactCreatesPerHour: 600,
  batchItemsPerHour: 60_000,
  ...over,
});

describe("RateLimiter.check: the key's buckets", () => {
  test("a fresh key of a default project answers its first request with limit 120, remaining 119", () => {
    const limiter = new RateLimiter(clock().now);
    expect(limiter.check(caller(), false)).toEqual({
      allowed: true,
      name: "minute",
      limit: 120,
      remaining: 119,
      resetSeconds: 1,
      retryAfterSeconds: 0,
    });
  });

  test("the 121st request of a minute is refused, and a token is back after half a second (2/s)", () => {
    const c = clock();
    const limiter = new RateLimiter(c.now);
    for (let i = 0; i < 120; i++) expect(limiter.check(caller(), false).allowed).toBe(true);
    expect(limiter.check(caller(), false)).toMatchObject({ allowed: false, name: "minute", remaining: 0, retryAfterSeconds: 1 });
    c.advance(500);
    expect(limiter.check(caller(), false)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test("each key has its own buckets", () => {
    const limiter = new RateLimiter(clock().now);
    for (let i = 0; i < 3; i++) limiter.check(caller({ keyId: "key_a", rateLimitPerMinute: 3 }), false);
    expect(limiter.check(caller({ keyId: "key_a", rateLimitPerMinute: 3 }), false).allowed).toBe(false);
    expect(limiter.check(caller({ keyId: "key_b", rateLimitPerMinute: 3 }), false)).toMatchObject({ allowed: true, remaining: 2 });
  });

  test("a key's buckets are kept between requests: remaining counts down", () => {
    const limiter = new RateLimiter(clock().now);
    expect(limiter.check(caller(), false).remaining).toBe(119);
    expect(limiter.check(caller(), false).remaining).toBe(118);
    expect(limiter.check(caller(), true).remaining).toBe(117);
  });

  test("POST /contacts also takes from the hourly create bucket, which the headers then describe when it is tighter", () => {
    const limiter = new RateLimiter(clock().now);
    const small = caller({ contactCreatesPerHour: 2 });
    expect(limiter.check(small, true)).toMatchObject({ allowed: true, name: "contact-creates", limit: 2, remaining: 1, resetSeconds: 1800 });
    expect(limiter.check(small, true)).toMatchObject({ allowed: true, name: "contact-creates", remaining: 0 });
    expect(limiter.check(small, true)).toMatchObject({ allowed: false, name: "contact-creates", retryAfterSeconds: 1800 });
    // Other requests only take from the minute bucket: still allowed, and it is the one described.
    expect(limiter.check(small, false)).toMatchObject({ allowed: true, name: "minute", limit: 120, remaining: 117 });
  });

  test("a request that is not a contact create never touches the create bucket", () => {
    const limiter = new RateLimiter(clock().now);
    const small = caller({ contactCreatesPerHour: 1 });
    for (let i = 0; i < 5; i++) expect(limiter.check(small, false)).toMatchObject({ allowed: true, name: "minute" });
    expect(limiter.check(small, true)).toMatchObject({ allowed: true, name: "contact-creates", remaining: 0 });
  });

  test("a refused create consumes nothing from the minute bucket", () => {
    const limiter = new RateLimiter(clock().now);
    const small = caller({ contactCreatesPerHour: 1 });
    limiter.check(small, true);
    for (let i = 0; i < 5; i++) expect(limiter.check(small, true).allowed).toBe(false);
    expect(limiter.check(small, false).remaining).toBe(118);
  });

  test("capacities follow the project's settings, keeping the tokens already spent", () => {
    const limiter = new RateLimiter(clock().now);
    for (let i = 0; i < 10; i++) limiter.check(caller(), false);
    expect(limiter.check(caller({ rateLimitPerMinute: 1000 }), false)).toMatchObject({ limit: 1000, remaining: 989 });
    // 11 spent: a capacity of 12 leaves one token, then none.
    expect(limiter.check(caller({ rateLimitPerMinute: 12 }), false)).toMatchObject({ allowed: true, limit: 12, remaining: 0 });
    expect(limiter.check(caller({ rateLimitPerMinute: 12 }), false)).toMatchObject({ allowed: false, limit: 12, remaining: 0 });
    expect(limiter.check(caller({ contactCreatesPerHour: 5 }), true)).toMatchObject({ allowed: true, name: "contact-creates", limit: 5, remaining: 4 });
  });

  test("refused requests are counted, allowed ones are not", () => {
    const limiter = new RateLimiter(clock().now);
    const tiny = caller({ rateLimitPerMinute: 1 });
    limiter.check(tiny, false);
    expect(limiter.rejected).toBe(0);
    limiter.check(tiny, false);
    limiter.check(tiny, false);
    expect(limiter.rejected).toBe(2);
  });
});

describe("RateLimiter: failed authentications per client address (docs/api.md §6)", () => {
  test("30 failures a minute are answered 401 (true), past that 429 (false) until the minute ends", () => {
    const c = clock();
    const limiter = new RateLimiter(c.now);
    for (let i = 0; i < 30; i++) expect(limiter.failedAuth("203.0.113.1")).toBe(true);
    expect(limiter.failedAuth("203.0.113.1")).toBe(false);
    expect(limiter.failedAuth("203.0.113.2")).toBe(true);
    c.advance(20_000);
    expect(limiter.failedAuthRetryAfter("203.0.113.1")).toBe(40);
    c.advance(40_000);
    expect(limiter.failedAuth("203.0.113.1")).toBe(true);
  });

  test("Retry-After of an address that never failed is 0", () => {
    expect(new RateLimiter(clock().now).failedAuthRetryAfter("203.0.113.3")).toBe(0);
  });
});

describe("RateLimiter.sweep", () => {
  /** The buckets remembered: sweep exists to bound this (docs/api.md §7). */
  const keys = (limiter: RateLimiter) => (limiter as unknown as { perKey: Map<string, unknown> }).perKey.size;

  test("buckets that are full again are dropped; a key with spent tokens keeps them", async () => {
    const c = clock();
    const limiter = new RateLimiter(c.now);
    limiter.check(caller({ keyId: "key_idle" }), false);
    limiter.check(caller({ keyId: "key_busy", rateLimitPerMinute: 2 }), false);
    limiter.check(caller({ keyId: "key_busy", rateLimitPerMinute: 2 }), false);
    c.advance(30_000); // key_idle (120/min) is full again; key_busy (2/min) has one token back of two.
    await limiter.sweep();
    expect(keys(limiter)).toBe(1);
    expect(limiter.check(caller({ keyId: "key_busy", rateLimitPerMinute: 2 }), false)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test("a key whose create bucket is still refilling is kept even when its minute bucket is full", async () => {
    const c = clock();
    const limiter = new RateLimiter(c.now);
    limiter.check(caller({ contactCreatesPerHour: 2 }), true);
    c.advance(60_000); // the minute bucket is full again; the create bucket (1 per 30 min) is not
    await limiter.sweep();
    expect(keys(limiter)).toBe(1);
    expect(limiter.check(caller({ contactCreatesPerHour: 2 }), true)).toMatchObject({ name: "contact-creates", remaining: 0 });
    c.advance(3_600_000);
    await limiter.sweep();
    expect(keys(limiter)).toBe(0);
  });

  test("a key whose minute bucket is still refilling is kept even when its create bucket is full", async () => {
    const c = clock();
    const limiter = new RateLimiter(c.now);
    for (let i = 0; i < 60; i++) limiter.check(caller(), false);
    c.advance(1_000);
    await limiter.sweep();
    expect(keys(limiter)).toBe(1);
  });

  test("expired failure windows are dropped too", async () => {
    const c = clock();
    const limiter = new RateLimiter(c.now);
    limiter.failedAuth("203.0.113.4");
    c.advance(59_999);
    await limiter.sweep();
    expect(limiter.failures.size).toBe(1);
    c.advance(1);
    await limiter.sweep();
    expect(limiter.failures.size).toBe(0);
  });
});

describe("rateLimitHeaders: the interface's trio and the IETF pair (docs/api.md §6)", () => {
  test("the minute bucket: a 60 s window", () => {
    expect(rateLimitHeaders({ allowed: true, name: "minute", limit: 120, remaining: 119, resetSeconds: 1, retryAfterSeconds: 0 })).toEqual({
      "RateLimit-Limit": "120",
      "RateLimit-Remaining": "119",
      "RateLimit-Reset": "1",
      "RateLimit-Policy": '"minute";q=120;w=60',
      RateLimit: '"minute";r=119;t=1',
    });
  });

  test("the hourly create bucket: a 3600 s window", () => {
    expect(rateLimitHeaders({ allowed: false, name: "contact-creates", limit: 600, remaining: 0, resetSeconds: 3600, retryAfterSeconds: 6 })).toEqual({
      "RateLimit-Limit": "600",
      "RateLimit-Remaining": "0",
      "RateLimit-Reset": "3600",
      "RateLimit-Policy": '"contact-creates";q=600;w=3600',
      RateLimit: '"contact-creates";r=0;t=3600',
    });
  });
});
