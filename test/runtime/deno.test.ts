/**
 * Deno-portable, proven (docs/operations.md §1): the same server started under Deno 2 with
 * node:sqlite behind src/runtime answers the core API, replays a uniqueIdentifier, delivers
 * a signed webhook through node:http with its pinned `lookup`, the admin CLI runs under
 * Deno on the same database, and the admin console renders (hono/jsx); on SQLite and on
 * PostgreSQL. Run by `npm run test:deno` (CRM_TEST_DENO=1); plain `bun test` skips it so
 * CI does not run it twice.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Webhook } from "standardwebhooks";
import { ADMIN_PASSWORD, AdminClient } from "../helpers/admin.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { createTestDatabase } from "../helpers/postgres.ts";
import { until } from "../helpers/until.ts";
import { DENO_RUN, REPO_ROOT, lastJson, run, startServerProcess, type Started } from "./process.ts";

const enabled = process.env.CRM_TEST_DENO === "1";

// Both backends (docs/scaling.md §6): node:sqlite, and PostgreSQL through `pg` under Deno.
for (const backend of ["sqlite", "postgres"] as const) describe.skipIf(!enabled)(`the server under Deno (npm run serve:deno) on ${backend}`, () => {
  let dir: string;
  let env: Record<string, string>;
  let server: Started;
  let receiver: Receiver | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "crm-deno-test-"));
    env = {
      ...(process.env as Record<string, string>),
      CRM_DB_PATH: join(dir, "crm.db"),
      CRM_ENV: "sandbox",
      CRM_LOG_LEVEL: "info",
      CRM_OUTBOX_POLL_MS: "100",
      CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s",
      CRM_WEBHOOK_TIMEOUT_MS: "3000",
      ...(backend === "postgres" ? { CRM_DATABASE_URL: await createTestDatabase() } : {}),
    };
    receiver = await startReceiver();
    server = await startServerProcess([...DENO_RUN, "src/main.ts", "serve"], { env, timeoutMs: 60_000 });
    console.log(`deno time-to-ready: ${server.readyMs.toFixed(0)} ms`);
  }, 90_000);

  afterAll(async () => {
    const code = await server?.stop();
    await receiver?.stop();
    rmSync(dir, { recursive: true, force: true });
    // SIGTERM drains and exits 0 under Deno too (docs/operations.md §6.2).
    expect(code).toBe(0);
  }, 30_000);

  test("it reports the deno runtime and a sandbox key", () => {
    expect(server.key).toStartWith("crm_test_");
    const listening = server.stdout().split("\n").find((line) => line.includes('"msg":"listening"'));
    expect(JSON.parse(listening!).runtime).toBe("deno");
    expect(server.stderr()).toBe("");
  });

  let contactId: string;

  test("create, get, patch a contact", async () => {
    const created = await server.api("POST", "/contacts", {
      body: { firstName: "Dina", lastName: "Deno", email: "Dina@Example.com", subscribed: true, tags: ["vip"] },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toContain(created.json.contactId);
    expect(created.json.subscribed).toBe(true);
    expect(created.json.tags.map((t: { name: string }) => t.name)).toEqual(["vip"]);
    contactId = created.json.contactId;

    const got = await server.api("GET", `/contacts/${contactId}`);
    expect(got.status).toBe(200);
    expect(got.json.firstName).toBe("Dina");
    expect(got.json.duplicateSignal).toBeDefined();

    const patched = await server.api("PATCH", `/contacts/${contactId}`, { body: { lastName: "Node", subscribed: false, phone: null } });
    expect(patched.status).toBe(200);
    expect(patched.json.lastName).toBe("Node");
    expect(patched.json.subscribed).toBe(false);
  });

  test("list and search", async () => {
    const other = await server.api("POST", "/contacts", { body: { firstName: "Otto", businessName: "Other Ltd" } });
    expect(other.status).toBe(201);
    const list = await server.api("GET", "/contacts", { query: { limit: 1 } });
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.pagination.hasMore).toBe(true);
    const next = await server.api("GET", "/contacts", { query: { limit: 1, cursor: list.json.pagination.nextCursor } });
    expect(next.json.pagination.hasMore).toBe(false);
    const ids = [...list.json.data, ...next.json.data].map((c: { contactId: string }) => c.contactId).sort();
    expect(ids).toEqual([contactId, other.json.contactId].sort());

    const search = await server.api("GET", "/contacts", { query: { search: "dina" } });
    expect(search.status).toBe(200);
    expect(search.json.data.map((c: { contactId: string }) => c.contactId)).toEqual([contactId]);
    const byEmail = await server.api("GET", "/contacts", { query: { search: "dina@ex" } });
    expect(byEmail.json.data).toHaveLength(1);
  });

  test("an interaction with a uniqueIdentifier: 201, then 200 with the same log", async () => {
    const body = { type: "note", note: "first", uniqueIdentifier: "deno-smoke-1" };
    const first = await server.api("POST", `/contacts/${contactId}/interactions`, { body });
    expect(first.status).toBe(201);
    const replay = await server.api("POST", `/contacts/${contactId}/interactions`, { body: { ...body, note: "second" } });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(first.json);
    const logs = await server.api("GET", `/contacts/${contactId}/interactions`);
    expect(logs.json.data).toHaveLength(1);
  });

  test("a webhook is delivered, signed, to a loopback receiver (node:http with a pinned lookup)", async () => {
    const url = receiver!.url;
    const hook = await server.api("POST", "/webhooks", { body: { url, events: ["contact.created"] } });
    expect(hook.status).toBe(201);
    const ping = await server.api("POST", `/webhooks/${hook.json.id}/test`);
    expect(ping.status).toBe(200);
    expect(ping.json.delivered).toBe(true);

    const created = await server.api("POST", "/contacts", { body: { firstName: "Hooked" } });
    expect(created.status).toBe(201);
    const delivery = await until(() => receiver!.requests.find((r) => r.text.includes('"contact.created"')), { timeoutMs: 15_000, what: "the contact.created delivery" });
    const payload = JSON.parse(delivery.text);
    expect(payload.data.contact.contactId).toBe(created.json.contactId);
    // Standard Webhooks verification with the subscription's secret.
    const verified = new Webhook(hook.json.secret.slice("whsec_".length)).verify(delivery.text, {
      "webhook-id": delivery.headers["webhook-id"]!,
      "webhook-timestamp": delivery.headers["webhook-timestamp"]!,
      "webhook-signature": delivery.headers["webhook-signature"]!,
    });
    expect(verified).toEqual(payload);
    // The attempt is recorded once the receiver has answered, so it may trail the arrival a little.
    const recorded = async () => {
      const attempts = await server.api("GET", `/webhooks/${hook.json.id}/attempts`);
      return attempts.json.data.some((a: { statusCode: number }) => a.statusCode === 200);
    };
    await until(recorded, { timeoutMs: 5_000, what: "the 200 attempt to be recorded" });
  });

  test("the admin CLI runs under Deno on the same database while the server runs", async () => {
    const projects = lastJson((await run([...DENO_RUN, "src/main.ts", "project", "list", "--json"], { env })).stdout);
    const project = projects.data.find((p: { name: string }) => p.name === "default");
    expect(project.contactCount).toBe(3);
    const created = lastJson(
      (await run([...DENO_RUN, "src/main.ts", "key", "create", "--project", project.id, "--scopes", "contacts:read", "--json"], { env })).stdout,
    );
    expect(created.key).toStartWith("crm_test_");
    const list = await server.api("GET", "/contacts", { key: created.key });
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(3);
    const denied = await server.api("POST", "/contacts", { key: created.key, body: { firstName: "x" } });
    expect(denied.status).toBe(403);
  });

  test("the admin console renders under Deno (hono/jsx): an admin made by the Deno CLI signs in and creates a project", async () => {
    const email = `deno-${backend}@example.com`;
    const made = await run([...DENO_RUN, "src/main.ts", "admin", "create", "--email", email, "--json"], { env, stdin: `${ADMIN_PASSWORD}\n` });
    expect(JSON.parse(made.stdout.trim()).email).toBe(email);
    const client = new AdminClient(server.origin);
    await client.signIn(email);
    const projects = await client.get("/admin/projects");
    expect(projects.status).toBe(200);
    expect(projects.text).toStartWith("<!DOCTYPE html>");
    expect(projects.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const created = await client.post("/admin/projects", { name: "made under deno" });
    expect(created.status).toBe(303);
    const list = lastJson((await run([...DENO_RUN, "src/main.ts", "project", "list", "--json"], { env })).stdout);
    expect(list.data.map((p: { name: string }) => p.name)).toContain("made under deno");
  });

  test("GET /docs/scalar.js answers the Scalar bundle embedded by the text import (docs/api.md §16.2), gzip too", async () => {
    const bundle = readFileSync(join(REPO_ROOT, "node_modules/@scalar/api-reference/dist/browser/standalone.js"));
    const page = await fetch(`${server.origin}/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('src="/docs/scalar.js?v=');
    const plain = await fetch(`${server.origin}/docs/scalar.js`, { headers: { "Accept-Encoding": "identity" } });
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(Buffer.from(await plain.arrayBuffer()).equals(bundle)).toBe(true);
    const gzip = await fetch(`${server.origin}/docs/scalar.js`, { headers: { "Accept-Encoding": "gzip" }, decompress: false });
    expect(gzip.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).equals(bundle)).toBe(true);
  });

  test("concurrent creates share transactions (group commit): all land, one refused leaves nothing", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        server.api("POST", "/contacts", { body: i === 7 ? { firstName: "Bad", email: "nope" } : { firstName: `Deno ${i}` } }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(19);
    expect(answers[7]!.status).toBe(422);
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.json.contactId));
    expect(ids.size).toBe(19);
    for (const id of ids) expect((await server.api("GET", `/contacts/${id}`)).status).toBe(200);
  });
});
