/**
 * Behind a reverse proxy (docs/operations.md §8): with `CRM_TRUST_PROXY` naming the proxy, the
 * per-address limits (failed authentications: 30 a minute, docs/api.md §2.3; web forms: 10 a
 * minute per form, docs/api.md §6) count the client address the proxy forwarded for; without
 * it, the socket's address counts and `X-Forwarded-For` is ignored. The tests connect from
 * 127.0.0.1, which plays the proxy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { freePort, startServer, type ServerHandle } from "../helpers/server.ts";
import { BUN, runCommand } from "../helpers/spawn.ts";

const FAILED_AUTH_PER_MINUTE = 30;

/** A request without a key, as if forwarded for `client` (an X-Forwarded-For value). */
const unauthenticated = (srv: ServerHandle, forwardedFor: string) =>
  srv.api("GET", "/ping", { key: null, headers: { "X-Forwarded-For": forwardedFor } });

describe("with CRM_TRUST_PROXY naming the proxy", () => {
  let srv: ServerHandle;
  beforeAll(async () => {
    srv = await startServer({ extraEnv: { CRM_TRUST_PROXY: "10.0.0.0/8, 127.0.0.1" } });
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
  });

  test("failed authentications are limited per forwarded client: one client's 429 leaves another at 401", async () => {
    const started = performance.now();
    for (let i = 0; i < FAILED_AUTH_PER_MINUTE; i++) expectError(await unauthenticated(srv, "203.0.113.1"), "ERR_UNAUTHORIZED");
    const limited = await unauthenticated(srv, "203.0.113.1");
    const elapsed = (performance.now() - started) / 1000;
    expectError(limited, "ERR_RATE_LIMITED");
    // The seconds left of the minute that began with this client's first failure.
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(Math.max(1, Math.floor(60 - elapsed)));
    expectError(await unauthenticated(srv, "203.0.113.2"), "ERR_UNAUTHORIZED");
  });

  test("the client is the rightmost untrusted address: what the client wrote further left is not believed", async () => {
    for (let i = 0; i < FAILED_AUTH_PER_MINUTE; i++) expectError(await unauthenticated(srv, "198.51.100.9"), "ERR_UNAUTHORIZED");
    // A client writing its own X-Forwarded-For: the proxy appends the real address after it.
    expectError(await unauthenticated(srv, "192.0.2.77, 198.51.100.9"), "ERR_RATE_LIMITED");
    // Trusted hops (10.0.0.0/8) to the right are skipped.
    expectError(await unauthenticated(srv, "198.51.100.9, 10.1.1.1"), "ERR_RATE_LIMITED");
    expectError(await unauthenticated(srv, "198.51.100.10, 10.1.1.1"), "ERR_UNAUTHORIZED");
  });

  test("web-form submissions are limited per forwarded client", async () => {
    const form = await srv.cli(["form", "create", "--project", srv.projectId, "--name", "Proxied", "--fields", "email", "--json"]);
    const submit = (forwardedFor: string) =>
      srv.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email: "p@example.com", _hp: "bot" }, headers: { "X-Forwarded-For": forwardedFor } });
    for (let i = 0; i < 10; i++) expectStatus(await submit("203.0.113.50"), 201);
    expectError(await submit("203.0.113.50"), "ERR_RATE_LIMITED");
    expectStatus(await submit("203.0.113.51"), 201);
  });
});

describe("without CRM_TRUST_PROXY (the default)", () => {
  let srv: ServerHandle;
  beforeAll(async () => {
    srv = await startServer();
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
  });

  test("X-Forwarded-For is ignored: every request from the socket's address shares its failed-authentication limit", async () => {
    for (let i = 0; i < FAILED_AUTH_PER_MINUTE; i++) expectError(await unauthenticated(srv, `203.0.113.${i}`), "ERR_UNAUTHORIZED");
    expectError(await unauthenticated(srv, "198.51.100.200"), "ERR_RATE_LIMITED");
  });
});

describe("a bad CRM_TRUST_PROXY stops the start", () => {
  test("with one line naming the variable and the bad entry, exit 2, nothing created", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-trust-proxy-test-"));
    try {
      const env = { ...(process.env as Record<string, string>), PORT: String(freePort()), CRM_DB_PATH: join(dir, "data", "crm.db"), CRM_TRUST_PROXY: "127.0.0.1,proxy.internal" };
      const r = await runCommand([BUN, "src/main.ts", "serve"], { env, allowFail: true, timeoutMs: 20_000 });
      expect(r.exitCode).toBe(2);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith('crm: invalid CRM_TRUST_PROXY="127.0.0.1,proxy.internal": ');
      expect(lines[0]).toContain('"proxy.internal"');
      expect(r.stdout).toBe("");
      expect(existsSync(join(dir, "data"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
