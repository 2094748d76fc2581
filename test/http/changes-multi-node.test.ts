/**
 * The change feed's order across nodes (docs/api.md §19.1, docs/scaling.md §8): seq is per
 * project, has no gaps, and is visible in order, so a follower polling GET /changes with
 * nextCursor never misses a change, even while two nodes on one PostgreSQL database write
 * the same project at once. With a plain sequence, seq n+1 could commit (and be read past)
 * before n; the project's counter row, locked from the moment a seq is taken to the commit,
 * is what keeps the guarantee. Only meaningful on PostgreSQL (SQLite has one writer): skipped
 * on SQLite. The nodes are those of test/multinode/nodes.ts.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Api, ApiResponse } from "../helpers/server.ts";
import { postgresOnly } from "../helpers/postgres.ts";
import { newCluster, startAll, type Cluster } from "../multinode/nodes.ts";

// Two server processes, the CLI, and several seconds of writes.
setDefaultTimeout(180_000);

/** How long the writers write, and how many write at once (half on each node). */
const WRITE_MS = 6_000;
const WRITERS = 8;

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close();
});

interface ChangeRecord {
  seq: number;
  at: string;
  object: "contact" | "interaction_log";
  id: string;
  action: string;
  changes?: Array<{ field: string; from: unknown; to: unknown }>;
}

/** Two nodes A and B on a fresh database and a project whose key is never rate limited in this test. */
async function twoNodes() {
  const c = await newCluster();
  clusters.push(c);
  const [a, b] = await startAll(c, ["A", "B"]);
  const p = await c.project({ rateLimitPerMinute: 1_000_000, contactCreatesPerHour: 1_000_000 });
  return { c, p, nodes: [a!.api(p.key), b!.api(p.key)] as const };
}

function ok(res: ApiResponse, ...statuses: number[]): ApiResponse {
  if (!statuses.includes(res.status)) throw new Error(`unexpected ${res.status}: ${res.text.slice(0, 500)}`);
  return res;
}

/** One page of the feed after `cursor` from `api`. */
async function feedPage(api: Api, cursor: string | undefined, limit = 1000) {
  const res = ok(await api("GET", "/changes", { query: { limit, ...(cursor ? { after: cursor } : {}) } }), 200);
  return { data: res.json.data as ChangeRecord[], next: res.json.pagination.nextCursor as string };
}

/** The whole feed read afresh from its start. */
async function fullRead(api: Api): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await feedPage(api, cursor);
    if (page.data.length === 0) return out;
    out.push(...page.data);
    cursor = page.next;
  }
}

/** The first place where `seqs` is not 1, 2, 3, …: a gap, a repeat or a change out of order; null when it is. */
function firstBreak(seqs: number[]): string | null {
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i + 1) return `position ${i}: expected seq ${i + 1}, saw ${seqs[i]} (after ${seqs.slice(Math.max(0, i - 3), i).join(", ")})`;
  }
  return null;
}

/** A small deterministic generator per writer, so a failing run can be read again. */
function random(seed: number) {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe.skipIf(postgresOnly)("the change feed across two nodes on one PostgreSQL database (docs/api.md §19.1, docs/scaling.md §8)", () => {
  test("a follower polling GET /changes on both nodes while 8 writers change one project on both sees every seq exactly once, in order 1..N, the same records as a fresh full read, and each contact's last record agrees with the contact", async () => {
    const { nodes } = await twoNodes();
    const shared: string[] = [];
    const outcomes: Record<string, number> = {};
    const count = (what: string) => (outcomes[what] = (outcomes[what] ?? 0) + 1);
    // A few contacts every writer shares from the start, so PATCHes of one contact race on both nodes.
    for (let i = 0; i < 6; i++) shared.push(ok(await nodes[i % 2]("POST", "/contacts", { body: { firstName: `Shared${i}`, lastName: "v0" } }), 201).json.contactId);

    const deadline = performance.now() + WRITE_MS;
    const writer = async (w: number) => {
      const api = nodes[w % 2];
      const next = random(w + 1);
      const pick = () => shared[Math.floor(next() * shared.length)]!;
      for (let i = 0; performance.now() < deadline; i++) {
        const roll = next();
        if (roll < 0.2) {
          shared.push(ok(await api("POST", "/contacts", { body: { firstName: `W${w}`, lastName: `n${i}`, email: `w${w}.${i}@example.com` } }), 201).json.contactId);
          count("created");
        } else if (roll < 0.55) {
          const body = next() < 0.3 ? { lastName: `w${w}-${i}`, tags: next() < 0.5 ? ["hot"] : [] } : { lastName: `w${w}-${i}` };
          count(`patch ${ok(await api("PATCH", `/contacts/${pick()}`, { body }), 200, 404).status}`);
        } else if (roll < 0.7) {
          count(`log ${ok(await api("POST", `/contacts/${pick()}/interactions`, { body: { type: "note", note: `w${w} ${i}` } }), 201, 404).status}`);
        } else if (roll < 0.82) {
          const id = pick();
          const deleted = ok(await api("DELETE", `/contacts/${id}`), 204, 404);
          count(`delete ${deleted.status}`);
          // Restored on the other node, so a trash and its restore cross the nodes too.
          if (deleted.status === 204) count(`restore ${ok(await nodes[(w + 1) % 2]("POST", `/contacts/${id}/restore`), 200, 404).status}`);
        } else if (roll < 0.91) {
          // Refused writes: neither may leave a gap.
          count(`invalid ${ok(await api("PATCH", `/contacts/${pick()}`, { body: { email: "not an email" } }), 422, 404).status}`);
        } else {
          count(`stale ${ok(await api("PATCH", `/contacts/${pick()}`, { body: { lastName: "stale" }, headers: { "If-Match": '"999999"' } }), 412, 404).status}`);
        }
      }
    };

    // The follower: as fast as it can, alternating nodes, until the writers are done and a page comes back empty.
    let writing = true;
    const followed: ChangeRecord[] = [];
    let polls = 0;
    const follower = (async () => {
      let cursor: string | undefined;
      for (;;) {
        const done = !writing;
        const page = await feedPage(nodes[polls++ % 2], cursor);
        followed.push(...page.data);
        cursor = page.next;
        if (done && page.data.length === 0) return;
      }
    })();
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    writing = false;
    await follower;

    // The run did what it was meant to: many changes of every kind, refusals among them, many polls.
    expect(outcomes.created ?? 0).toBeGreaterThan(5);
    expect(outcomes["patch 200"] ?? 0).toBeGreaterThan(10);
    expect(outcomes["log 201"] ?? 0).toBeGreaterThan(2);
    expect(outcomes["restore 200"] ?? 0).toBeGreaterThan(0);
    expect((outcomes["invalid 422"] ?? 0) + (outcomes["stale 412"] ?? 0)).toBeGreaterThan(2);
    expect(polls).toBeGreaterThan(10);

    // Every seq exactly once, in order, without a gap; and the same records as a fresh read.
    const seqs = followed.map((r) => r.seq);
    expect(firstBreak(seqs)).toBeNull();
    const fresh = await fullRead(nodes[0]);
    expect(fresh.length).toBe(followed.length);
    expect(followed).toEqual(fresh);

    // Each contact as the follower's records leave it agrees with the contact: its lastName,
    // whether it is in the trash, and its version (1, +1 for each update and each restore).
    const mirror = new Map<string, { lastName: unknown; trashed: boolean; version: number }>();
    for (const r of followed) {
      if (r.object !== "contact") continue;
      const m = mirror.get(r.id) ?? { lastName: null, trashed: false, version: 0 };
      if (r.action === "created") m.version = 1;
      if (r.action === "updated" || r.action === "restored") m.version += 1;
      m.trashed = r.action === "deleted" ? true : r.action === "restored" ? false : m.trashed;
      for (const c of r.changes ?? []) if (c.field === "lastName") m.lastName = c.to;
      mirror.set(r.id, m);
    }
    expect([...mirror.keys()].sort()).toEqual([...new Set(shared)].sort());
    for (const [id, m] of mirror) {
      const got = await nodes[1]("GET", `/contacts/${id}`);
      if (m.trashed) {
        expect(got.status, id).toBe(404);
        continue;
      }
      expect(got.status, id).toBe(200);
      expect({ id, lastName: got.json.lastName, version: got.json.version }).toEqual({ id, lastName: m.lastName, version: m.version });
    }
  });

  test("a refused write leaves no gap: after a 422 PATCH and an If-Match 412 on one node, the next change on the other is the next seq", async () => {
    const { nodes } = await twoNodes();
    const [a, b] = nodes;
    const id = ok(await a("POST", "/contacts", { body: { firstName: "Gap", lastName: "v1" } }), 201).json.contactId;
    const before = await fullRead(b);
    const last = before.at(-1)!.seq;

    ok(await a("PATCH", `/contacts/${id}`, { body: { email: "not an email" } }), 422);
    ok(await a("PATCH", `/contacts/${id}`, { body: { lastName: "v2" }, headers: { "If-Match": '"7"' } }), 412);
    ok(await a("POST", "/contacts", { body: { email: "also not an email" } }), 422);
    ok(await b("PATCH", `/contacts/${id}`, { body: { lastName: "v2" }, headers: { "If-Match": '"1"' } }), 200);

    const after = await fullRead(a);
    expect(after.map((r) => r.seq)).toEqual([...before.map((r) => r.seq), last + 1]);
    expect(after.at(-1)).toMatchObject({ seq: last + 1, id, action: "updated", changes: [{ field: "lastName", from: "v1", to: "v2" }] });
  });
});
