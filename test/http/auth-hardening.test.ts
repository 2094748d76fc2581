/**
 * Authentication hardening (docs/api.md §2, docs/operations.md §3, docs/api.md §2.3):
 * - failed authentications from one address: 30 a minute are 401, the 31st is 429 with
 *   Retry-After, whatever the cause of failure; a valid key is not held back;
 * - keys never show in logs (even at debug), error bodies or /metrics; each request's log
 *   line carries its request id, key id and project id instead (docs/operations.md §3);
 * - verification time does not depend on how much of a key matched (HTTP medians with a
 *   loose bound), and src/auth/keys.ts looks keys up by their SHA-256 hash only (unit).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kysely, type LogEvent } from "kysely";
import { checksum, isWellFormedKey } from "../../src/auth/key-format.ts";
import { createApiKey, KeyStore } from "../../src/auth/keys.ts";
import type { Database } from "../../src/storage/schema.ts";
import { openDatabase } from "../../src/storage/sqlite/open.ts";
import { createProject } from "../../src/projects/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { ALL_SCOPES, makeApi, startServer, type ApiResponse, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const randomBase62 = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => BASE62[b % 62]).join("");
/** A well-formed key (valid checksum) that no project holds. */
const unknownKey = (prefix = "crm_test_") => {
  const body = prefix + randomBase62(40);
  return body + checksum(body);
};
/** `key` with its last random character (the one before the checksum) changed to `c`, checksum regenerated. */
const lastCharVariant = (key: string, c: string) => {
  const body = key.slice(0, -7) + c;
  return body + checksum(body);
};
const headerText = (h: Headers) => {
  const lines: string[] = [];
  h.forEach((v, k) => lines.push(`${k}: ${v}`));
  return lines.join("\n");
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

describe("failed authentications are limited per client address", () => {
  let srv: ServerHandle;
  beforeAll(async () => {
    srv = await startServer({ env: "sandbox" });
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
  }, 60_000);

  test("30 failures of every kind in a minute are 401; the 31st is 429 ERR_RATE_LIMITED with Retry-After; a valid key still passes", async () => {
    const revoked = await srv.createKey({ scopes: ALL_SCOPES });
    await srv.cli(["key", "revoke", revoked.id]);
    const expired = await srv.createKey({ scopes: ALL_SCOPES, expiresAt: "2020-01-01T00:00:00Z" });
    const valid = await srv.createKey({ scopes: ["contacts:read"] });
    const bad: (string | null)[] = [
      null, // no Authorization header
      "not-a-key",
      unknownKey(),
      unknownKey("crm_live_"), // the other environment's key
      lastCharVariant(valid.key, valid.key.at(-7) === "a" ? "b" : "a"), // one character off a real key
      valid.key.slice(0, -1) + (valid.key.at(-1) === "a" ? "b" : "a"), // checksum broken
      revoked.key,
      expired.key,
    ];
    const api = makeApi(srv.baseUrl, async () => null);
    const answers: ApiResponse[] = [];
    const started = performance.now();
    for (let i = 0; i < 30; i++) answers.push(await api("GET", "/ping", { key: bad[i % bad.length] }));
    for (const res of answers) expectError(res, "ERR_UNAUTHORIZED");
    // One opaque message whatever the cause (docs/api.md §2).
    expect(new Set(answers.map((r) => r.json.message)).size).toBe(1);

    const limited = await api("GET", "/contacts", { key: unknownKey() });
    const elapsed = (performance.now() - started) / 1000;
    expectError(limited, "ERR_RATE_LIMITED");
    // The seconds left of the minute that began with the first failure, `elapsed` s ago at most.
    const retryAfter = limited.headers.get("retry-after");
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(Math.max(1, Math.floor(60 - elapsed)));
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    for (const key of bad) expectError(await api("GET", "/ping", { key }), "ERR_RATE_LIMITED");

    // Only failures are limited: a valid key from the same address is answered.
    const ok = await api("GET", "/ping", { key: valid.key });
    expectStatus(ok, 200);
  });
});

describe("keys never leave the server", () => {
  let srv: ServerHandle;
  let rx: Receiver;
  let project: ProjectInfo;
  let keys: { all: string; readOnly: string; revoked: string };
  const unknown = unknownKey();
  let near = "";
  const secrets: string[] = [];

  beforeAll(async () => {
    rx = await startReceiver();
    // No bootstrap: the one key a server itself prints (first start, docs/cli.md §4) stays out of its logs.
    srv = await startServer({ env: "sandbox", expectBootstrapKey: false, extraEnv: { CRM_LOG_LEVEL: "debug", CRM_BOOTSTRAP: "false", CRM_OUTBOX_POLL_MS: "50" } });
    const p = (project = await srv.newProject({ name: "hardening" }));
    const revoked = await srv.createKey({ projectId: p.id, scopes: ALL_SCOPES });
    await srv.cli(["key", "revoke", revoked.id]);
    keys = { all: p.key, readOnly: (await srv.createKey({ projectId: p.id, scopes: ["contacts:read"] })).key, revoked: revoked.key };
    near = lastCharVariant(keys.all, keys.all.at(-7) === "a" ? "b" : "a");
  }, 60_000);

  afterAll(async () => {
    await rx?.stop();
    await srv?.stop();
  }, 60_000);

  test("debug logs, error bodies and /metrics carry no key, no Authorization value and no webhook secret", async () => {
    const api = makeApi(srv.baseUrl, async () => keys.all);
    const bodies: ApiResponse[] = [];
    const call = async (method: string, path: string, opts: Parameters<typeof api>[2] = {}) => {
      const res = await api(method, path, opts);
      bodies.push(res);
      return res;
    };
    expectStatus(await call("GET", "/ping"), 200);
    const created = await call("POST", "/contacts", { body: { firstName: "Logged", email: "logged@example.com" } });
    expectStatus(created, 201);
    const hook = await call("POST", "/webhooks", { body: { url: rx.url, events: ["*"] } });
    expectStatus(hook, 201);
    secrets.push(hook.json.secret);
    const rotated = await call("POST", `/webhooks/${hook.json.id}/rotate-secret`);
    expectStatus(rotated, 200);
    secrets.push(rotated.json.secret);
    expectStatus(await call("PATCH", `/contacts/${created.json.contactId}`, { body: { notes: "n" } }), 200);
    expectStatus(await call("POST", `/webhooks/${hook.json.id}/test`), 200);
    await rx.waitUntil((r) => r.length >= 2, 10_000, "deliveries");
    // Errors with a valid key.
    expectError(await call("GET", "/contacts/CR-999999"), "ERR_NOT_FOUND");
    expectError(await call("POST", "/contacts", { body: { nope: 1 } }), "ERR_FORM_VALIDATION", "nope");
    expectError(await call("POST", "/contacts", { rawBody: "{", headers: { "Content-Type": "application/json" } }), "ERR_INVALID_JSON", "body");
    expectError(await call("POST", "/contacts", { key: keys.readOnly, body: { firstName: "X" } }), "ERR_FORBIDDEN");
    expectError(await call("DELETE", "/ping"), "ERR_METHOD_NOT_ALLOWED");
    // A key sent where it does not belong: in the path and in the query string.
    await call("GET", `/contacts/${keys.all}`);
    await call("GET", "/contacts", { query: { search: keys.readOnly } });
    await call("GET", `/no-such-path/${keys.all}`);
    // Failed authentications of every kind, with the key in other header spellings too.
    for (const key of [unknown, near, keys.revoked, "crm_test_short", keys.all + "x"]) expectError(await call("GET", "/contacts", { key }), "ERR_UNAUTHORIZED");
    expectError(await call("GET", "/ping", { key: null, headers: { Authorization: `Basic ${btoa(`user:${keys.all}`)}` } }), "ERR_UNAUTHORIZED");
    expectError(await call("GET", "/ping", { key: null, headers: { Authorization: `bearer  ${keys.all} extra` } }), "ERR_UNAUTHORIZED");
    expectError(await call("GET", "/ping", { key: null, headers: { "X-Api-Key": keys.all } }), "ERR_UNAUTHORIZED");

    const metrics = await fetch(`${srv.origin}/metrics`).then((r) => r.text());
    expect(metrics).toContain("http_requests_total");
    // Every request above has its log line on stdout once the last one's is there (one pipe, in order).
    const lastId = bodies.at(-1)!.headers.get("x-request-id")!;
    await until(() => srv.stdout().includes(`"requestId":"${lastId}"`), { timeoutMs: 5_000, what: `the log line of ${lastId}` });
    const logs = srv.stdout() + srv.stderr();
    for (const res of bodies) expect(logs).toContain(`"requestId":"${res.headers.get("x-request-id")}"`);

    const forbidden = [keys.all, keys.readOnly, keys.revoked, unknown, near, ...secrets, "crm_test_", "crm_live_", "Bearer", "bearer", "whsec_"];
    const found = (text: string) => forbidden.filter((s) => text.includes(s));
    expect(found(logs)).toEqual([]);
    expect(found(metrics)).toEqual([]);
    for (const res of bodies) {
      if (res.status < 400) continue;
      expect(found(res.text), `${res.status} ${res.text.slice(0, 200)}`).toEqual([]);
      expect(found(headerText(res.headers)), `${res.status} headers`).toEqual([]);
    }
    // The attempts list keeps deliveries' answers, never a secret or key.
    const attempts = await api("GET", `/webhooks/${hook.json.id}/attempts`);
    expectStatus(attempts, 200);
    expect(found(attempts.text)).toEqual([]);
  });

  test("each request is logged as one JSON line with its request id, key id and project id (null without a valid key)", async () => {
    const api = makeApi(srv.baseUrl, async () => keys.all);
    const answers = [
      await api("GET", "/ping"),
      await api("POST", "/contacts", { body: { firstName: "Log line" } }),
      await api("GET", "/contacts/CR-424242"),
      await api("GET", "/ping", { key: unknown }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 201, 404, 401]);
    const lineOf = (requestId: string) =>
      srv
        .stdout()
        .split("\n")
        .filter((l) => l.includes(`"requestId":"${requestId}"`));
    const ids = answers.map((a) => a.headers.get("x-request-id")!);
    await until(() => lineOf(ids.at(-1)!).length > 0, { timeoutMs: 5_000, what: "the last request's log line" });
    const lines = ids.map((id) => {
      const found = lineOf(id);
      expect(found).toHaveLength(1);
      return JSON.parse(found[0]!);
    });
    const expected = [
      { method: "GET", route: "/v1/ping", status: 200, keyId: project.keyId, projectId: project.id },
      { method: "POST", route: "/v1/contacts", status: 201, keyId: project.keyId, projectId: project.id },
      { method: "GET", route: "/v1/contacts/:contactId", status: 404, keyId: project.keyId, projectId: project.id },
      { method: "GET", route: "/v1/ping", status: 401, keyId: null, projectId: null },
    ];
    lines.forEach((line, i) => {
      expect(Object.keys(line).sort()).toEqual(["durationMs", "keyId", "level", "method", "msg", "projectId", "requestId", "route", "status", "time"]);
      expect(line).toMatchObject({ level: "info", msg: "request", requestId: ids[i], ...expected[i] });
      expect(typeof line.durationMs).toBe("number");
    });
  });
});

describe("key verification time", () => {
  // Its own server: this test fills the address's failed-authentication window (every
  // request past 30 is a 429), which no other test must see.
  let srv: ServerHandle;
  const unknown = unknownKey();
  const keys = { all: "" };
  let near = "";
  beforeAll(async () => {
    srv = await startServer({ env: "sandbox" });
    keys.all = (await srv.createKey({ scopes: ["contacts:read"] })).key;
    near = lastCharVariant(keys.all, keys.all.at(-7) === "a" ? "b" : "a");
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
  }, 60_000);

  test("key verification takes as long for a key that matches a real one but for its last character as for an unrelated key", async () => {
    // Both kinds are well formed (valid checksum), so both reach the hash lookup.
    expect(isWellFormedKey(near, "sandbox")).toBe(true);
    expect(isWellFormedKey(unknown, "sandbox")).toBe(true);
    expect(checksum(keys.all.slice(0, -6))).toBe(keys.all.slice(-6)); // our checksum is the server's
    const variants = [...BASE62].filter((c) => c !== keys.all.at(-7)).map((c) => lastCharVariant(keys.all, c));
    const timeOne = async (key: string) => {
      const t0 = performance.now();
      const res = await fetch(`${srv.baseUrl}/ping`, { headers: { Authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      const ms = performance.now() - t0;
      // 401 until the address's failure window fills, then 429: both after the lookup.
      if (res.status !== 401 && res.status !== 429) throw new Error(`unexpected ${res.status}`);
      return ms;
    };
    for (let i = 0; i < 20; i++) {
      await timeOne(unknownKey());
      await timeOne(variants[i % variants.length]!);
    }
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 300; i++) {
      // Alternate which goes first so drift and the 401/429 switch hit both alike.
      if (i % 2) {
        a.push(await timeOne(unknownKey()));
        b.push(await timeOne(variants[i % variants.length]!));
      } else {
        b.push(await timeOne(variants[i % variants.length]!));
        a.push(await timeOne(unknownKey()));
      }
    }
    const ma = median(a);
    const mb = median(b);
    const bound = Math.max(1, 0.5 * Math.min(ma, mb));
    console.log(`key timing: median unknown ${ma.toFixed(3)} ms, near-miss ${mb.toFixed(3)} ms, bound ${bound.toFixed(3)} ms`);
    expect(Math.abs(ma - mb)).toBeLessThanOrEqual(bound);
  });
});

describe("KeyStore looks keys up by SHA-256 hash only (unit)", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-keystore-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("one query per verification, by the key's hash, whichever character differs; the key itself is never sent to or stored in the database", async () => {
    const opened = await openDatabase(join(dir, "k.db"), "NORMAL");
    const project = await createProject(opened.db, "unit", isoNow(systemClock));
    const { key } = await createApiKey(opened.db, { projectId: project.id, scopes: ["contacts:read"], env: "sandbox", now: isoNow(systemClock) });
    const queries: { sql: string; parameters: readonly unknown[] }[] = [];
    const logged = new Kysely<Database>({
      dialect: opened.raw.dialect,
      log: (e: LogEvent) => {
        queries.push({ sql: e.query.sql, parameters: e.query.parameters });
      },
    });
    const store = new KeyStore(logged);
    const sha = (k: string) => createHash("sha256").update(k).digest("hex");
    const swap = (k: string, i: number) => k.slice(0, i) + (k[i] === "a" ? "b" : "a") + k.slice(i + 1);
    const firstOff = swap(key, "crm_test_".length); // first random character differs
    const lastOff = lastCharVariant(key, key.at(-7) === "a" ? "b" : "a"); // last one differs, checksum valid

    const lookups = async (k: string, now: number) => {
      queries.length = 0;
      const caller = await store.verify(k, now);
      return { caller, queries: [...queries] };
    };
    const t = Date.now();
    const first = await lookups(firstOff, t);
    const last = await lookups(lastOff, t);
    const garbage = await lookups("x", t);
    const real = await lookups(key, t);
    expect(first.caller).toBeNull();
    expect(last.caller).toBeNull();
    expect(garbage.caller).toBeNull();
    expect(real.caller?.projectId).toBe(project.id);
    for (const [k, r] of [[firstOff, first], [lastOff, last], ["x", garbage], [key, real]] as const) {
      expect(r.queries).toHaveLength(1);
      const q = r.queries[0]!;
      // The same statement for every key: an equality on the stored hash, nothing else of the key.
      expect(q.sql).toBe(first.queries[0]!.sql);
      expect(q.sql).toMatch(/"key_hash" = \?/);
      expect(q.sql).not.toMatch(/like|substr|instr|glob/i);
      expect(q.parameters).toEqual([sha(k)]);
      for (const p of q.parameters) expect(String(p)).not.toContain(k);
    }
    // Misses are never cached (each costs the same one lookup again); hits are, for 1 s.
    expect((await lookups(lastOff, t + 10)).queries).toHaveLength(1);
    expect((await lookups(key, t + 10)).queries).toHaveLength(0);

    // Only the hash is stored (docs/api.md §2): no column of the key's row holds the key.
    const rows = opened.raw.all<Record<string, unknown>>("SELECT * FROM api_keys");
    expect(rows).toHaveLength(1);
    expect(Object.values(rows[0]!)).toContain(sha(key));
    for (const v of Object.values(rows[0]!)) expect(String(v)).not.toContain(key.slice(9, -6));
    await opened.close();
  });
});
