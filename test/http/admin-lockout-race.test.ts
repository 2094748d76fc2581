/**
 * The console's sign-in under bursts (docs/security.md §4, docs/admin.md §2; docs/security.md §4): failed
 * sign-ins are counted before the password is checked, atomically, so of a burst of any
 * size against one email or from one address at most the window's ten tries are checked
 * and the rest are refused 429 unchecked; an email longer than 254 characters is refused
 * before it is counted or stored, and never echoed back whole. On either backend
 * (CRM_TEST_BACKEND=postgres runs the server on PostgreSQL, where requests run in parallel
 * transactions). The tests connect from 127.0.0.1, which plays a trusted proxy, so
 * X-Forwarded-For gives each burst its own client address.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_PASSWORD, AdminClient, createAdminAccount, type AdminPage } from "../helpers/admin.ts";
import { pgClient } from "../helpers/postgres.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let addresses = 0;
/** A client address no other test uses (a fresh address starts with no failures). */
const freshAddress = () => `198.18.${Math.floor(++addresses / 250)}.${addresses % 250}`;
const from = (address: string) => ({ "X-Forwarded-For": address });

beforeAll(async () => {
  server = await startServer({ extraEnv: { CRM_TRUST_PROXY: "127.0.0.1" } });
}, 60_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

/** A client that has opened the sign-in page (its pre-session CSRF cookie and token). */
async function signInClient(origin = server.origin): Promise<AdminClient> {
  const client = new AdminClient(origin);
  await client.get("/admin/sign-in");
  return client;
}

/** How many answers had each status. */
function tally(pages: AdminPage[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const p of pages) counts[p.status] = (counts[p.status] ?? 0) + 1;
  return counts;
}

describe("a burst of sign-ins is checked at most ten times (docs/security.md §4)", () => {
  test("40 wrong passwords at once from one address, for one email: exactly 10 are checked (401), 30 are refused 429 with Retry-After, and then the right password is refused too", async () => {
    const account = await createAdminAccount(server.env);
    const client = await signInClient();
    const address = freshAddress();
    const pages = await Promise.all(Array.from({ length: 40 }, (_, i) => client.post("/admin/sign-in", { email: account.email, password: `wrong ${i}` }, from(address))));
    expect(tally(pages)).toEqual({ 401: 10, 429: 30 });
    for (const refused of pages.filter((p) => p.status === 429)) {
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(refused.text).toContain("Too many failed sign-ins.");
    }
    const after = await client.post("/admin/sign-in", { email: account.email, password: account.password }, from(address));
    expect(after.status).toBe(429);
  }, 60_000);

  test("40 sign-ins at once from one address with the right password sent last: at most 10 wrong ones are checked, and the right one is checked among them or refused 429", async () => {
    const account = await createAdminAccount(server.env);
    const client = await signInClient();
    const address = freshAddress();
    const pages = await Promise.all(
      Array.from({ length: 40 }, (_, i) => client.post("/admin/sign-in", { email: account.email, password: i === 39 ? account.password : `wrong ${i}` }, from(address))),
    );
    const counts = tally(pages);
    expect(Object.keys(counts).filter((s) => !["303", "401", "429"].includes(s))).toEqual([]);
    expect(counts[401] ?? 0).toBeLessThanOrEqual(10);
    expect(counts[303] ?? 0).toBeLessThanOrEqual(1);
    expect(counts[429] ?? 0).toBeGreaterThanOrEqual(29);
    if (pages[39]!.status !== 303) expect(pages[39]!.status).toBe(429);
  }, 60_000);

  test("40 wrong passwords at once for one email from 40 addresses: exactly 10 are checked (401), 30 are refused 429", async () => {
    const account = await createAdminAccount(server.env);
    const client = await signInClient();
    const pages = await Promise.all(Array.from({ length: 40 }, (_, i) => client.post("/admin/sign-in", { email: account.email, password: `wrong ${i}` }, from(freshAddress()))));
    expect(tally(pages)).toEqual({ 401: 10, 429: 30 });
    const after = await client.post("/admin/sign-in", { email: account.email, password: account.password }, from(freshAddress()));
    expect(after.status).toBe(429);
  }, 60_000);

  test("40 wrong passwords at once from one address for 40 emails: exactly 10 are checked (401), 30 are refused 429, and the address stays locked for a real account", async () => {
    const account = await createAdminAccount(server.env);
    const client = await signInClient();
    const address = freshAddress();
    const pages = await Promise.all(
      Array.from({ length: 40 }, (_, i) => client.post("/admin/sign-in", { email: `guess-${i}-${randomBytes(3).toString("hex")}@example.com`, password: "wrong password!" }, from(address))),
    );
    expect(tally(pages)).toEqual({ 401: 10, 429: 30 });
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from(address))).status).toBe(429);
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from(freshAddress()))).status).toBe(303);
  }, 60_000);

  test("a right password signs in after nine failures and gives the address its try back: the address is not locked by it", async () => {
    const account = await createAdminAccount(server.env);
    const other = await createAdminAccount(server.env);
    const client = await signInClient();
    const address = freshAddress();
    for (let i = 0; i < 9; i++) expect((await client.post("/admin/sign-in", { email: `nobody${i}@example.com`, password: "wrong password!" }, from(address))).status).toBe(401);
    expect((await client.post("/admin/sign-in", { email: account.email, password: ADMIN_PASSWORD }, from(address))).status).toBe(303);
    // Nine failures counted, the success not: one more failure is checked, and it is the tenth.
    const next = await signInClient();
    expect((await next.post("/admin/sign-in", { email: other.email, password: "wrong password!" }, from(address))).status).toBe(401);
    expect((await next.post("/admin/sign-in", { email: other.email, password: other.password }, from(address))).status).toBe(429);
  }, 60_000);
});

/** Bytes the server's database holds now: the SQLite file and its WAL, or PostgreSQL's database size. */
async function databaseBytes(): Promise<number> {
  if (!server.databaseUrl) {
    const size = (name: string) => {
      try {
        return statSync(join(server.dir, name)).size;
      } catch {
        return 0;
      }
    };
    return size("crm.db") + size("crm.db-wal");
  }
  const client = await pgClient(server.databaseUrl);
  try {
    const { rows } = await client.query("SELECT pg_database_size(current_database())::bigint AS bytes");
    return Number(rows[0].bytes);
  } finally {
    await client.end();
  }
}

describe("an email longer than 254 characters (docs/security.md §4)", () => {
  test("a 1,000,000-character email is refused 422 before it is counted or stored: 20 at once grow the database by less than 1 MB, no page echoes it, and one of 254 characters is still counted and checked", async () => {
    const client = await signInClient();
    const address = freshAddress();
    // Random text: PostgreSQL would compress a repeated letter to nothing and hide a stored row.
    const huge = () => `${randomBytes(750_000).toString("base64url").slice(0, 999_988)}@example.com`;
    const emails = Array.from({ length: 20 }, huge);
    expect(emails[0]!.length).toBe(1_000_000);
    const before = await databaseBytes();
    const pages = await Promise.all(emails.map((email) => client.post("/admin/sign-in", { email, password: "wrong password!" }, from(address))));
    expect(tally(pages)).toEqual({ 422: 20 });
    for (const [i, page] of pages.entries()) {
      expect(page.text).toContain("at most 254 characters");
      expect(page.text.includes(emails[i]!)).toBe(false);
      expect(page.text.length).toBeLessThan(20_000);
    }
    expect((await databaseBytes()) - before).toBeLessThan(1_000_000);
    // Not counted: the address still has its ten tries; an email of 254 characters is one of them, checked as any other.
    expect((await client.post("/admin/sign-in", { email: `${"a".repeat(242)}@example.com`, password: "wrong password!" }, from(address))).status).toBe(401);
    const account = await createAdminAccount(server.env);
    for (let i = 0; i < 8; i++) expect((await client.post("/admin/sign-in", { email: account.email, password: `wrong ${i}` }, from(address))).status).toBe(401);
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from(address))).status).toBe(303);
  }, 120_000);
});

describe("the one-time setup link under a race (docs/admin.md §1)", () => {
  test("8 posts of one setup link at once create one admin: one 303, seven 404", async () => {
    const fresh = await startServer();
    try {
      const token = /\/admin\/setup\?token=([A-Za-z0-9_-]+)/.exec(fresh.stdout())![1];
      const path = `/admin/setup?token=${token}`;
      const client = new AdminClient(fresh.origin);
      expect((await client.get(path)).status).toBe(200);
      const pages = await Promise.all(Array.from({ length: 8 }, (_, i) => client.post(path, { email: `racer${i}@example.com`, password: ADMIN_PASSWORD })));
      expect(tally(pages)).toEqual({ 303: 1, 404: 7 });
      expect((await fresh.cli(["admin", "list", "--json"])).data).toHaveLength(1);
    } finally {
      await fresh.stop();
    }
  }, 90_000);
});
