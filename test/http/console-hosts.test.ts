/**
 * The console serves only the hosts it is meant for (docs/security.md §5): loopback names
 * and addresses on its port, and `CRM_ADMIN_HOSTS`; any other Host is 421 before anything
 * else runs, so a DNS-rebinding page (whose requests carry its own name as Host) can
 * neither sign in nor spend the real admin's sign-in tries. The API is not concerned: its
 * key is not sent by a browser on its own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, createAdminAccount } from "../helpers/admin.ts";
import { freePort, startServer, type ServerHandle } from "../helpers/server.ts";
import { BUN, runCommand } from "../helpers/spawn.ts";

const REBIND = "rebind.attacker.example";

let srv: ServerHandle;
beforeAll(async () => {
  srv = await startServer({ extraEnv: { CRM_ADMIN_HOSTS: "crm.example.com,admin.example.org:8443", CRM_TRUST_PROXY: "10.0.0.0/8" } });
}, 60_000);
afterAll(async () => {
  await srv?.stop();
});

const port = () => new URL(srv.origin).port;
const get = (path: string, headers: Record<string, string>) => fetch(srv.origin + path, { headers, redirect: "manual" });

describe("the console's hosts", () => {
  test("a Host of another name on the console's port is 421 on every console path, before sign-in or setup", async () => {
    for (const path of ["/admin", "/admin/sign-in", "/admin/setup?token=x", "/admin/projects", "/admin/assets/admin.css"]) {
      const res = await get(path, { Host: `${REBIND}:${port()}` });
      expect(res.status).toBe(421);
      expect(res.headers.get("set-cookie")).toBeNull();
      expect(await res.text()).toContain("CRM_ADMIN_HOSTS");
    }
  });

  test("a rebinding page's sign-in POST is 421, is not checked, and spends none of the real admin's tries", async () => {
    const account = await createAdminAccount(srv.env);
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${srv.origin}/admin/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: { Host: `${REBIND}:${port()}`, Origin: `http://${REBIND}:${port()}`, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: account.email, password: `guess ${i}`, _csrf: "x" }),
      });
      expect(res.status).toBe(421);
    }
    // Twelve refused guesses later the admin is not locked out.
    const admin = new AdminClient(srv.origin);
    expect((await admin.signIn(account.email, account.password)).status).toBe(303);
  });

  test("loopback names and addresses on the console's port are served", async () => {
    for (const host of [`localhost:${port()}`, `127.0.0.1:${port()}`, `[::1]:${port()}`, `127.0.0.2:${port()}`]) {
      expect((await get("/admin/sign-in", { Host: host })).status).toBe(200);
    }
  });

  test("loopback on another port, or without its port, is 421", async () => {
    expect((await get("/admin/sign-in", { Host: `localhost:${Number(port()) + 1}` })).status).toBe(421);
    expect((await get("/admin/sign-in", { Host: "localhost" })).status).toBe(421);
  });

  test("the hosts of CRM_ADMIN_HOSTS are served (on the entry's port when it names one)", async () => {
    expect((await get("/admin/sign-in", { Host: "crm.example.com" })).status).toBe(200);
    expect((await get("/admin/sign-in", { Host: "CRM.Example.com:443" })).status).toBe(200);
    expect((await get("/admin/sign-in", { Host: "admin.example.org:8443" })).status).toBe(200);
    expect((await get("/admin/sign-in", { Host: "admin.example.org" })).status).toBe(421);
    expect((await get("/admin/sign-in", { Host: "crm.example.com.attacker.example" })).status).toBe(421);
  });

  test("X-Forwarded-Host counts only from a trusted proxy (the tests' 127.0.0.1 is not one here)", async () => {
    // 127.0.0.1 is outside CRM_TRUST_PROXY=10.0.0.0/8: the header is the client's own word, ignored.
    expect((await get("/admin/sign-in", { Host: `localhost:${port()}`, "X-Forwarded-Host": REBIND })).status).toBe(200);
    expect((await get("/admin/sign-in", { Host: REBIND, "X-Forwarded-Host": "crm.example.com" })).status).toBe(421);
  });

  test("the API and the web forms answer whatever the Host: a key is not something a browser sends by itself", async () => {
    const res = await fetch(`${srv.baseUrl}/ping`, { headers: { Host: `${REBIND}:${port()}`, Authorization: `Bearer ${srv.key}` } });
    expect(res.status).toBe(200);
    expect((await get("/healthz", { Host: REBIND })).status).toBe(200);
  });
});

describe("behind a trusted proxy", () => {
  let proxied: ServerHandle;
  beforeAll(async () => {
    proxied = await startServer({ extraEnv: { CRM_ADMIN_HOSTS: "crm.example.com", CRM_TRUST_PROXY: "127.0.0.1" } });
  }, 60_000);
  afterAll(async () => {
    await proxied?.stop();
  });

  test("the host the browser asked for (X-Forwarded-Host) is the one judged", async () => {
    const at = (forwarded: string) =>
      fetch(`${proxied.origin}/admin/sign-in`, { headers: { "X-Forwarded-Host": forwarded }, redirect: "manual" }).then((r) => r.status);
    expect(await at("crm.example.com")).toBe(200);
    expect(await at(REBIND)).toBe(421);
    // Without the header the proxy's own Host (loopback here) is judged.
    expect((await fetch(`${proxied.origin}/admin/sign-in`)).status).toBe(200);
  });
});

describe("a bad CRM_ADMIN_HOSTS stops the start", () => {
  test("with one line naming the variable and the bad entry, exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-admin-hosts-test-"));
    try {
      const env = { ...(process.env as Record<string, string>), PORT: String(freePort()), CRM_DB_PATH: join(dir, "data", "crm.db"), CRM_ADMIN_HOSTS: "crm.example.com,http://x" };
      const r = await runCommand([BUN, "src/main.ts", "serve"], { env, allowFail: true, timeoutMs: 20_000 });
      expect(r.exitCode).toBe(2);
      expect(r.stderr.trim()).toStartWith('crm: invalid CRM_ADMIN_HOSTS="crm.example.com,http://x": ');
      expect(existsSync(join(dir, "data"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
