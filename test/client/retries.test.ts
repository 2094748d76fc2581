/**
 * The typed client's retries and idempotency keys (docs/api.md §4, §8, §16.3):
 * 429s provoked on the real server by a project's rate limit, a lost answer replayed by
 * the real server's Idempotency-Key store, 4xx never retried. The real server cannot be made
 * to answer 5xx, so the 5xx/backoff path runs against a small loopback server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, DEFAULT_RETRY, unwrap, type FetchLike } from "@crm-service/client";
import { retryAfterMs, retryDelayMs } from "../../clients/typescript/src/retry.ts";
import { freePort, startServer, type ServerHandle } from "../helpers/server.ts";
import { recordingFetch } from "./recording-fetch.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer();
}, 30_000);

afterAll(async () => {
  await srv?.stop();
}, 30_000);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let seq = 0;
const newContactBody = () => ({ firstName: `Retry${++seq}`, email: `retry${seq}.${Date.now()}@example.com` });
/** Fast backoff, so only a Retry-After makes a test wait. */
const FAST = { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 10_000 };

/** Spends `key`'s minute bucket (docs/api.md §6) until the server refuses; the Retry-After it gave. */
async function exhaust(key: string): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const res = await fetch(`${srv.baseUrl}/ping`, { headers: { Authorization: `Bearer ${key}` } });
    await res.body?.cancel();
    if (res.status === 429) return Number(res.headers.get("retry-after"));
  }
  throw new Error("the key was never rate limited");
}

describe("429 from the real server", () => {
  test("a rate-limited POST is retried after at least Retry-After, with the same Idempotency-Key, and succeeds", async () => {
    // 30 a minute: one token back every 2 s, so the first try is surely refused.
    const project = await srv.newProject({ rateLimitPerMinute: 30 });
    await exhaust(project.key);
    const { fetch, sent } = recordingFetch();
    const crm = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch, retry: FAST });
    const created = await crm.POST("/contacts", { body: newContactBody() });
    expect(created.response.status).toBe(201);
    expect(sent.map((s) => s.status)).toEqual([429, 201]);
    const retryAfter = Number(sent[0]!.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // The backoff alone would be ~1 ms: the wait is the server's Retry-After.
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(retryAfter * 1000);
    const keys = sent.map((s) => s.headers.get("idempotency-key"));
    expect(keys[0]).toMatch(UUID_RE);
    expect(keys[1]).toBe(keys[0]);
  });

  test("a Retry-After beyond maxDelayMs is not cut short: the 429 is answered at once, typed ERR_RATE_LIMITED", async () => {
    const project = await srv.newProject({ rateLimitPerMinute: 30 });
    await exhaust(project.key);
    const { fetch, sent } = recordingFetch();
    const crm = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch, retry: { ...FAST, maxDelayMs: 500 } });
    const refused = await crm.GET("/ping");
    expect(refused.response.status).toBe(429);
    expect(refused.error).toMatchObject({ code: "ERR_RATE_LIMITED", statusCode: 429 });
    expect(sent).toHaveLength(1);
  });
});

describe("Idempotency-Key", () => {
  test("a POST whose answer was lost is retried with the same key: the server replays it and one contact exists", async () => {
    const project = await srv.newProject();
    let lost = false;
    // The server creates the contact, then a proxy in between answers 502 instead.
    const lossy: FetchLike = async (request) => {
      const response = await globalThis.fetch(request);
      if (lost) return response;
      lost = true;
      await response.body?.cancel();
      return new Response("bad gateway", { status: 502 });
    };
    const { fetch, sent } = recordingFetch(lossy);
    const crm = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch, retry: FAST });
    const body = newContactBody();
    const created = await crm.POST("/contacts", { body });
    expect(sent.map((s) => s.status)).toEqual([502, 201]);
    expect(sent[1]!.headers.get("idempotency-key")).toBe(sent[0]!.headers.get("idempotency-key"));
    expect(created.response.headers.get("idempotent-replayed")).toBe("true");
    const found = unwrap(await crm.GET("/contacts", { params: { query: { email: body.email } } })).data;
    expect(found.map((c) => c.contactId)).toEqual([created.data!.contactId]);
  });

  test("the caller's own key is sent as given, and a repeat of the call is answered from the server's store", async () => {
    const project = await srv.newProject();
    const { fetch, sent } = recordingFetch();
    const crm = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch });
    const body = newContactBody();
    const header = { "Idempotency-Key": `order-${Date.now()}` };
    const first = unwrap(await crm.POST("/contacts", { params: { header }, body }));
    const again = await crm.POST("/contacts", { params: { header }, body });
    expect(sent.map((s) => s.headers.get("idempotency-key"))).toEqual([header["Idempotency-Key"], header["Idempotency-Key"]]);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(again.data!.contactId).toBe(first.contactId);
  });

  test("each POST gets its own key; GET and PATCH carry none", async () => {
    const project = await srv.newProject();
    const { fetch, sent } = recordingFetch();
    const crm = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch });
    const a = unwrap(await crm.POST("/contacts", { body: newContactBody() }));
    unwrap(await crm.POST("/contacts", { body: newContactBody() }));
    unwrap(await crm.GET("/contacts/{contactId}", { params: { path: { contactId: a.contactId } } }));
    unwrap(await crm.PATCH("/contacts/{contactId}", { params: { path: { contactId: a.contactId } }, body: { notes: "x" } }));
    const keys = sent.map((s) => s.headers.get("idempotency-key"));
    expect(keys[0]).toMatch(UUID_RE);
    expect(keys[1]).toMatch(UUID_RE);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys.slice(2)).toEqual([null, null]);
  });
});

describe("4xx is never retried", () => {
  test("401, 403, 404, 409 and 422 are each answered after one try, even with 5 attempts allowed", async () => {
    const project = await srv.newProject();
    const readOnly = await srv.newKey(["contacts:read"], project.id);
    const { fetch, sent } = recordingFetch();
    const crm = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch, retry: FAST });
    const a = unwrap(await crm.POST("/contacts", { body: newContactBody() }));
    const b = unwrap(await crm.POST("/contacts", { body: newContactBody() }));
    sent.length = 0;

    const statuses = [
      (await createClient({ baseUrl: srv.origin, apiKey: "crm_live_not-a-key", fetch, retry: FAST }).GET("/ping")).response.status,
      (await createClient({ baseUrl: srv.origin, apiKey: readOnly, fetch, retry: FAST }).POST("/contacts", { body: newContactBody() })).response.status,
      (await crm.GET("/contacts/{contactId}", { params: { path: { contactId: "CR-999999" } } })).response.status,
      (await crm.PATCH("/contacts/{contactId}", { params: { path: { contactId: a.contactId } }, body: { contactId: b.contactId } })).response.status,
      (await crm.POST("/contacts", { body: { firstName: "x", email: "not-an-email" } })).response.status,
    ];
    expect(statuses).toEqual([401, 403, 404, 409, 422]);
    expect(sent.map((s) => s.status)).toEqual([401, 403, 404, 409, 422]);
  });
});

/** A loopback server answering `replies` in order, then the last one forever. */
function scriptedServer(replies: { status: number; headers?: Record<string, string>; body?: string }[]) {
  const hits: { at: number; key: string | null }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      hits.push({ at: Date.now(), key: req.headers.get("idempotency-key") });
      const r = replies[Math.min(hits.length - 1, replies.length - 1)]!;
      return new Response(r.body ?? JSON.stringify({ ok: true }), { status: r.status, headers: { "Content-Type": "application/json", ...r.headers } });
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, hits, stop: () => server.stop(true) };
}

const ENVELOPE_500 = JSON.stringify({ success: false, statusCode: 500, error: "Internal Server Error", code: "ERR_INTERNAL", message: "boom" });

describe("5xx and network errors (loopback server)", () => {
  test("503, 503, then 200: three tries, each wait within the capped backoff, the same Idempotency-Key", async () => {
    const fake = scriptedServer([{ status: 503 }, { status: 503 }, { status: 200 }]);
    try {
      const crm = createClient({ baseUrl: fake.origin, apiKey: "k", retry: { maxAttempts: 5, baseDelayMs: 40, maxDelayMs: 60 } });
      const res = await crm.POST("/webhooks/{id}/test", { params: { path: { id: "wh_1" } } });
      expect(res.response.status).toBe(200);
      expect(fake.hits).toHaveLength(3);
      const gaps = [fake.hits[1]!.at - fake.hits[0]!.at, fake.hits[2]!.at - fake.hits[1]!.at];
      // Full jitter: random(0, min(60, 40 * 2^(n-1))) ms, plus the time a request takes
      // (exact bounds: "backoff arithmetic" below).
      for (const gap of gaps) expect(gap).toBeLessThan(60 + 300);
      expect(new Set(fake.hits.map((h) => h.key)).size).toBe(1);
      expect(fake.hits[0]!.key).toMatch(UUID_RE);
    } finally {
      fake.stop();
    }
  });

  test("attempts are capped: a server that always answers 500 gets maxAttempts tries, then its typed envelope is returned", async () => {
    const fake = scriptedServer([{ status: 500, body: ENVELOPE_500 }]);
    try {
      const crm = createClient({ baseUrl: fake.origin, apiKey: "k", retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
      const res = await crm.GET("/ping");
      expect(fake.hits).toHaveLength(3);
      expect(res.error).toMatchObject({ code: "ERR_INTERNAL", statusCode: 500 });
      const once = createClient({ baseUrl: fake.origin, apiKey: "k", retry: false });
      await once.GET("/ping");
      expect(fake.hits).toHaveLength(4);
    } finally {
      fake.stop();
    }
  });

  test("a 503 with Retry-After: 1 waits at least a second", async () => {
    const fake = scriptedServer([{ status: 503, headers: { "Retry-After": "1" } }, { status: 200 }]);
    try {
      const crm = createClient({ baseUrl: fake.origin, apiKey: "k", retry: FAST });
      expect((await crm.GET("/ping")).response.status).toBe(200);
      expect(fake.hits[1]!.at - fake.hits[0]!.at).toBeGreaterThanOrEqual(1000);
    } finally {
      fake.stop();
    }
  });

  test("a refused connection is retried up to maxAttempts, then its error is thrown", async () => {
    const { fetch, sent } = recordingFetch();
    const crm = createClient({ baseUrl: `http://127.0.0.1:${freePort()}`, apiKey: "k", fetch, retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    await expect(crm.GET("/ping")).rejects.toThrow();
    expect(sent).toHaveLength(3);
  });

  test("aborting the call's signal ends a backoff wait at once", async () => {
    const fake = scriptedServer([{ status: 503, headers: { "Retry-After": "5" } }]);
    try {
      const crm = createClient({ baseUrl: fake.origin, apiKey: "k", retry: FAST });
      const started = Date.now();
      await expect(crm.GET("/ping", { signal: AbortSignal.timeout(200) })).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(fake.hits).toHaveLength(1);
    } finally {
      fake.stop();
    }
  });
});

describe("backoff arithmetic (clients/typescript/src/retry.ts)", () => {
  const policy = { maxAttempts: 9, baseDelayMs: 100, maxDelayMs: 1000 };
  test("full jitter: random(0, min(maxDelayMs, baseDelayMs * 2^(n-1)))", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, undefined, policy, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(retryDelayMs(4, undefined, policy, () => 0)).toBe(0);
    expect(retryDelayMs(2, undefined, policy, () => 0.5)).toBe(100);
  });

  test("Retry-After is a floor; beyond maxDelayMs it means do not retry", () => {
    expect(retryDelayMs(1, 700, policy, () => 1)).toBe(700);
    expect(retryDelayMs(5, 300, policy, () => 1)).toBe(1000);
    expect(retryDelayMs(1, 1001, policy, () => 0)).toBeNull();
  });

  test("Retry-After in seconds or as an HTTP date", () => {
    const now = Date.parse("2026-01-15T09:30:00Z");
    expect(retryAfterMs("2", now)).toBe(2000);
    expect(retryAfterMs("Thu, 15 Jan 2026 09:30:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Thu, 15 Jan 2026 09:29:00 GMT", now)).toBe(0);
    expect([retryAfterMs(null), retryAfterMs(""), retryAfterMs("soon")]).toEqual([undefined, undefined, undefined]);
  });

  test("the defaults retry a few times with a cap", () => {
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 20_000 });
  });
});
