/**
 * Merge and undo under races (docs/api.md §20): two merges sharing a contact, a merge and a
 * write to one of its contacts, an undo and a write, a merge or another undo. Whatever runs at
 * once, the answers and the end state are those of one serial order, never a mix.
 *
 * How the serial orders are known: each race's two operations first run one after the other,
 * once in each order, each time on contacts of their own built as the race's are. A round
 * builds those contacts afresh and sends both operations at once; then everything a client
 * sees of it (both answers, each contact with its logs or its 308, GET /duplicates, the
 * round's change records), with ids as roles and times, round numbers and request details
 * blanked, must equal what one serial order showed. New logs sent to a contact while it is
 * merged away are checked directly: each answered 201 ends on the survivor. After each test
 * the project's feed (docs/api.md §19.1) holds every seq once in order, as a follower polling
 * through the races saw it too; each contact's last record agrees with GET (308 to the
 * survivor for a merged-away one); and the project's contact count is the number listed.
 *
 * On both backends with concurrent requests to one server; on PostgreSQL also across two
 * nodes on one database (test/multinode/nodes.ts, docs/scaling.md §6).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { postgresOnly, testBackend } from "../helpers/postgres.ts";
import { makeApi, startServer, walk, type Api, type ApiResponse, type ServerHandle } from "../helpers/server.ts";
import { newCluster, startAll, type Cluster } from "../multinode/nodes.ts";

setDefaultTimeout(120_000);

/**
 * Rounds of each race on one server (one on PostgreSQL, where the two nodes race more), and
 * across two nodes; twice as many for the cheap races of a write to a merge's contact.
 */
const ROUNDS = testBackend() === "postgres" ? 1 : 4;
const NODE_ROUNDS = 3;

const LIMITS = { rateLimitPerMinute: 1_000_000, contactCreatesPerHour: 1_000_000 };

/** One project seen through two nodes (on one server: the same one twice). */
interface Project {
  id: string;
  a: Api;
  b: Api;
  /** The position after the change records read so far, and the last seq among them. */
  cursor?: string;
  seq: number;
  /** Log ids → `log:<note>`, learnt from the feed. */
  names: Map<string, string>;
}

/** The contacts of one round by role, and the merge to undo. */
interface Fixture {
  /** The round's number, in its names, emails and phones. */
  round: number;
  ids: Record<string, string>;
  mergeId?: string;
}

type Op = (api: Api, f: Fixture) => Promise<ApiResponse>;

/** Two operations that race: the first is sent to node A, the second to node B. */
interface Race {
  name: string;
  setup: (api: Api, round: number) => Promise<Fixture>;
  ops: [Op, Op];
}

function ok(res: ApiResponse, ...statuses: number[]): ApiResponse {
  if (!statuses.includes(res.status)) throw new Error(`unexpected ${res.status}: ${res.text.slice(0, 500)}`);
  return res;
}

/** Every round of the file has a number of its own, in its names, emails and phones (so no two rounds' contacts are duplicates). */
let roundsSoFar = 0;
const nextRound = () => ++roundsSoFar;
const tagOf = (round: number) => `q${round}q`;
const suffixOf = (round: number) => String(10_000 + round).slice(-4);
const phoneOf = (area: number, round: number) => `+1${area}555${suffixOf(round)}`;

const create = async (api: Api, body: Record<string, unknown>) => ok(await api("POST", "/contacts", { body }), 201).json.contactId as string;
const note = async (api: Api, id: string, text: string, uniqueIdentifier?: string) =>
  ok(await api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: text, ...(uniqueIdentifier ? { uniqueIdentifier } : {}) } }), 201);
const merge = (survivor: string, others: string[], fields?: Record<string, string>): Op => (api, f) =>
  api("POST", `/contacts/${f.ids[survivor]}/merge`, { body: { contactIds: others.map((o) => f.ids[o]), ...(fields ? { fields: Object.fromEntries(Object.entries(fields).map(([k, role]) => [k, f.ids[role]])) } : {}) } });
const patch = (role: string, body: Record<string, unknown> | ((f: Fixture) => Record<string, unknown>)): Op => (api, f) =>
  api("PATCH", `/contacts/${f.ids[role]}`, { body: typeof body === "function" ? body(f) : body });
const addNote = (role: string, text: string): Op => (api, f) => api("POST", `/contacts/${f.ids[role]}/interactions`, { body: { type: "note", note: text } });
const undo: Op = (api, f) => api("POST", `/merges/${f.mergeId}/undo`);

/** A, B and C: A and B share an email (and a name), B and C a phone; each has logs, A, B and C one with uniqueIdentifier "u". */
async function threeAlike(api: Api, round: number): Promise<Fixture> {
  const t = tagOf(round);
  const phone = phoneOf(415, round);
  const A = await create(api, { firstName: "Ann", lastName: `Lee${t}`, email: `ann.${t}@a.example`, tags: ["a"] });
  const B = await create(api, { firstName: "Ann", lastName: `Lee${t}`, email: `ANN.${t}@a.example`, phone, notes: "from B", tags: ["b"] });
  const C = await create(api, { firstName: "Anne", lastName: `Lee${t}`, phone, businessName: `Lee Co ${t}`, website: "https://c.example", tags: ["c"] });
  await Promise.all([note(api, A, `A1 ${t}`, "u"), note(api, B, `B1 ${t}`, "u"), note(api, B, `B2 ${t}`), note(api, C, `C1 ${t}`, "u")]);
  return { round, ids: { A, B, C } };
}

/** S and a loser L with what S lacks (phone, notes); L has a log. */
async function survivorAndLoser(api: Api, round: number): Promise<Fixture> {
  const t = tagOf(round);
  const S = await create(api, { firstName: "Sam", lastName: `Ray${t}`, email: `sam.${t}@s.example`, tags: ["s"] });
  const L = await create(api, { firstName: "Samuel", lastName: `Ray${t}`, email: `sam.${t}@s.example`, phone: phoneOf(212, round), notes: "old", tags: ["l"] });
  await note(api, L, `L1 ${t}`);
  return { round, ids: { S, L } };
}

/**
 * S, then M1–M4 and last L (so L is the most recently updated, the first a merge of them all
 * takes out, and the others' work follows its logs' move); each has a log.
 */
async function survivorAndLosers(api: Api, round: number): Promise<Fixture> {
  const t = tagOf(round);
  const S = await create(api, { firstName: "Sam", lastName: `Ray${t}`, email: `sam.${t}@s.example`, tags: ["s"] });
  const ids: Record<string, string> = { S };
  for (const m of ["M1", "M2", "M3", "M4"]) {
    ids[m] = await create(api, { firstName: "Sam", lastName: `Ray${t}` });
    await note(api, ids[m]!, `${m}1 ${t}`);
  }
  ids.L = await create(api, { firstName: "Samuel", lastName: `Ray${t}`, email: `sam.${t}@s.example`, phone: phoneOf(212, round), notes: "old", tags: ["l"] });
  await note(api, ids.L, `L1 ${t}`);
  return { round, ids };
}

/** S, L1 merged into S (the merge to undo), L2 and X alike S. */
async function merged(api: Api, round: number): Promise<Fixture> {
  const t = tagOf(round);
  const S = await create(api, { firstName: "Uma", lastName: `Vo${t}`, email: `uma.${t}@u.example`, tags: ["s"] });
  const L1 = await create(api, { firstName: "Uma", lastName: `Vo${t}`, phone: phoneOf(312, round), notes: "from L1", tags: ["l1"] });
  const L2 = await create(api, { firstName: "Uma", lastName: `Vo${t}`, website: "https://l2.example", notes: "from L2", tags: ["l2"] });
  const X = await create(api, { firstName: "Uma", lastName: `Vo${t}`, email: `uma.${t}@u.example`, businessName: `Vo ${t}`, tags: ["x"] });
  await Promise.all([note(api, S, `S1 ${t}`), note(api, L1, `L1a ${t}`), note(api, L2, `L2a ${t}`)]);
  const mergeId = ok(await api("POST", `/contacts/${S}/merge`, { body: { contactIds: [L1] } }), 200).json.merge.id as string;
  return { round, ids: { S, L1, L2, X }, mergeId };
}

const MERGE_RACES: Race[] = [
  { name: "A←B | C←B", setup: threeAlike, ops: [merge("A", ["B"]), merge("C", ["B"])] },
  { name: "A←B | B←A", setup: threeAlike, ops: [merge("A", ["B"]), merge("B", ["A"])] },
  { name: "A←B | B←C", setup: threeAlike, ops: [merge("A", ["B"]), merge("B", ["C"])] },
  { name: "A←B,C | C←B", setup: threeAlike, ops: [merge("A", ["B", "C"]), merge("C", ["B"])] },
];

const WRITE_RACES: Race[] = [
  { name: "S←L | PATCH L notes, tags", setup: survivorAndLoser, ops: [merge("S", ["L"]), patch("L", { notes: "patched", tags: ["l", "p"] })] },
  { name: "S←L firstName from L | PATCH L firstName", setup: survivorAndLoser, ops: [merge("S", ["L"], { firstName: "L" }), patch("L", { firstName: "Patched" })] },
  { name: "S←L | PATCH S phone", setup: survivorAndLoser, ops: [merge("S", ["L"]), patch("S", (f) => ({ phone: phoneOf(646, f.round), tags: ["s", "p"] }))] },
  { name: "S←L,M1–M4 | POST L/interactions", setup: survivorAndLosers, ops: [merge("S", ["L", "M1", "M2", "M3", "M4"]), addNote("L", "late")] },
];

const UNDO_RACES: Race[] = [
  { name: "PATCH S tags, notes | undo", setup: merged, ops: [patch("S", { tags: ["s", "l1", "p"], notes: "patched" }), undo] },
  { name: "PATCH L1 | undo", setup: merged, ops: [patch("L1", { notes: "patched" }), undo] },
  { name: "S←L2 | undo", setup: merged, ops: [merge("S", ["L2"]), undo] },
  { name: "X←S | undo", setup: merged, ops: [merge("X", ["S"]), undo] },
  { name: "undo | undo", setup: merged, ops: [undo, undo] },
];

/** ISO timestamps (they differ between runs). */
const TIME = /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/;
/** What differs between a race and its serial runs without meaning anything: seqs, who asked, messages. */
const VOLATILE = new Set(["seq", "actor", "requestId", "message"]);

/** `value` with ids replaced by roles, the round's number and times blanked: comparable across rounds. */
function normalize(value: unknown, names: Map<string, string>, round: number): unknown {
  if (Array.isArray(value)) return value.map((v) => normalize(v, names, round));
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    // Tags, contact and interaction types: their names (ids are the project's).
    if (typeof o.id === "string" && /^(tag|ct|it)_/.test(o.id)) return o.name;
    return Object.fromEntries(Object.entries(o).filter(([k]) => !VOLATILE.has(k)).map(([k, v]) => [k, normalize(v, names, round)]));
  }
  if (typeof value === "string") {
    if (TIME.test(value)) return "<time>";
    return value
      .replace(/\b(CR-\d+|il_[0-9A-Za-z]+|mrg_[0-9A-Za-z]+)/g, (m) => names.get(m) ?? (m.startsWith("mrg_") ? "<merge>" : `<unknown ${m}>`))
      .replaceAll(tagOf(round), "<round>")
      .replaceAll(`555${suffixOf(round)}`, "555<round>");
  }
  return value;
}

/** The records after `p.cursor`, which moves past them; the logs created among them are named by their note. */
async function readOn(p: Project): Promise<any[]> {
  const out: any[] = [];
  for (;;) {
    const res = ok(await p.a("GET", "/changes", { query: { limit: 1000, ...(p.cursor ? { after: p.cursor } : {}) } }), 200);
    p.cursor = res.json.pagination.nextCursor;
    out.push(...res.json.data);
    if (!res.json.pagination.hasMore) break;
  }
  p.seq = out.at(-1)?.seq ?? p.seq;
  for (const r of out) {
    if (r.object === "interaction_log" && r.action === "created") p.names.set(r.id, `log:${r.changes.find((c: any) => c.field === "note")?.to}`);
  }
  return out;
}

const answerOf = (res: ApiResponse) =>
  res.status >= 400 ? { status: res.status, code: res.json?.code, fieldName: res.json?.fieldName, mergedInto: res.json?.mergedInto } : { status: res.status, body: res.json };

type Outcome = { answers: Array<{ status: number }> } & Record<string, unknown>;

/** Everything a client can see of a round after its setup: the answers, each contact with its logs, the duplicate groups, the change records. */
async function observe(p: Project, f: Fixture, answers: ApiResponse[]): Promise<Outcome> {
  const records = await readOn(p);
  const names = new Map([...p.names, ...Object.entries(f.ids).map(([role, id]) => [id, role] as [string, string])]);
  const seen = async (id: string) => {
    const got = await p.a("GET", `/contacts/${id}`);
    if (got.status !== 200) return { status: got.status, location: got.headers.get("location") };
    const logs = ok(await p.a("GET", `/contacts/${id}/interactions`, { query: { limit: 200 } }), 200).json.data;
    return { status: 200, contact: got.json, logs: logs.map((l: any) => `${l.note}|${l.uniqueIdentifier}`).sort() };
  };
  const [contacts, listed] = await Promise.all([
    Promise.all(Object.entries(f.ids).map(async ([role, id]) => [role, await seen(id)] as const)).then(Object.fromEntries),
    walk(p.a, "/duplicates", { limit: 100 }),
  ]);
  const mine = new Set(Object.values(f.ids));
  const groups = listed.items.filter((g: any) => g.contactIds.some((id: string) => mine.has(id)));
  // Per reason, the set of members (a group's reasons combine only when written at the same instant).
  const duplicates = [...new Set(groups.flatMap((g: any) => g.reasons.map((r: string) => `${r}: ${g.contactIds.map((id: string) => names.get(id) ?? id).sort().join(",")}`)))].sort();
  // A merge or undo records its moved logs in the order of their ids, which are random: each run of them sorted.
  const shown = (normalize(records, names, f.round) as any[]).map((r) => ({ r, key: r.object === "interaction_log" ? JSON.stringify(r) : null }));
  for (let i = 0; i < shown.length; ) {
    let j = i + 1;
    while (shown[i]!.key !== null && j < shown.length && shown[j]!.key !== null) j++;
    shown.splice(i, j - i, ...shown.slice(i, j).sort((x, y) => (x.key! < y.key! ? -1 : 1)));
    i = j;
  }
  const normal = normalize({ answers: answers.map(answerOf), contacts, duplicates }, names, f.round) as Outcome;
  return { ...normal, records: shown.map((x) => x.r) };
}

/** Each race's outcome in its two serial orders (first then second, second then first), by race name: the same on every deployment. */
const serialOrders = new Map<string, [Outcome, Outcome]>();

/** Runs `race`'s operations one after the other in both orders, each on contacts of its own in `p`, unless known already. */
async function learnSerialOrders(race: Race, p: Project): Promise<void> {
  if (serialOrders.has(race.name)) return;
  const [op1, op2] = race.ops;
  const f1 = await race.setup(p.a, nextRound());
  await readOn(p);
  const one = await observe(p, f1, [await op1(p.a, f1), await op2(p.b, f1)]);
  const f2 = await race.setup(p.a, nextRound());
  await readOn(p);
  const later = await op2(p.b, f2);
  const two = await observe(p, f2, [await op1(p.a, f2), later]);
  serialOrders.set(race.name, [one, two]);
}

/** How long the operation sent second waits, by round: at once, or while the first is under way. */
const STAGGER_MS = [0, 0, 4, 4, 10, 10];

/**
 * `race` on its contacts `f` in project `p`, round `k`: the two operations at once (which is
 * sent first alternates, the other a few ms later or not). What it ends as must be one serial
 * order's, whichever won.
 */
async function round(race: Race, k: number, p: Project, f: Fixture): Promise<void> {
  const [one, two] = serialOrders.get(race.name)!;
  const [op1, op2] = race.ops;
  const wait = STAGGER_MS[k % STAGGER_MS.length]!;
  const later = async (op: () => Promise<ApiResponse>) => (await Bun.sleep(wait), op());
  const raced =
    k % 2 === 0 ? await Promise.all([op1(p.a, f), later(() => op2(p.b, f))]) : (await Promise.all([op2(p.b, f), later(() => op1(p.a, f))])).reverse();
  for (const res of raced) expect(res.status, `${race.name}, round ${k}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
  const got = await observe(p, f, raced);
  if (!Bun.deepEquals(got, one) && !Bun.deepEquals(got, two)) {
    // Neither: compared with the order whose answers it shares, for a readable difference.
    const like = JSON.stringify(got.answers.map((a) => a.status)) === JSON.stringify(two.answers.map((a) => a.status)) ? two : one;
    expect({ race: race.name, round: k, ...got }).toEqual({ race: race.name, round: k, ...like });
  }
}

/** A follower polling GET /changes from `p`'s position on both nodes in turn until stopped; what it read. */
function follow(p: Project) {
  let running = true;
  const records: any[] = [];
  const done = (async () => {
    let cursor = p.cursor;
    for (let i = 0; ; i++) {
      const last = !running;
      const res = ok(await (i % 2 === 0 ? p.a : p.b)("GET", "/changes", { query: { limit: 1000, ...(cursor ? { after: cursor } : {}) } }), 200);
      records.push(...res.json.data);
      cursor = res.json.pagination.nextCursor;
      if (last && res.json.data.length === 0) return records;
      if (res.json.data.length === 0) await Bun.sleep(5);
    }
  })();
  return {
    stop: () => {
      running = false;
      return done;
    },
  };
}

/**
 * The race project's feed after the races: seqs 1..N once each, in order, and the follower's
 * records (from seq `from`) the same; each contact's last record agrees with GET (fields, tags,
 * version; 308 to the end of its mergedInto chain when merged away); the project's contact
 * count (`crm project list`) is the number of contacts listed.
 */
async function checkFeed(p: Project, from: number, followed: any[], contactCount: () => Promise<number>) {
  const fresh: any[] = [];
  for (let cursor: string | undefined; ; ) {
    const res = ok(await p.b("GET", "/changes", { query: { limit: 1000, ...(cursor ? { after: cursor } : {}) } }), 200);
    if (res.json.data.length === 0) break;
    fresh.push(...res.json.data);
    cursor = res.json.pagination.nextCursor;
  }
  const breaks = fresh.flatMap((r, i) => (r.seq === i + 1 ? [] : [`position ${i}: seq ${r.seq}`]));
  expect(breaks.slice(0, 5)).toEqual([]);
  expect(followed.length).toBeGreaterThan(0);
  expect(followed).toEqual(fresh.slice(from));

  const FIELDS = ["firstName", "lastName", "email", "phone", "notes", "businessName", "website", "tags"];
  const mirror = new Map<string, { fields: Record<string, unknown>; version: number; mergedInto: string | null; live: boolean }>();
  for (const r of fresh) {
    if (r.object !== "contact") continue;
    const m = mirror.get(r.id) ?? { fields: Object.fromEntries(FIELDS.map((k) => [k, k === "tags" ? [] : null])), version: 0, mergedInto: null, live: true };
    if (r.action === "created") m.version = 1;
    if (r.action === "updated" || r.action === "merged" || r.action === "restored") m.version += 1;
    if (r.action === "deleted") m.live = false;
    if (r.action === "restored") Object.assign(m, { live: true, mergedInto: null });
    for (const c of r.changes ?? []) {
      if (c.field === "mergedInto") m.mergedInto = c.to;
      else if (FIELDS.includes(c.field)) m.fields[c.field] = c.to ?? (c.field === "tags" ? [] : null);
    }
    mirror.set(r.id, m);
  }
  const end = (id: string): string => {
    const m = mirror.get(id)!;
    return !m.live && m.mergedInto ? end(m.mergedInto) : id;
  };
  const counted = contactCount(); // a CLI run: under way while the contacts are read
  const entries = [...mirror];
  for (let i = 0; i < entries.length; i += 10) {
    await Promise.all(
      entries.slice(i, i + 10).map(async ([id, m]) => {
        const got = await p.a("GET", `/contacts/${id}`);
        if (!m.live) {
          expect({ id, status: got.status, location: got.headers.get("location") }).toEqual({ id, status: 308, location: `/v1/contacts/${end(id)}` });
          return;
        }
        expect(got.status, id).toBe(200);
        const shown: Record<string, unknown> = { ...Object.fromEntries(FIELDS.map((k) => [k, got.json[k]])), tags: got.json.tags.map((t: any) => t.name).sort() };
        expect({ id, fields: shown, version: got.json.version }).toEqual({ id, fields: m.fields, version: m.version });
      }),
    );
  }
  const live = entries.filter(([, m]) => m.live).length;
  const listed = (await walk(p.a, "/contacts", { limit: 200 })).items.length;
  expect({ listed, counted: await counted }).toEqual({ listed: live, counted: live });
}

/** The tests of one deployment: `project()` makes a project seen through nodes A and B. */
function raceTests(rounds: number, project: () => Promise<Project>, contactCount: (p: Project) => Promise<number>) {
  /** The project the tests of this deployment share. */
  let shared: Promise<Project> | undefined;

  /** `work` in the shared project while a follower reads the feed; then the feed and the counts. */
  const followed = async (work: (p: Project) => Promise<void>) => {
    const p = await (shared ??= project());
    const from = p.seq;
    const follower = follow(p);
    let records: any[] = [];
    try {
      await work(p);
    } finally {
      records = await follower.stop().catch(() => []);
    }
    await checkFeed(p, from, records, () => contactCount(p));
  };

  /**
   * The races' serial orders (unless an earlier deployment ran them), then `rounds * times`
   * rounds: in each, every race's contacts made at once, then one race after the other.
   */
  const run = (races: Race[], times = 1) =>
    followed(async (p) => {
      for (const race of races) await learnSerialOrders(race, p);
      for (let k = 0; k < rounds * times; k++) {
        const fixtures = await Promise.all(races.map((race) => race.setup(p.a, nextRound())));
        await readOn(p);
        for (const [i, race] of races.entries()) await round(race, k, p, fixtures[i]!);
      }
    });

  test("two merges sharing a contact (A←B with C←B, with B←A, with B←C; A←B,C with C←B): one serial order's answers and end state, never a mix; B's logs all on one survivor; the feed gapless; counts agree", async () => {
    await run(MERGE_RACES);
  });

  test("a merge racing a write to its loser (PATCH, a new log) or its survivor: either the write lands first and the merge takes it by the field rule, or it is 409 ERR_CONTACT_MERGED; never a patched loser after the merge", async () => {
    await run(WRITE_RACES, 2);
  });

  test("new logs sent to a loser, a few ms apart, while it is merged: each answered 201 ends on the survivor, each other answer is 409 ERR_CONTACT_MERGED, and none stays behind on the merged-away contact", async () => {
    await followed(async (p) => {
      for (let k = 0; k < rounds * 2; k++) {
        const f = await survivorAndLosers(p.a, nextRound());
        const late = Array.from({ length: 8 }, async (_, i) => {
          await Bun.sleep(i * 3);
          return p.b("POST", `/contacts/${f.ids.L}/interactions`, { body: { type: "note", note: `late ${i}` } });
        });
        const [merged, ...answers] = await Promise.all([merge("S", ["L", "M1", "M2", "M3", "M4"])(p.a, f), ...late]);
        expect(merged.status).toBe(200);
        const refused = answers.filter((a) => a.status !== 201).map((a) => ({ status: a.status, code: a.json?.code, mergedInto: a.json?.mergedInto }));
        expect(refused).toEqual(refused.map(() => ({ status: 409, code: "ERR_CONTACT_MERGED", mergedInto: f.ids.S })));
        const onSurvivor = ok(await p.a("GET", `/contacts/${f.ids.S}/interactions`, { query: { limit: 200 } }), 200).json.data.map((l: any) => l.note);
        const created = answers.filter((a) => a.status === 201).map((a) => a.json.note as string);
        expect({ round: k, leftBehind: created.filter((n) => !onSurvivor.includes(n)) }).toEqual({ round: k, leftBehind: [] });
      }
      await readOn(p);
    });
  });

  test("an undo racing a PATCH of the survivor or of a merged-away contact, another merge of the survivor, the survivor merged away, or a second undo: one serial order, the loser 409 where that order gives it", async () => {
    await run(UNDO_RACES);
  });
}

describe("merge races on one server (docs/api.md §20)", () => {
  let srv: ServerHandle;
  beforeAll(async () => {
    srv = await startServer();
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
  }, 60_000);

  raceTests(
    ROUNDS,
    async () => {
      const made = await srv.newProject(LIMITS);
      const api = makeApi(srv.baseUrl, async () => made.key);
      return { id: made.id, a: api, b: api, seq: 0, names: new Map() };
    },
    async (p) => ((await srv.cli(["project", "list", "--json"])).data as any[]).find((x) => x.id === p.id).contactCount,
  );
});

describe.skipIf(postgresOnly)("merge races across two nodes on one PostgreSQL database (docs/api.md §20, docs/scaling.md §6)", () => {
  let cluster: Cluster;
  let apis: (key: string) => { a: Api; b: Api };
  beforeAll(async () => {
    if (postgresOnly) return;
    cluster = await newCluster();
    const [a, b] = await startAll(cluster, ["A", "B"]);
    apis = (key) => ({ a: a!.api(key), b: b!.api(key) });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  raceTests(
    NODE_ROUNDS,
    async () => {
      const made = await cluster.project(LIMITS);
      return { id: made.id, ...apis(made.key), seq: 0, names: new Map() };
    },
    async (p) => ((await cluster.cli(["project", "list", "--json"])).data as any[]).find((x) => x.id === p.id).contactCount,
  );
});
