/**
 * docs/api.md §7: no network I/O while a write transaction is open. The real service
 * (database, group commit, routes, socket) runs in this process with one thing replaced:
 * the DNS resolver, which holds lookups of one host until the test lets them go. The CLI
 * runs async (runCommand): a blocking spawn would freeze the service in this process too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { heldResolver, startInProcess, type InProcessServer } from "../helpers/in-process.ts";

let server: InProcessServer;
const held = heldResolver("slow.example.com");

beforeAll(async () => {
  server = await startInProcess({
    env: { CRM_ENV: "production" },
    overrides: { resolve: held.resolve },
  });
}, 30_000);

afterAll(async () => {
  held.release();
  await server?.stop();
});

/** Settles with the answer, or with "still waiting" after `ms` (a deadline, not a speed check). */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), ms))]);

test("a webhook create waiting on a slow DNS lookup never holds up another project's writes and reads", async () => {
  const a = (await server.newProject({ name: "slow-dns-a" })).api;
  const b = (await server.newProject({ name: "slow-dns-b" })).api;
  let aAnswered = false;
  const slowCreate = a("POST", "/webhooks", { body: { url: "https://slow.example.com/hook", events: ["*"] } }).then((res) => {
    aAnswered = true;
    return res;
  });
  await held.started;
  const create = await within(b("POST", "/contacts", { body: { firstName: "Unblocked" } }), 10_000);
  expect(create).not.toBe("still waiting");
  expectStatus(create as Awaited<typeof slowCreate>, 201);
  const list = await within(b("GET", "/contacts"), 10_000);
  expect(list).not.toBe("still waiting");
  expect(aAnswered).toBe(false);
  held.release();
  expectStatus(await slowCreate, 201);
}, 30_000);

test("a URL refused by the address policy is still 422 url, decided before the transaction", async () => {
  const a = (await server.newProject({ name: "slow-dns-c" })).api;
  expectError(await a("POST", "/webhooks", { body: { url: "https://127.0.0.1/hook", events: ["*"] } }), "ERR_FORM_VALIDATION", "url");
  const ok = await a("POST", "/webhooks", { body: { url: "https://hooks.example.com/x", events: ["*"] } });
  expectStatus(ok, 201);
  expectError(await a("PATCH", `/webhooks/${ok.json.id}`, { body: { url: "https://10.0.0.1/x" } }), "ERR_FORM_VALIDATION", "url");
}, 30_000);
