import { describe, expect, test } from "bun:test";
import { consume, FailureWindow, TokenBucket } from "../../src/auth/limiter.ts";

describe("token buckets (decisions §9)", () => {
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

describe("failed authentications per address (decisions §12)", () => {
  test("30 failures a minute are allowed, the 31st is refused until the minute ends", () => {
    const w = new FailureWindow(30);
    for (let i = 0; i < 30; i++) expect(w.fail("1.2.3.4", 1000)).toBe(true);
    expect(w.fail("1.2.3.4", 2000)).toBe(false);
    expect(w.fail("5.6.7.8", 2000)).toBe(true);
    expect(w.secondsLeft("1.2.3.4", 2000)).toBe(59);
    expect(w.fail("1.2.3.4", 61_000)).toBe(true);
  });
});

describe("FailureWindow memory (decisions §16)", () => {
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
