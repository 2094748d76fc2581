/**
 * PostgreSQL unreachable (docs/operations.md §4.1): /readyz answers 503 while the database cannot be
 * reached, requests fail with the envelope (never a crash), and once it is back the same
 * process answers again: a lost connection is retried, never fatal. The server reaches
 * PostgreSQL through a TCP proxy in this test that can cut every connection and refuse
 * new ones, the way a database restart or a network partition looks from the node.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "../helpers/postgres.ts";
import { makeApi } from "../helpers/server.ts";
import { spawnServer, type SpawnedServer } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";

/** A TCP proxy to `target` that can be cut (all sockets destroyed, new ones refused) and restored. */
async function cuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let up = true;
  const server: Server = createServer((client) => {
    if (!up) return void client.destroy();
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      up = true;
    },
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), sockets.forEach((s) => s.destroy()))),
  };
}

describe("a node whose PostgreSQL goes away and comes back", () => {
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  let server: SpawnedServer;
  let dir: string;

  beforeAll(async () => {
    const url = new URL(await createTestDatabase());
    proxy = await cuttableProxy({ host: url.hostname, port: Number(url.port) });
    url.port = String(proxy.port);
    dir = mkdtempSync(join(tmpdir(), "crm-pg-outage-"));
    server = await spawnServer({
      env: { CRM_DATABASE_URL: url.toString(), CRM_DB_PATH: join(dir, "crm.db"), CRM_LOG_LEVEL: "error" },
      expectKey: true,
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop("SIGKILL");
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ready = async () => (await fetch(`${server.origin}/readyz`)).status;

  test("/readyz is 503 while the database cannot be reached, and 200 again once it is back; the process never exits", async () => {
    const api = makeApi(server.baseUrl, async () => server.key);
    expect((await api("POST", "/contacts", { body: { firstName: "Before" } })).status).toBe(201);
    expect(await ready()).toBe(200);

    proxy.cut();
    await until(async () => (await ready()) === 503, {
      timeoutMs: 15_000,
      what: () => `/readyz 503 while PostgreSQL is cut off (stderr: ${server.stderr()} stdout: ${server.stdout().slice(-2000)})`,
    });
    const during = await api("GET", "/contacts/CR-1");
    expect(during.status).toBe(500);
    expect(during.json).toMatchObject({ success: false, code: "ERR_INTERNAL", statusCode: 500 });
    expect(during.text).not.toMatch(/ECONN|postgres|SELECT/i);
    expect(server.proc.exitCode).toBeNull();

    proxy.restore();
    await until(async () => (await ready()) === 200, { timeoutMs: 15_000, what: "/readyz 200 once PostgreSQL is back" });
    const after = await api("GET", "/contacts/CR-1");
    expect(after.status).toBe(200);
    expect(after.json.firstName).toBe("Before");
    expect((await api("POST", "/contacts", { body: { firstName: "After" } })).json.contactId).toBe("CR-2");
    expect(server.proc.exitCode).toBeNull();
  }, 60_000);
});
