import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES, sleep, startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer();
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const int = (h: string | null) => (h === null ? NaN : Number(h));

describe("rate-limit headers", () => {
  test("a fresh key's first request answers RateLimit-Limit 120 and RateLimit-Remaining 119", async () => {
    const key = await srv.newKey(ALL_SCOPES);
    const res = await srv.api("GET", "/ping", { key });
    expectStatus(res, 200);
    expect(res.headers.get("ratelimit-limit")).toBe("120");
    expect(res.headers.get("ratelimit-remaining")).toBe("119");
  });

  test("RateLimit-Reset is a whole number of seconds within the window", async () => {
    const key = await srv.newKey(ALL_SCOPES);
    const res = await srv.api("GET", "/ping", { key });
    const reset = res.headers.get("ratelimit-reset");
    expect(reset).toMatch(/^\d+$/);
    expect(int(reset)).toBeGreaterThanOrEqual(0);
    expect(int(reset)).toBeLessThanOrEqual(60);
  });

  test("the answers carry RateLimit-Policy and RateLimit in the IETF form", async () => {
    const key = await srv.newKey(ALL_SCOPES);
    const res = await srv.api("GET", "/ping", { key });
    expect(res.headers.get("ratelimit-policy")).toBe('"minute";q=120;w=60');
    const reset = res.headers.get("ratelimit-reset");
    expect(res.headers.get("ratelimit")).toBe(`"minute";r=119;t=${reset}`);
  });

  test("RateLimit-Remaining goes down by one per request", async () => {
    const key = await srv.newKey(ALL_SCOPES);
    const first = await srv.api("GET", "/ping", { key });
    const second = await srv.api("GET", "/ping", { key });
    expect(int(second.headers.get("ratelimit-remaining"))).toBe(int(first.headers.get("ratelimit-remaining")) - 1);
  });

  test("rate-limit headers are on error answers to requests with a valid key (404, 422, 403)", async () => {
    const key = await srv.newKey(["contacts:read"]);
    const answers = [
      await srv.api("GET", "/contacts/CR-999999", { key }),
      await srv.api("GET", "/contacts", { key, query: { limit: 0 } }),
      await srv.api("POST", "/contacts", { key, body: { firstName: "x" } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 422, 403]);
    answers.forEach((a, i) => {
      expect(a.headers.get("ratelimit-limit")).toBe("120");
      expect(a.headers.get("ratelimit-remaining")).toBe(String(119 - i));
      expect(a.headers.get("ratelimit-reset")).toMatch(/^\d+$/);
    });
  });

  test("keys are counted separately: a second key of the project starts full", async () => {
    const k1 = await srv.newKey(ALL_SCOPES);
    const k2 = await srv.newKey(ALL_SCOPES);
    for (let i = 0; i < 5; i++) await srv.api("GET", "/ping", { key: k1 });
    expect((await srv.api("GET", "/ping", { key: k2 })).headers.get("ratelimit-remaining")).toBe("119");
  });
});

describe("429 past the limit", () => {
  test("more than 120 requests at once on one key give 429 ERR_RATE_LIMITED with Retry-After", async () => {
    const key = await srv.newKey(ALL_SCOPES);
    const answers = await Promise.all(Array.from({ length: 130 }, () => srv.api("GET", "/ping", { key })));
    const ok = answers.filter((a) => a.status === 200).length;
    const limited = answers.filter((a) => a.status === 429);
    expect(ok).toBeGreaterThanOrEqual(120);
    expect(ok).toBeLessThanOrEqual(125); // refill is 2/s
    expect(limited.length).toBe(130 - ok);
    const one = limited[0];
    expectError(one, "ERR_RATE_LIMITED");
    expect(one.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(int(one.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(one.headers.get("ratelimit-remaining")).toBe("0");
  });

  test("a project's --rate-limit-per-minute sets the bucket: the request past it is 429", async () => {
    const p = await srv.newProject({ rateLimitPerMinute: 5 });
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await srv.api("GET", "/ping", { key: p.key }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers[0].headers.get("ratelimit-limit")).toBe("5");
    expect(answers[0].headers.get("ratelimit-remaining")).toBe("4");
    expect(answers[0].headers.get("ratelimit-policy")).toBe('"minute";q=5;w=60');
    expectError(answers[5], "ERR_RATE_LIMITED");
    // one token per 12 s comes back
    const retry = int(answers[5].headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(12);
  });

  test("a rate-limited key does not affect another key of the same project", async () => {
    const p = await srv.newProject({ rateLimitPerMinute: 2 });
    for (let i = 0; i < 3; i++) await srv.api("GET", "/ping", { key: p.key });
    expectStatus(await srv.api("GET", "/ping", { key: p.key }), 429);
    const other = await srv.newKey(ALL_SCOPES, p.id);
    expectStatus(await srv.api("GET", "/ping", { key: other }), 200);
  });

  test("POST /contacts has its own hourly bucket (--contact-creates-per-hour): the create past it is 429 while other requests pass", async () => {
    const p = await srv.newProject({ contactCreatesPerHour: 3 });
    const creates = [];
    for (let i = 0; i < 4; i++) creates.push(await srv.api("POST", "/contacts", { key: p.key, body: { firstName: `H${i}` } }));
    expect(creates.map((c) => c.status)).toEqual([201, 201, 201, 429]);
    expectError(creates[3], "ERR_RATE_LIMITED");
    expect(int(creates[3].headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expectStatus(await srv.api("GET", "/contacts", { key: p.key }), 200);
  });

  test("where two buckets apply, the headers describe the one with fewer tokens left", async () => {
    const p = await srv.newProject({ contactCreatesPerHour: 3 });
    const res = await srv.api("POST", "/contacts", { key: p.key, body: { firstName: "Two buckets" } });
    expectStatus(res, 201);
    expect(res.headers.get("ratelimit-limit")).toBe("3");
    expect(res.headers.get("ratelimit-remaining")).toBe("2");
    const ping = await srv.api("GET", "/ping", { key: p.key });
    expect(ping.headers.get("ratelimit-limit")).toBe("120");
    expect(ping.headers.get("ratelimit-remaining")).toBe("118");
  });

  test("a rejected request consumes nothing from the other bucket", async () => {
    const p = await srv.newProject({ contactCreatesPerHour: 1 });
    expectStatus(await srv.api("POST", "/contacts", { key: p.key, body: { firstName: "only" } }), 201);
    for (let i = 0; i < 3; i++) expectStatus(await srv.api("POST", "/contacts", { key: p.key, body: { firstName: "no" } }), 429);
    const ping = await srv.api("GET", "/ping", { key: p.key });
    // 1 create + this ping counted; the three refused creates not
    expect(int(ping.headers.get("ratelimit-remaining"))).toBe(118);
  });

  test("a rate-limit change made with the CLI applies within 2 seconds", async () => {
    const p = await srv.newProject();
    expect((await srv.api("GET", "/ping", { key: p.key })).headers.get("ratelimit-limit")).toBe("120");
    await srv.cli(["project", "update", p.id, "--rate-limit-per-minute", "10"]);
    await sleep(2200);
    const key = await srv.newKey(ALL_SCOPES, p.id);
    expect((await srv.api("GET", "/ping", { key })).headers.get("ratelimit-limit")).toBe("10");
  });
});
