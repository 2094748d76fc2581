/**
 * The console's sign-in tries on two nodes of one PostgreSQL database (docs/security.md §4, docs/scaling.md §6;
 * docs/security.md §4): the tries of one email or one address are counted in the shared
 * database before any password is checked, so a burst split over the nodes gets ten
 * checks in all, not ten per node. These rules only exist on PostgreSQL, so this file runs
 * on it whatever CRM_TEST_BACKEND says.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, createAdminAccount, type AdminPage } from "../helpers/admin.ts";
import { newCluster, startAll, type Cluster } from "./nodes.ts";

// Every test starts two server processes and runs the CLI.
setDefaultTimeout(120_000);

const clusters: Cluster[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Two nodes behind a trusted proxy (loopback), so X-Forwarded-For names each request's client. */
async function twoNodes() {
  const c = await newCluster({ CRM_TRUST_PROXY: "127.0.0.1" });
  clusters.push(c);
  const nodes = await startAll(c, ["A", "B"]);
  const dir = mkdtempSync(join(tmpdir(), "crm-lockout-cli-"));
  dirs.push(dir);
  const env = { ...(process.env as Record<string, string>), ...c.env, CRM_DB_PATH: join(dir, "crm.db") };
  const account = await createAdminAccount(env);
  const clients = await Promise.all(
    nodes.map(async (node) => {
      const client = new AdminClient(node.origin);
      await client.get("/admin/sign-in");
      return client;
    }),
  );
  return { account, clients };
}

function tally(pages: AdminPage[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const p of pages) counts[p.status] = (counts[p.status] ?? 0) + 1;
  return counts;
}

describe("two nodes share one budget of sign-in tries", () => {
  test("40 wrong passwords at once for one email, from 40 addresses, split over A and B: exactly 10 are checked (401) in all, 30 are 429, and the right password is then refused on both", async () => {
    const { account, clients } = await twoNodes();
    const pages = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        clients[i % 2]!.post("/admin/sign-in", { email: account.email, password: `wrong ${i}` }, { "X-Forwarded-For": `203.0.113.${i + 1}` }),
      ),
    );
    expect(tally(pages)).toEqual({ 401: 10, 429: 30 });
    for (const client of clients) {
      const refused = await client.post("/admin/sign-in", { email: account.email, password: account.password }, { "X-Forwarded-For": "198.51.100.7" });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });

  test("40 wrong passwords at once from one address, for 40 emails, split over A and B: exactly 10 are checked (401) in all, 30 are 429", async () => {
    const { account, clients } = await twoNodes();
    const pages = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        clients[i % 2]!.post("/admin/sign-in", { email: `guess${i}@example.com`, password: "wrong password!" }, { "X-Forwarded-For": "203.0.113.200" }),
      ),
    );
    expect(tally(pages)).toEqual({ 401: 10, 429: 30 });
    for (const client of clients) {
      expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, { "X-Forwarded-For": "203.0.113.200" })).status).toBe(429);
    }
    expect((await clients[1]!.post("/admin/sign-in", { email: account.email, password: account.password }, { "X-Forwarded-For": "203.0.113.201" })).status).toBe(303);
  });
});
