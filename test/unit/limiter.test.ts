import { describe, expect, test } from "bun:test";
import { consume, FailureWindow, TokenBucket } from "../../src/auth/limiter.ts";

describe("token buckets (docs/api.md §6)", () => {
  test("a fresh 120/min bucket answers its first request with 119 remaining", () => {
    const b = new TokenBucket(120, 60_000, 0);
    const d = consume([{ name: "minute", bucket: b }], 0);
    expect(d).toMatchObject({ allowed: true, limit: 120, remaining: 119 });
    expect(d.resetSeconds).toBe(1);
  });

  test("the bucket refills at capacity per window (2 per second for 120/min)", () => {
    const b = new TokenBucket(120, 60_000, 0);
    for (let i = 0; i < 120; i++) expect(consume([{ name: "m", bucket: b }], 0).allowed).toBe(true);
    expect(consume([{ name: "m", bucket: b }], 0).allowed).toBe(false);
    expect(consume([{ name: "m", bucket: b }], 500).allowed).toBe(true);
    expect(consume([{ name: "m", bucket: b }], 500).allowed).toBe(false);
  });

  test("a refused request consumes nothing from any bucket", () => {
    const minute = new TokenBucket(120, 60_000, 0);
    const creates = new TokenBucket(1, 3_600_000, 0);
    consume([{ name: "minute", bucket: minute }, { name: "creates", bucket: creates }], 0);
    const refused = consume([{ name: "minute", bucket: minute }, { name: "creates", bucket: creates }], 0);
    expect(refused.allowed).toBe(false);
    expect(refused.name).toBe("creates");
    expect(Math.floor(minute.level(0))).toBe(119);
  });

  test("Retry-After is the seconds until one token is back in the refusing bucket", () => {
    const creates = new TokenBucket(600, 3_600_000, 0);
    for (let i = 0; i < 600; i++) creates.take(0);
    const d = consume([{ name: "creates", bucket: creates }], 0);
    expect(d.retryAfterSeconds).toBe(6);
  });

  test("the headers describe the bucket with fewer tokens left", () => {
    const minute = new TokenBucket(120, 60_000, 0);
    const creates = new TokenBucket(3, 3_600_000, 0);
    const d = consume([{ name: "minute", bucket: minute }, { name: "creates", bucket: creates }], 0);
    expect(d).toMatchObject({ name: "creates", limit: 3, remaining: 2 });
  });

  test("resizing keeps the tokens already spent", () => {
    const b = new TokenBucket(10, 60_000, 0);
    for (let i = 0; i < 4; i++) b.take(0);
    b.resize(100, 0);
    expect(Math.floor(b.level(0))).toBe(96);
  });
});

describe("failed authentications per address (docs/api.md §3)", () => {
  test("30 failures a minute are allowed, the 31st is refused until the minute ends", () => {
    const w = new FailureWindow(30);
    for (let i = 0; i < 30; i++) expect(w.fail("1.2.3.4", 1000)).toBe(true);
    expect(w.fail("1.2.3.4", 2000)).toBe(false);
    expect(w.fail("5.6.7.8", 2000)).toBe(true);
    expect(w.secondsLeft("1.2.3.4", 2000)).toBe(59);
    expect(w.fail("1.2.3.4", 61_000)).toBe(true);
  });
});

describe("FailureWindow memory (docs/api.md §7)", () => {
  test("it never remembers more addresses than its bound, however many fail", () => {
    const w = new FailureWindow(30, 60_000, 100);
    for (let i = 0; i < 1000; i++) w.fail(`2001:db8::${i.toString(16)}`, 1_000 + i);
    expect(w.size).toBe(100);
  });

  test("an address that keeps failing keeps its count while new addresses push out the least recent", () => {
    const w = new FailureWindow(3, 60_000, 10);
    for (let i = 0; i < 4; i++) w.fail("203.0.113.9", 1_000);
    for (let i = 0; i < 9; i++) w.fail(`198.51.100.${i}`, 1_001 + i);
    w.fail("203.0.113.9", 1_010);
    for (let i = 9; i < 14; i++) w.fail(`198.51.100.${i}`, 1_011 + i);
    expect(w.size).toBe(10);
    expect(w.blocked("203.0.113.9", 1_030)).toBe(true);
  });
});

describe("token bucket arithmetic: Retry-After and RateLimit-Reset (docs/api.md §6)", () => {
  test("RateLimit-Reset is the seconds until the bucket is full again: 10 spent of 120/min is 5 s", () => {
    const b = new TokenBucket(120, 60_000, 0);
    for (let i = 0; i < 9; i++) b.take(0);
    const d = consume([{ name: "minute", bucket: b }], 0);
    expect(d).toMatchObject({ allowed: true, remaining: 110, resetSeconds: 5 });
  });

  test("RateLimit-Reset rounds a part of a second up, and is 0 for a full bucket", () => {
    const b = new TokenBucket(600, 3_600_000, 0);
    b.take(0);
    expect(b.secondsUntilFull(0)).toBe(6);
    expect(b.secondsUntilFull(5_999)).toBe(1);
    expect(b.secondsUntilFull(6_000)).toBe(0);
    expect(new TokenBucket(120, 60_000, 0).secondsUntilFull(0)).toBe(0);
  });

  test("Retry-After counts only the part of a token still missing: half a token of 600/h is 3 s", () => {
    const creates = new TokenBucket(600, 3_600_000, 0);
    for (let i = 0; i < 600; i++) creates.take(0);
    const d = consume([{ name: "contact-creates", bucket: creates }], 3_000);
    expect(d).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 3 });
  });

  test("a bucket that holds a whole token needs no wait", () => {
    const b = new TokenBucket(120, 60_000, 0);
    expect(b.secondsUntilToken(0)).toBe(0);
    b.take(0);
    expect(b.secondsUntilToken(0)).toBe(0);
  });

  test("Retry-After of a refusal is never below 1 second, even with most of a token back", () => {
    const b = new TokenBucket(120, 60_000, 0);
    for (let i = 0; i < 120; i++) b.take(0);
    const d = consume([{ name: "minute", bucket: b }], 499);
    expect(d).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  test("a refusal reports the refusing bucket's limit and the seconds until it is full", () => {
    const minute = new TokenBucket(120, 60_000, 0);
    const creates = new TokenBucket(2, 3_600_000, 0);
    for (let i = 0; i < 2; i++) consume([{ name: "minute", bucket: minute }, { name: "contact-creates", bucket: creates }], 0);
    const d = consume([{ name: "minute", bucket: minute }, { name: "contact-creates", bucket: creates }], 0);
    expect(d).toEqual({ allowed: false, name: "contact-creates", limit: 2, remaining: 0, resetSeconds: 3600, retryAfterSeconds: 1800 });
  });

  test("a bucket never refills past its capacity however long it rests", () => {
    const b = new TokenBucket(120, 60_000, 0);
    b.take(0);
    expect(b.level(3_600_000)).toBe(120);
  });

  test("the headers describe the bucket with fewer tokens left, whichever order the buckets come in", () => {
    const minute = new TokenBucket(3, 60_000, 0);
    const creates = new TokenBucket(600, 3_600_000, 0);
    const d = consume([{ name: "minute", bucket: minute }, { name: "contact-creates", bucket: creates }], 0);
    expect(d).toMatchObject({ allowed: true, name: "minute", limit: 3, remaining: 2, resetSeconds: 20 });
  });

  test("shrinking a bucket keeps the tokens spent and never goes below empty", () => {
    const b = new TokenBucket(120, 60_000, 0);
    for (let i = 0; i < 100; i++) b.take(0);
    b.resize(150, 0);
    expect(b.level(0)).toBe(50);
    b.resize(60, 0);
    expect(b.level(0)).toBe(0);
    expect(b.capacity).toBe(60);
  });
});

describe("failed-authentication windows at real clock values (docs/api.md §3)", () => {
  // Epoch milliseconds, as the server's clock gives them: a window's start is far from 0.
  const T0 = 1_767_225_600_000;

  test("the 30 failures are counted within one minute from the first, then a new window starts", () => {
    const w = new FailureWindow(30);
    for (let i = 0; i < 30; i++) expect(w.fail("198.51.100.1", T0 + i)).toBe(true);
    expect(w.fail("198.51.100.1", T0 + 59_999)).toBe(false);
    expect(w.blocked("198.51.100.1", T0 + 59_999)).toBe(true);
    expect(w.secondsLeft("198.51.100.1", T0 + 59_999)).toBe(1);
    expect(w.blocked("198.51.100.1", T0 + 60_000)).toBe(false);
    expect(w.fail("198.51.100.1", T0 + 60_000)).toBe(true);
  });

  test("an address is blocked once it has used its failures, not before, and only its own", () => {
    const w = new FailureWindow(3);
    expect(w.blocked("198.51.100.2", T0)).toBe(false);
    w.fail("198.51.100.2", T0);
    w.fail("198.51.100.2", T0 + 1);
    expect(w.blocked("198.51.100.2", T0 + 2)).toBe(false);
    w.fail("198.51.100.2", T0 + 2);
    expect(w.blocked("198.51.100.2", T0 + 3)).toBe(true);
    expect(w.blocked("198.51.100.3", T0 + 3)).toBe(false);
  });

  test("secondsLeft is the seconds until the window ends, rounded up, at least 1; 0 for an unknown address", () => {
    const w = new FailureWindow(1);
    w.fail("198.51.100.4", T0);
    expect(w.secondsLeft("198.51.100.4", T0)).toBe(60);
    expect(w.secondsLeft("198.51.100.4", T0 + 500)).toBe(60);
    expect(w.secondsLeft("198.51.100.4", T0 + 1_000)).toBe(59);
    expect(w.secondsLeft("198.51.100.4", T0 + 60_000)).toBe(1);
    expect(w.secondsLeft("198.51.100.9", T0)).toBe(0);
  });

  test("sweep forgets the windows that ended, at their end exactly, and keeps the others", () => {
    const w = new FailureWindow(30);
    w.fail("198.51.100.5", T0);
    w.fail("198.51.100.6", T0 + 30_000);
    w.sweep(T0 + 59_999);
    expect(w.size).toBe(2);
    w.sweep(T0 + 60_000);
    expect(w.size).toBe(1);
    expect(w.secondsLeft("198.51.100.5", T0 + 60_000)).toBe(0);
    expect(w.secondsLeft("198.51.100.6", T0 + 60_000)).toBe(30);
    w.sweep(T0 + 90_000);
    expect(w.size).toBe(0);
  });
});
