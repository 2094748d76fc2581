/**
 * Rate limits (docs/api.md §6): per-key token buckets, 120 a minute for
 * every request plus 600 an hour for POST /contacts, both per-project settings. The real
 * service runs in this process on a ManualClock: buckets refill only when the test moves
 * time, so every RateLimit-Remaining, RateLimit-Reset and Retry-After below is exact, never
 * a race with the refill (120/min refills one token every 0.5 s of wall time).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../helpers/clock.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startInProcess, type InProcessServer } from "../helpers/in-process.ts";
import { ALL_SCOPES, type ApiResponse } from "../helpers/server.ts";

const clock = new ManualClock();
let server: InProcessServer;

beforeAll(async () => {
  server = await startInProcess({ overrides: { clock } });
}, 30_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

const newKey = async (projectId: string, scopes = ALL_SCOPES) =>
  (await server.cli(["key", "create", "--project", projectId, "--scopes", scopes.join(",")])).key as string;

/** The five rate-limit headers of one answer. */
const limitHeaders = (res: ApiResponse) => ({
  limit: res.headers.get("ratelimit-limit"),
  remaining: res.headers.get("ratelimit-remaining"),
  reset: res.headers.get("ratelimit-reset"),
  policy: res.headers.get("ratelimit-policy"),
  ietf: res.headers.get("ratelimit"),
});

const minuteHeaders = (limit: number, remaining: number, reset: number) => ({
  limit: String(limit),
  remaining: String(remaining),
  reset: String(reset),
  policy: `"minute";q=${limit};w=60`,
  ietf: `"minute";r=${remaining};t=${reset}`,
});

const createHeaders = (limit: number, remaining: number, reset: number) => ({
  limit: String(limit),
  remaining: String(remaining),
  reset: String(reset),
  policy: `"contact-creates";q=${limit};w=3600`,
  ietf: `"contact-creates";r=${remaining};t=${reset}`,
});

describe("rate-limit headers", () => {
  test("a fresh key's first answer: RateLimit-Limit 120, Remaining 119, Reset 1 (its one missing token is back in 0.5 s), and the IETF pair", async () => {
    const p = await server.newProject();
    const res = await p.api("GET", "/ping");
    expectStatus(res, 200);
    expect(limitHeaders(res)).toEqual(minuteHeaders(120, 119, 1));
  });

  test("each request takes one token: Remaining counts down from 119 to 0 and Reset is the seconds until the bucket is full again", async () => {
    const p = await server.newProject();
    const seen: [string | null, string | null][] = [];
    for (let i = 0; i < 120; i++) {
      const res = await p.api("GET", "/ping");
      expectStatus(res, 200);
      seen.push([res.headers.get("ratelimit-remaining"), res.headers.get("ratelimit-reset")]);
    }
    // After k requests k tokens are missing, back at 2 a second: ceil(k / 2) seconds.
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => [String(119 - i), String(Math.ceil((i + 1) / 2))]));
  });

  test("rate-limit headers are on error answers to requests with a valid key (404, 422, 403)", async () => {
    const p = await server.newProject();
    const key = await newKey(p.id, ["contacts:read"]);
    const answers = [
      await p.api("GET", "/contacts/CR-999999", { key }),
      await p.api("GET", "/contacts", { key, query: { limit: 0 } }),
      await p.api("POST", "/contacts", { key, body: { firstName: "x" } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 422, 403]);
    expect(answers.map(limitHeaders)).toEqual([minuteHeaders(120, 119, 1), minuteHeaders(120, 118, 1), minuteHeaders(120, 117, 2)]);
  });

  test("keys are counted separately: a second key of the project starts full", async () => {
    const p = await server.newProject();
    const other = await newKey(p.id);
    for (let i = 0; i < 5; i++) expectStatus(await p.api("GET", "/ping"), 200);
    expect(limitHeaders(await p.api("GET", "/ping", { key: other }))).toEqual(minuteHeaders(120, 119, 1));
  });
});

describe("429 past the limit", () => {
  test("130 requests at once on one key: exactly 120 are answered, 10 are 429 ERR_RATE_LIMITED with Retry-After 1, Remaining 0 and Reset 60", async () => {
    const p = await server.newProject();
    const answers = await Promise.all(Array.from({ length: 130 }, () => p.api("GET", "/ping")));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(120);
    const limited = answers.filter((a) => a.status !== 200);
    expect(limited).toHaveLength(10);
    for (const a of limited) {
      expectError(a, "ERR_RATE_LIMITED");
      // One token back at 2 a second: 0.5 s, rounded up to whole seconds.
      expect(a.headers.get("retry-after")).toBe("1");
      expect(limitHeaders(a)).toEqual(minuteHeaders(120, 0, 60));
    }
    expect(answers.filter((a) => a.status === 200).map((a) => Number(a.headers.get("ratelimit-remaining"))).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 120 }, (_, i) => i),
    );
  });

  test("a refused request consumes nothing; one token is back after half a second, the whole bucket after a minute", async () => {
    const p = await server.newProject();
    await Promise.all(Array.from({ length: 120 }, () => p.api("GET", "/ping")));
    for (let i = 0; i < 3; i++) expectStatus(await p.api("GET", "/ping"), 429);
    clock.advance(499);
    expectStatus(await p.api("GET", "/ping"), 429);
    // (Two more milliseconds rather than one: the refill is floating-point.)
    clock.advance(2);
    const back = await p.api("GET", "/ping");
    expectStatus(back, 200);
    expect(limitHeaders(back)).toEqual(minuteHeaders(120, 0, 60));
    clock.advance(60_000);
    expect(limitHeaders(await p.api("GET", "/ping"))).toEqual(minuteHeaders(120, 119, 1));
  });

  test("a project's --rate-limit-per-minute sets the bucket: 5 a minute, the 6th is 429 with Retry-After 12 (one token per 12 s)", async () => {
    const p = await server.newProject({ rateLimitPerMinute: 5 });
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 6; i++) answers.push(await p.api("GET", "/ping"));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers.slice(0, 5).map(limitHeaders)).toEqual([4, 3, 2, 1, 0].map((r) => minuteHeaders(5, r, (5 - r) * 12)));
    expectError(answers[5]!, "ERR_RATE_LIMITED");
    expect(answers[5]!.headers.get("retry-after")).toBe("12");
    expect(limitHeaders(answers[5]!)).toEqual(minuteHeaders(5, 0, 60));
  });

  test("a rate-limited key does not affect another key of the same project", async () => {
    const p = await server.newProject({ rateLimitPerMinute: 2 });
    expectStatus(await p.api("GET", "/ping"), 200);
    expectStatus(await p.api("GET", "/ping"), 200);
    expectStatus(await p.api("GET", "/ping"), 429);
    expect(limitHeaders(await p.api("GET", "/ping", { key: await newKey(p.id) }))).toEqual(minuteHeaders(2, 1, 30));
  });

  test("a rate-limit change made with the CLI applies within 2 seconds, to the keys already in use too", async () => {
    const p = await server.newProject();
    expect(limitHeaders(await p.api("GET", "/ping"))).toEqual(minuteHeaders(120, 119, 1));
    await server.cli(["project", "update", p.id, "--rate-limit-per-minute", "10"]);
    clock.advance(2_000);
    // Tokens spent stay spent across a resize; the one spent was refilled in those 2 s, so 9 remain after this one.
    expect(limitHeaders(await p.api("GET", "/ping"))).toEqual(minuteHeaders(10, 9, 6));
  });
});

describe("the hourly bucket of POST /contacts", () => {
  test("the default 600 creates an hour: 600 succeed, the 601st is 429 ERR_RATE_LIMITED with Retry-After 6 (3600 s / 600) while other requests pass", async () => {
    // A minute bucket far larger than the hourly one: the create bucket is the only one that can refuse.
    const p = await server.newProject({ rateLimitPerMinute: 1_000_000 });
    const answers: ApiResponse[] = [];
    const batch = 20;
    for (let i = 0; i < 600; i += batch) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: batch }, (_, j) => p.api("POST", "/contacts", { body: { firstName: "Hourly", email: `hourly-${i + j}@example.com` } })),
        )),
      );
    }
    expect(answers.filter((a) => a.status !== 201).map((a) => `${a.status} ${a.text.slice(0, 200)}`)).toEqual([]);
    // The headers describe the bucket with fewer tokens left: the hourly one. After k creates,
    // k tokens are missing, back one per 6 s.
    const byRemaining = answers.map(limitHeaders).sort((a, b) => Number(b.remaining) - Number(a.remaining));
    expect(byRemaining).toEqual(Array.from({ length: 600 }, (_, k) => createHeaders(600, 599 - k, 6 * (k + 1))));

    const refused = await p.api("POST", "/contacts", { body: { firstName: "Hourly", email: "hourly-600@example.com" } });
    expectError(refused, "ERR_RATE_LIMITED");
    expect(refused.headers.get("retry-after")).toBe("6");
    expect(limitHeaders(refused)).toEqual(createHeaders(600, 0, 3600));
    // Other requests take from the minute bucket only (600 creates and this GET; the refused create took nothing).
    const list = await p.api("GET", "/contacts", { query: { email: "hourly-0@example.com" } });
    expectStatus(list, 200);
    expect(list.json.data).toHaveLength(1);
    expect(limitHeaders(list)).toEqual(minuteHeaders(1_000_000, 1_000_000 - 601, 1));

    clock.advance(5_999);
    expectStatus(await p.api("POST", "/contacts", { body: { firstName: "Hourly", email: "hourly-600@example.com" } }), 429);
    clock.advance(2);
    const back = await p.api("POST", "/contacts", { body: { firstName: "Hourly", email: "hourly-600@example.com" } });
    expectStatus(back, 201);
    expect(limitHeaders(back)).toEqual(createHeaders(600, 0, 3600));
  }, 60_000);

  test("--contact-creates-per-hour sets it: the create past it is 429 with Retry-After 1200 (3600 s / 3), and the refused creates consume nothing", async () => {
    const p = await server.newProject({ contactCreatesPerHour: 3 });
    const creates: ApiResponse[] = [];
    for (let i = 0; i < 4; i++) creates.push(await p.api("POST", "/contacts", { body: { firstName: `H${i}` } }));
    expect(creates.map((c) => c.status)).toEqual([201, 201, 201, 429]);
    expect(creates.slice(0, 3).map(limitHeaders)).toEqual([createHeaders(3, 2, 1200), createHeaders(3, 1, 2400), createHeaders(3, 0, 3600)]);
    expectError(creates[3]!, "ERR_RATE_LIMITED");
    expect(creates[3]!.headers.get("retry-after")).toBe("1200");
    expect(limitHeaders(creates[3]!)).toEqual(createHeaders(3, 0, 3600));
    for (let i = 0; i < 3; i++) expectStatus(await p.api("POST", "/contacts", { body: { firstName: "no" } }), 429);
    // 3 creates and this GET counted in the minute bucket; the four refused creates not.
    const list = await p.api("GET", "/contacts");
    expectStatus(list, 200);
    expect(limitHeaders(list)).toEqual(minuteHeaders(120, 116, 2));
  });

  test("where both buckets apply, the headers describe the one with fewer tokens left", async () => {
    const p = await server.newProject({ contactCreatesPerHour: 3 });
    // The minute bucket, 120: a create leaves 119 there and 2 in the hourly one.
    expect(limitHeaders(await p.api("POST", "/contacts", { body: { firstName: "Two buckets" } }))).toEqual(createHeaders(3, 2, 1200));
    // Without the create bucket: the minute one.
    expect(limitHeaders(await p.api("GET", "/ping"))).toEqual(minuteHeaders(120, 118, 1));

    // A minute bucket of 2 is emptier than an hourly one of 3 after one create.
    const q = await server.newProject({ rateLimitPerMinute: 2, contactCreatesPerHour: 3 });
    expect(limitHeaders(await q.api("POST", "/contacts", { body: { firstName: "Minute is tighter" } }))).toEqual(minuteHeaders(2, 1, 30));
  });
});
