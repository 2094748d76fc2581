/**
 * Several nodes on one PostgreSQL database (docs/scaling.md §6), black box: two `crm serve`
 * processes share a fresh database (test/multinode/nodes.ts) and are spoken to over HTTP;
 * the admin CLI runs as a real process on the same database. These rules only exist on
 * PostgreSQL, so this file runs on it whatever CRM_TEST_BACKEND says.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { walk, type Api, type ApiResponse } from "../helpers/server.ts";
import { KEY_PATTERN, REPO_ROOT } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";
import { newCluster, startAll, type Cluster } from "./nodes.ts";

// Every test starts two server processes and runs the CLI several times.
setDefaultTimeout(120_000);

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close();
});

async function cluster(env: Record<string, string> = {}): Promise<Cluster> {
  const c = await newCluster(env);
  clusters.push(c);
  return c;
}

/** Two nodes A and B on a fresh database, and a project (made by the CLI) with an every-scope key. */
async function twoNodes(project: Parameters<Cluster["project"]>[0] = {}) {
  const c = await cluster();
  const [a, b] = await startAll(c, ["A", "B"]);
  const p = await c.project(project);
  return { c, a: a!, b: b!, p, apiA: a!.api(p.key), apiB: b!.api(p.key) };
}

const contactNumber = (contactId: string) => Number(/^CR-(\d+)$/.exec(contactId)?.[1]);

describe("two nodes share one database", () => {
  test("a contact written on node A is read on node B: GET one, list and search", async () => {
    const { apiA, apiB } = await twoNodes();
    const created = await apiA("POST", "/contacts", { body: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", tags: ["vip"] } });
    expectStatus(created, 201);
    expect(created.json.contactId).toBe("CR-1");

    const one = await apiB("GET", "/contacts/CR-1");
    expectStatus(one, 200);
    const { duplicateSignal, ...contact } = one.json;
    expect(contact).toEqual(created.json);
    expect(duplicateSignal).toBeDefined();

    const list = await apiB("GET", "/contacts");
    expectStatus(list, 200);
    expect(list.json.data).toEqual([created.json]);

    const search = await apiB("GET", "/contacts", { query: { search: "lovel" } });
    expectStatus(search, 200);
    expect(search.json.data.map((x: any) => x.contactId)).toEqual(["CR-1"]);
  });

  test("a key created by the CLI works on both nodes, and its revocation by the CLI is seen by both within 2 s", async () => {
    const { c, a, b, p } = await twoNodes();
    const k = await c.key(p.id);
    expectStatus(await a.api(k.key)("GET", "/ping"), 200);
    expectStatus(await b.api(k.key)("GET", "/ping"), 200);

    expect(await c.cli(["key", "revoke", k.id, "--json"])).toEqual({ id: k.id, revoked: true });
    // The revocation is committed when the CLI exits; each node must see it within 2 s.
    // Both polls take from the key's one bucket (120 a minute): 50 ms apart they stay far below it.
    const refused = (api: Api, node: string) => {
      let last = "";
      return until(
        async () => {
          const r = await api("GET", "/ping");
          last = `${r.status} ${r.text.slice(0, 200)}`;
          return r.status === 401 ? r : undefined;
        },
        { timeoutMs: 2_000, intervalMs: 50, what: () => `node ${node} to refuse the revoked key (last answer: ${last})` },
      );
    };
    const [onA, onB] = await Promise.all([refused(a.api(k.key), "A"), refused(b.api(k.key), "B")]);
    expectError(onA, "ERR_UNAUTHORIZED");
    expectError(onB, "ERR_UNAUTHORIZED");
    // And it stays refused on both.
    expectError(await a.api(k.key)("GET", "/ping"), "ERR_UNAUTHORIZED");
    expectError(await b.api(k.key)("GET", "/ping"), "ERR_UNAUTHORIZED");
    // The project's other key is untouched.
    expectStatus(await a.api(p.key)("GET", "/ping"), 200);
  });
});

describe("limits hold across nodes", () => {
  test("a key's rate limit is shared by the nodes: 6 a minute split over A and B succeed, the 7th is 429 on either", async () => {
    // 6 a minute refills one token every 10 s: far longer than the 8 requests take.
    const { apiA, apiB } = await twoNodes({ rateLimitPerMinute: 6 });
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await (i % 2 === 0 ? apiA : apiB)("GET", "/ping");
      expectStatus(res, 200);
      expect(res.headers.get("ratelimit-limit")).toBe("6");
      remaining.push(res.headers.get("ratelimit-remaining")!);
    }
    // One bucket: each request, whichever node it reached, took from the same count.
    expect(remaining).toEqual(["5", "4", "3", "2", "1", "0"]);
    for (const api of [apiA, apiB]) {
      const refused = await api("GET", "/ping");
      expectError(refused, "ERR_RATE_LIMITED");
      expect(refused.headers.get("ratelimit-remaining")).toBe("0");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
  });

  test("the contact quota is exact across nodes: 40 concurrent creates over A and B with a quota of 20 give 20 × 201 (CR-1..CR-20) and 20 × 402", async () => {
    const { apiA, apiB } = await twoNodes({ contactQuota: 20 });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? apiA : apiB)("POST", "/contacts", { body: { firstName: `Quota${i}`, email: `quota${i}@example.com` } })),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(created).toHaveLength(20);
    expect(refused).toHaveLength(20);
    for (const r of refused) expectError(r, "ERR_QUOTA_EXCEEDED");
    // Contact numbers without gap or duplicate.
    const numbers = created.map((r) => contactNumber(r.json.contactId)).sort((x, y) => x - y);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const { items } = await walk(apiB, "/contacts", { limit: 200 });
    expect(items.map((x) => x.contactId).sort()).toEqual(created.map((r) => r.json.contactId).sort());
    // The quota stays full from either node.
    expectError(await apiA("POST", "/contacts", { body: { firstName: "Late" } }), "ERR_QUOTA_EXCEEDED");
    expectError(await apiB("POST", "/contacts", { body: { firstName: "Late" } }), "ERR_QUOTA_EXCEEDED");
  });
});

describe("idempotency holds across nodes", () => {
  /** The contact one Idempotency-Key's request created, once, however many nodes it reached. */
  const post = (api: Api, key: string, body: object) => api("POST", "/contacts", { body, headers: { "Idempotency-Key": key } });

  test("an Idempotency-Key used on node A replays on node B: same status and body, Idempotent-Replayed: true, no second contact", async () => {
    const { apiA, apiB } = await twoNodes();
    const body = { firstName: "Idem", email: "idem@example.com" };
    const first = await post(apiA, "idem-across-nodes", body);
    expectStatus(first, 201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await post(apiB, "idem-across-nodes", body);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    const { items } = await walk(apiA, "/contacts");
    expect(items.map((x) => x.contactId)).toEqual([first.json.contactId]);
    // Another body under the same key is refused on the other node too.
    expectError(await post(apiB, "idem-across-nodes", { firstName: "Other" }), "ERR_IDEMPOTENCY_KEY_REUSED", "Idempotency-Key");
  });

  test("concurrent first calls with one Idempotency-Key on A and B create once (10 keys): one 201, the other a replay of it or 409", async () => {
    const { apiA, apiB } = await twoNodes();
    const pairs: [ApiResponse, ApiResponse][] = [];
    for (let i = 0; i < 10; i++) {
      const body = { firstName: `Race${i}`, email: `race${i}@example.com` };
      const [onA, onB] = await Promise.all([post(apiA, `race-${i}`, body), post(apiB, `race-${i}`, body)]);
      pairs.push([onA, onB]);
    }
    const originals: ApiResponse[] = [];
    for (const pair of pairs) {
      const fresh = pair.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
      expect(fresh, pair.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join(" | ")).toHaveLength(1);
      const original = fresh[0]!;
      const other = pair.find((r) => r !== original)!;
      if (other.status === 409) expectError(other, "ERR_CONFLICT");
      else {
        expect(other.status).toBe(201);
        expect(other.headers.get("idempotent-replayed")).toBe("true");
        expect(other.text).toBe(original.text);
      }
      originals.push(original);
    }
    // Exactly one contact per key.
    const { items } = await walk(apiA, "/contacts", { limit: 200 });
    expect(items.map((x) => x.contactId).sort()).toEqual(originals.map((r) => r.json.contactId).sort());
    expect(items).toHaveLength(10);
    // Afterwards, either node replays the one answer.
    for (const [i, original] of originals.entries()) {
      const body = { firstName: `Race${i}`, email: `race${i}@example.com` };
      for (const api of [apiA, apiB]) {
        const r = await post(api, `race-${i}`, body);
        expect(r.headers.get("idempotent-replayed")).toBe("true");
        expect(r.text).toBe(original.text);
      }
    }
  });

  test("concurrent interaction creates with one uniqueIdentifier on A and B create one log (10 pairs): one 201, the other 200 with the same log", async () => {
    const { apiA, apiB } = await twoNodes();
    expectStatus(await apiA("POST", "/contacts", { body: { firstName: "Timeline" } }), 201);
    for (let i = 0; i < 10; i++) {
      const body = { type: "note", note: `note ${i}`, uniqueIdentifier: `uid-${i}` };
      const pair = await Promise.all([apiA, apiB].map((api) => api("POST", "/contacts/CR-1/interactions", { body })));
      const summary = pair.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join(" | ");
      expect(pair.map((r) => r.status).sort(), summary).toEqual([200, 201]);
      expect(pair[0]!.json, summary).toEqual(pair[1]!.json);
    }
    const { items } = await walk(apiB, "/contacts/CR-1/interactions", { limit: 200 });
    expect(items.map((l) => l.uniqueIdentifier).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `uid-${i}`).sort());
    expect(new Set(items.map((l) => l.id)).size).toBe(10);
  });
});

describe("nodes starting together", () => {
  test("two nodes starting together on an empty database both start; the bootstrap (one default project, one printed key) and each migration happen once", async () => {
    // Info level: the "listening" line comes after the bootstrap key on stdout, so once
    // both nodes printed it, whatever key they would print is in.
    const c = await cluster({ CRM_LOG_LEVEL: "info" });
    const [a, b] = await startAll(c, ["A", "B"]);
    const nodes = [a!, b!];
    await until(() => nodes.every((n) => n.process.stdout().includes('"msg":"listening"')), { timeoutMs: 10_000, what: "both nodes' listening lines" });
    const printed = nodes.map((n) => n.process.stdout().match(new RegExp(KEY_PATTERN.source, "g")) ?? []);
    expect(printed.map((keys) => keys.length).sort()).toEqual([0, 1]);
    const key = printed.flat()[0]!;
    // The printed key works on both nodes.
    for (const n of nodes) expectStatus(await n.api(key)("GET", "/ping"), 200);

    const db = await c.sql();
    const projects = await db.query("SELECT name FROM projects");
    expect(projects.rows).toEqual([{ name: "default" }]);
    expect((await db.query("SELECT count(*)::int AS n FROM api_keys")).rows).toEqual([{ n: 1 }]);
    const migrations = await db.query("SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name ORDER BY name");
    const files = readdirSync(join(REPO_ROOT, "db/postgres"))
      .filter((f) => f.endsWith(".sql"))
      .map((f) => f.replace(/\.sql$/, ""))
      .sort();
    expect(migrations.rows).toEqual(files.map((name) => ({ name, n: 1 })));
  });
});
