import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES, startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { until } from "../helpers/until.ts";

let srv: ServerHandle;
let contactId: string;

const UNAUTHORIZED = {
  success: false,
  statusCode: 401,
  error: "Unauthorized",
  code: "ERR_UNAUTHORIZED",
  message: "Invalid or missing API key.",
};

beforeAll(async () => {
  srv = await startServer();
  const c = await srv.api("POST", "/contacts", { body: { firstName: "Scoped" } });
  expectStatus(c, 201);
  contactId = c.json.contactId;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

describe("first start and keys", () => {
  test("the first start prints one every-scope crm_live_ key of 40+6 base62 characters", () => {
    expect(srv.key).toMatch(/^crm_live_[A-Za-z0-9]{46}$/);
  });

  test("the first start creates the project default", async () => {
    const list = await srv.cli(["project", "list", "--json"]);
    expect(list.data.map((p: any) => p.name)).toContain("default");
    expect(srv.projectId).toMatch(/^prj_/);
  });

  test("CLI key create answers a key_ id and a crm_live_ key", async () => {
    const k = await srv.createKey({ scopes: ["contacts:read"] });
    expect(k.id).toMatch(/^key_/);
    expect(k.key).toMatch(/^crm_live_[A-Za-z0-9]{46}$/);
  });
});

describe("GET /ping", () => {
  test("GET /ping with the bootstrap key answers its project, key id, every scope and the environment", async () => {
    const res = await srv.api("GET", "/ping", { key: srv.key });
    expectStatus(res, 200);
    expect(Object.keys(res.json).sort()).toEqual(["environment", "keyId", "projectId", "scopes"]);
    expect(res.json.projectId).toBe(srv.projectId);
    expect(res.json.keyId).toMatch(/^key_/);
    expect([...res.json.scopes].sort()).toEqual([...ALL_SCOPES].sort());
    expect(res.json.environment).toBe("production");
  });

  test("GET /ping needs no particular scope and reports the key's own id and scopes", async () => {
    const k = await srv.createKey({ scopes: ["webhooks:manage"] });
    const res = await srv.api("GET", "/ping", { key: k.key });
    expectStatus(res, 200);
    expect(res.json).toEqual({ projectId: srv.projectId, keyId: k.id, scopes: ["webhooks:manage"], environment: "production" });
  });

  test("GET /ping reports the project of a key of another project", async () => {
    const p = await srv.newProject();
    const res = await srv.api("GET", "/ping", { key: p.key });
    expect(res.json.projectId).toBe(p.id);
    expect(res.json.keyId).toBe(p.keyId);
  });
});

describe("401 for every authentication failure, with one opaque message", () => {
  const cases: [string, () => Promise<Record<string, string>>][] = [
    ["a missing Authorization header", async () => ({})],
    ["an empty bearer token", async () => ({ Authorization: "Bearer " })],
    ["a non-Bearer scheme", async () => ({ Authorization: `Basic ${btoa("user:pass")}` })],
    ["a malformed key", async () => ({ Authorization: "Bearer not-a-key" })],
    ["a well-formed but unknown key", async () => ({ Authorization: `Bearer crm_live_${"A".repeat(46)}` })],
    ["a known key with one character changed", async () => {
      const k = await srv.newKey(["contacts:read"]);
      const last = k.slice(-1) === "a" ? "b" : "a";
      return { Authorization: `Bearer ${k.slice(0, -1)}${last}` };
    }],
    ["a key given without the Bearer prefix", async () => ({ Authorization: await srv.newKey(["contacts:read"]) })],
    ["an expired key", async () => {
      const k = await srv.createKey({ scopes: ALL_SCOPES, expiresAt: "2020-01-01T00:00:00Z" });
      return { Authorization: `Bearer ${k.key}` };
    }],
  ];

  test.each(cases)("%s is 401 ERR_UNAUTHORIZED with the fixed message", async (_name, headers) => {
    const res = await srv.api("GET", "/contacts", { key: null, headers: await headers() });
    expect(res.status).toBe(401);
    expect(res.json).toEqual(UNAUTHORIZED);
  });

  test("a revoked key is 401 with the fixed message (revocation seen within 2 s)", async () => {
    const k = await srv.createKey({ scopes: ALL_SCOPES });
    expectStatus(await srv.api("GET", "/ping", { key: k.key }), 200);
    await srv.cli(["key", "revoke", k.id]);
    // The revocation is committed when the CLI exits; the server must see it within 2 s.
    const res = await until(
      async () => {
        const r = await srv.api("GET", "/ping", { key: k.key });
        return r.status === 200 ? undefined : r;
      },
      { timeoutMs: 2_000, what: "the revoked key to be refused" },
    );
    expect(res.status).toBe(401);
    expect(res.json).toEqual(UNAUTHORIZED);
    // And it stays refused.
    expect((await srv.api("GET", "/ping", { key: k.key })).json).toEqual(UNAUTHORIZED);
  });

  test("a key expiring in the future works", async () => {
    const k = await srv.createKey({ scopes: ALL_SCOPES, expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    expectStatus(await srv.api("GET", "/ping", { key: k.key }), 200);
  });

  test("a new key works immediately", async () => {
    const k = await srv.newKey(["contacts:read"]);
    expectStatus(await srv.api("GET", "/contacts", { key: k }), 200);
  });

  test("a request without a key to an API route that exists is 401, not 404 or 405", async () => {
    const res = await srv.api("POST", "/contacts", { key: null, body: { firstName: "x" } });
    expect(res.json).toEqual(UNAUTHORIZED);
  });
});

describe("403 when the key lacks the route's scope", () => {
  // [method, path (with :id), body, missing scope, scopes the key has]
  const routes: [string, string, unknown, string, string[]][] = [
    ["POST", "/contacts", { firstName: "x" }, "contacts:write", ["contacts:read", "interactions:write", "webhooks:manage"]],
    ["PATCH", "/contacts/:id", { notes: "x" }, "contacts:write", ["contacts:read", "interactions:write", "webhooks:manage"]],
    ["GET", "/contacts/:id", undefined, "contacts:read", ["contacts:write", "interactions:write", "webhooks:manage"]],
    ["GET", "/contacts", undefined, "contacts:read", ["contacts:write", "interactions:write", "webhooks:manage"]],
    ["POST", "/contacts/:id/interactions", { type: "note", note: "x" }, "interactions:write", ["contacts:read", "contacts:write", "webhooks:manage"]],
    ["GET", "/contacts/:id/interactions", undefined, "contacts:read", ["contacts:write", "interactions:write", "webhooks:manage"]],
    ["GET", "/contact-types", undefined, "contacts:read", ["contacts:write", "interactions:write", "webhooks:manage"]],
    ["GET", "/interaction-types", undefined, "contacts:read", ["contacts:write", "interactions:write", "webhooks:manage"]],
    ["GET", "/custom-fields", undefined, "contacts:read", ["contacts:write", "interactions:write", "webhooks:manage"]],
    ["GET", "/tags", undefined, "contacts:read", ["contacts:write", "interactions:write", "webhooks:manage"]],
  ];

  for (const [method, path, body, scope, has] of routes)
  test(`${method} ${path} without ${scope} is 403 ERR_FORBIDDEN naming the scope`, async () => {
    const key = await srv.newKey(has);
    const res = await srv.api(method, path.replace(":id", contactId), { key, body });
    expectError(res, "ERR_FORBIDDEN");
    expect(res.json.message).toContain(scope);
  });

  for (const [method, path, body, scope] of routes)
  test(`${method} ${path} with only ${scope} is allowed (${method === "POST" ? 201 : 200})`, async () => {
    const key = await srv.newKey([scope]);
    const res = await srv.api(method, path.replace(":id", contactId), { key, body });
    expectStatus(res, method === "POST" ? 201 : 200);
  });

  test("a missing scope is 403 even for a contact that does not exist", async () => {
    const key = await srv.newKey(["contacts:read"]);
    const res = await srv.api("PATCH", "/contacts/CR-99999999", { key, body: { notes: "x" } });
    expectError(res, "ERR_FORBIDDEN");
  });
});

describe("endpoints without a key", () => {
  test.each([
    ["/healthz", { status: "ok" }],
    ["/readyz", { status: "ready" }],
  ])("GET %s answers 200 %o without a key", async (path, body) => {
    const res = await srv.api("GET", srv.origin + path, { key: null });
    expectStatus(res, 200);
    expect(res.json).toEqual(body);
  });
});
