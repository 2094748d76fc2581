/**
 * `npm run bench:duplicates [N]` (docs/api.md §20, docs/performance.md "Duplicates and
 * merge"): `GET /duplicates`, merge and undo against a real server started by the bench
 * harness (bench/harness/process.ts), on a SQLite file and on an embedded PostgreSQL with
 * durable defaults (bench/postgres/cluster.ts), with every row built THROUGH THE API and
 * nobody running ANALYZE.
 *
 * Data: the three tenants of bench/harness/seed/api.ts createTenants (N, N/10, N/100
 * contacts; batch items per hour raised with `crm project update`), loaded at once with
 * `POST /v1/contacts/batch` (1,000 items a batch, taken from the projects in turn, 2 in
 * flight). People have uniformly drawn names, unique emails at company domains (~20 people a
 * domain) and unique phones, so few are duplicates by chance; then ~5 % of each project's
 * contacts are written as a duplicate of an earlier one, a third each:
 * - email: the same address in another case (and a first initial instead of the first name);
 * - phone: the same number in another format ("+1 415 200 1234" → "(415) 200-1234"), no email;
 * - name: the full name with accents dropped and in capitals, with the same businessName or,
 *   without one, another address at the same email domain.
 *
 * Measured at one connection, per backend, on the server that loaded the data:
 * 1. `GET /v1/duplicates` (default limit 50), the first page, BENCH_DUP_READS times (target
 *    p95 ≤ 50 ms);
 * 2. every page once, following `nextCursor` to the end (groups found, by reasons), then
 *    BENCH_DUP_READS later pages: the cursors of that walk in turn, spread over it;
 * 3. BENCH_DUP_PAIRS pairs of contacts (the same email in another case), each with 100
 *    interaction logs (`POST /v1/interactions/batch`, 200 items; 10 uniqueIdentifiers on both,
 *    so the merge meets the collision of docs/api.md §20.2); then
 *    `POST /v1/contacts/{id}/merge` of each pair, then `POST /v1/merges/{id}/undo` of each;
 *    one pair's logs are counted after the merges and after the undos.
 *
 * Ratios are what to compare: the machine is shared (2 cores). `--print` wraps the report in
 * BENCH_DUP_SECTION lines (bench/run.ts takes it into bench/RESULTS.md).
 *
 * Env: BENCH_POSTGRES=0, BENCH_SQLITE=0 (one backend only), BENCH_DUP_PG_CONTACTS (N for
 * PostgreSQL; default N up to 200,000), BENCH_DUP_READS (300), BENCH_DUP_PAIRS (40),
 * BENCH_KEEP=1 keeps the temp dir (crm.db, secret.key, load.json: the load's figures),
 * BENCH_DUP_DATA=<a kept temp dir> (SQLite) copies its database in and measures it without
 * loading again: built through the API all the same (by an earlier build, maybe; the report
 * says so), its projects found by name and given new keys (findTenants), the load's figures
 * from its load.json; each run adds its pairs' contacts to it.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { envNumber } from "./config.ts";
import { Children, crmCli, guard, startServer } from "./harness/process.ts";
import { mdTable, percentile, verdict } from "./harness/report.ts";
import { createTenants, findTenants, type ApiSeedProject } from "./harness/seed/api.ts";
import { AREA, BIZ_A, BIZ_B, BIZ_C, FIRST, LAST, asciiLower, prng } from "./harness/seed/people.ts";
import { bodyOf } from "./harness/seed/search-people.ts";
import { startBenchCluster, type BenchCluster } from "./postgres/cluster.ts";
import { call, type Client, pool, range } from "./harness/http.ts";

const args = process.argv.slice(2).filter((a) => a !== "--print");
const PRINT = process.argv.includes("--print");
const N = Number(args[0] ?? 1_000_000);
const PG_N = envNumber("BENCH_DUP_PG_CONTACTS", Math.min(N, 200_000));
const SHARE = 0.05;
const BATCH = 1000;
const LOAD_CONNECTIONS = 2;
const READS = envNumber("BENCH_DUP_READS", 300);
const PAIRS = envNumber("BENCH_DUP_PAIRS", 40);
const LOGS = 100;
const SHARED_IDENTIFIERS = 10;
const POSTGRES = process.env.BENCH_POSTGRES !== "0";
const SQLITE = process.env.BENCH_SQLITE !== "0";
const DATA = process.env.BENCH_DUP_DATA ? resolve(process.env.BENCH_DUP_DATA) : null;
const TARGET = { firstPageP95Ms: 50 };
// Per backend: the load (with the tenants' 11 %) at a pessimistic 300 items/s, and 10 min for the rest.
const perBackend = (n: number) => ((n * 1.11) / 300 + 600) * 1000;
const HARD_LIMIT_MS = (SQLITE ? perBackend(N) : 0) + (POSTGRES ? perBackend(PG_N) : 0) + 5 * 60_000;

const children = new Children();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-dup-"));
let cluster: BenchCluster | null = null;
const log = (msg: string) => console.log(`[bench:duplicates] ${msg}`);
async function cleanup() {
  children.killAll();
  await cluster?.stop().catch(() => {});
  cluster = null;
  if (!process.env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
}
guard({ label: "bench:duplicates", limitMs: HARD_LIMIT_MS, cleanup });

type Backend = "sqlite" | "postgres";
type Body = Record<string, unknown>;

// ---------- HTTP ----------




// ---------- the people ----------

/** The fields of a contact body (bodyOf, bench/harness/seed/search-people.ts, writes them). */
interface Person {
  first: string | null;
  last: string | null;
  business: string | null;
  email: string | null;
  /** "+1 AAA EEE LLLL", unique per person of a project. */
  phone: string | null;
}

/** Person `j` of project `p` as first written: names drawn uniformly, unique email and phone. */
function basePerson(p: number, j: number): Person {
  const r = prng(5_000_011 + p * 10_000_019 + j);
  const business = r.next() < 0.12 ? `${r.pick(BIZ_A)} ${r.pick(BIZ_B)} ${r.pick(BIZ_C)}`.trim() : null;
  const first = r.next() < 0.97 ? r.pick(FIRST) : null;
  const last = r.next() < 0.93 ? r.pick(LAST) : null;
  // A company domain shared by ~20 people of a million: a name meets its namesake there rarely.
  const domain = `${asciiLower(business?.split(" ")[0] ?? r.pick(BIZ_A))}${j % 50_000}.example.com`;
  const local = [first, last].filter(Boolean).map((s) => asciiLower(s!)).join(".") || "info";
  const email = r.next() < 0.9 ? `${local}.${j}@${domain}` : null;
  const k = Math.floor(j / AREA.length);
  const phone = r.next() < 0.7 ? `+1 ${AREA[j % AREA.length]} ${200 + Math.floor(k / 10_000)} ${String(k % 10_000).padStart(4, "0")}` : null;
  return { first, last, business, email, phone };
}

type Kind = "email" | "phone" | "name";

/** Whether item `i` of project `p` is written as a duplicate of an earlier one (~SHARE of them, not the first 100). */
const isDuplicate = (p: number, i: number) => i > 100 && prng(7_700_001 + p * 10_000_019 + i).next() < SHARE;

const capitals = (s: string) => s.normalize("NFKD").replace(/\p{M}+/gu, "").toUpperCase();

/** Item `i` of project `p`: its person, or a duplicate of an earlier person that has what its kind needs. */
function item(p: number, i: number): { body: Body; kind: Kind | null } {
  if (!isDuplicate(p, i)) {
    const x = basePerson(p, i);
    return { body: bodyOf(x), kind: null };
  }
  const r = prng(9_100_003 + p * 10_000_019 + i);
  const kind = (["email", "phone", "name"] as const)[i % 3]!;
  for (;;) {
    const j = 1 + Math.floor(r.next() * (i - 1));
    if (isDuplicate(p, j)) continue;
    const x = basePerson(p, j);
    if (kind === "email" && x.email) {
      const at = x.email.indexOf("@");
      return { kind, body: bodyOf({ ...x, first: x.first ? `${x.first[0]}.` : null, business: null, phone: null, email: x.email.slice(0, at).toUpperCase() + x.email.slice(at) }) };
    }
    if (kind === "phone" && x.phone) {
      const [, area, exchange, line] = x.phone.split(" ");
      return { kind, body: bodyOf({ ...x, business: null, email: null, phone: `(${area}) ${exchange}-${line}` }) };
    }
    if (kind === "name" && x.first && x.last && (x.business || x.email)) {
      const email = x.business ? null : `info.${i}@${x.email!.slice(x.email!.indexOf("@") + 1)}`;
      return { kind, body: bodyOf({ first: capitals(x.first), last: capitals(x.last), business: x.business, email, phone: null }) };
    }
  }
}

// ---------- the load ----------

/** Every project's items through POST /contacts/batch, batches taken from the projects in turn, 2 in flight. */
async function load(url: string, projects: ApiSeedProject[]) {
  const jobs: Array<{ p: number; from: number; to: number }> = [];
  for (let from = 0; projects.some((x) => from < x.count); from += BATCH) {
    for (const [p, x] of projects.entries()) if (from < x.count) jobs.push({ p, from, to: Math.min(x.count, from + BATCH) });
  }
  const total = projects.reduce((a, x) => a + x.count, 0);
  const written = projects.map(() => ({ email: 0, phone: 0, name: 0 }));
  const started = performance.now();
  let done = 0;
  let shown = 0;
  await pool(jobs.length, LOAD_CONNECTIONS, async (n) => {
    const { p, from, to } = jobs[n]!;
    const items = range(from, to).map((i) => item(p, i + 1));
    for (const x of items) if (x.kind) written[p]![x.kind]++;
    const { json } = await call({ url, key: projects[p]!.key }, "POST", "/contacts/batch", { operation: "create", items: items.map((x) => x.body) });
    if (json.summary.failed > 0) throw new Error(`a batch had failed items: ${JSON.stringify(json.results.find((r: any) => r.result === "error"))}`);
    done += to - from;
    if (done - shown >= total / 10) (shown = done), log(`  ${done.toLocaleString("en")} / ${total.toLocaleString("en")}`);
  });
  const seconds = (performance.now() - started) / 1000;
  return { total, seconds, rate: total / seconds, written: written[0]!, reused: null };
}

interface Loaded {
  total: number;
  seconds: number;
  rate: number;
  /** Duplicates written in the measured project, by kind. */
  written: Record<Kind, number>;
  /** Where a reused database came from (BENCH_DUP_DATA), with when it was built. */
  reused: string | null;
}

/** BENCH_DUP_DATA's database copied into the temp dir; the figures of its load (load.json), or what the generator wrote for `n`. */
function reuse(dir: string, n: number): Loaded {
  if (!existsSync(join(dir, "crm.db"))) throw new Error(`BENCH_DUP_DATA=${dir} holds no crm.db`);
  log(`reusing the database of ${dir} (BENCH_DUP_DATA): copying it into ${tmp}…`);
  for (const file of ["crm.db", "crm.db-wal", "secret.key"]) if (existsSync(join(dir, file))) copyFileSync(join(dir, file), join(tmp, file));
  const saved = join(dir, "load.json");
  if (existsSync(saved)) {
    const l = JSON.parse(readFileSync(saved, "utf8")) as Loaded & { n: number; builtAt: string };
    if (l.n !== n) throw new Error(`BENCH_DUP_DATA=${dir} was built with N = ${l.n}, not ${n}`);
    return { ...l, reused: `${dir} (built ${l.builtAt})` };
  }
  const written = { email: 0, phone: 0, name: 0 };
  for (let i = 1; i <= n; i++) if (isDuplicate(0, i)) written[(["email", "phone", "name"] as const)[i % 3]!]++;
  return { total: Number.NaN, seconds: Number.NaN, rate: Number.NaN, written, reused: `${dir} (no load.json: load figures unknown)` };
}

// ---------- the measures ----------

interface Latency {
  p50: number;
  p95: number;
  max: number;
  count: number;
}
const latency = (values: number[]): Latency => ({ p50: percentile(values, 50), p95: percentile(values, 95), max: Math.max(...values), count: values.length });

/** The first page READS times, then every page once (cursors kept), then READS later pages over those cursors. */
async function duplicatePages(c: Client) {
  const first: number[] = [];
  for (let i = 0; i < READS; i++) first.push((await call(c, "GET", "/duplicates")).ms);

  const cursors: string[] = [];
  const reasons = new Map<string, number>();
  let groups = 0;
  let members = 0;
  const started = performance.now();
  for (let cursor: string | null = null; ;) {
    const { json } = await call(c, "GET", `/duplicates${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`);
    for (const g of json.data as Array<{ reasons: string[]; contactIds: string[] }>) {
      groups++;
      members += g.contactIds.length;
      const k = g.reasons.join("+");
      reasons.set(k, (reasons.get(k) ?? 0) + 1);
    }
    if (!json.pagination.hasMore) break;
    cursor = json.pagination.nextCursor as string;
    cursors.push(cursor);
  }
  const walk = { pages: cursors.length + 1, seconds: (performance.now() - started) / 1000, groups, members, reasons };

  const later: number[] = [];
  if (cursors.length > 0) {
    for (let i = 0; i < READS; i++) {
      const cursor = cursors[Math.floor(((i * 7919) % READS) * (cursors.length / READS))]!;
      later.push((await call(c, "GET", `/duplicates?cursor=${encodeURIComponent(cursor)}`)).ms);
    }
  }
  return { first: latency(first), later: later.length ? latency(later) : null, walk };
}

/** PAIRS pairs of contacts with LOGS logs each; each pair merged, then each merge undone. */
async function mergesAndUndos(c: Client) {
  const pairs: Array<[string, string]> = [];
  const logBatches: number[] = [];
  const tag = randomBytes(3).toString("hex");
  for (let i = 0; i < PAIRS; i++) {
    const email = `pair.${i}.${tag}@merge-bench.example.com`;
    const a = await call(c, "POST", "/contacts", { firstName: "Pair", lastName: `Survivor ${i}`, email, phone: `+1 415 555 ${String(1000 + i).padStart(4, "0")}`, tags: ["merge-bench"] });
    const b = await call(c, "POST", "/contacts", { firstName: "Pair", lastName: `Other ${i}`, email: email.toUpperCase(), businessName: `Merge Bench ${i}`, notes: "from the old CRM", tags: ["imported"] });
    const ids: [string, string] = [a.json.contactId, b.json.contactId];
    const items = ids.flatMap((contactId, side) =>
      range(0, LOGS).map((k) => ({
        contactId,
        type: "note",
        note: `Log ${k} of ${side === 0 ? "the survivor" : "the other"}, pair ${i}`,
        date: new Date(Date.UTC(2025, 0, 1) + (k * 2 + side) * 3_600_000).toISOString(),
        uniqueIdentifier: k < SHARED_IDENTIFIERS ? `import-${i}-${k}` : `log-${i}-${side}-${k}`,
      })),
    );
    const r = await call(c, "POST", "/interactions/batch", { items });
    if (r.json.summary.created !== 2 * LOGS) throw new Error(`POST /interactions/batch created ${r.json.summary.created} of ${2 * LOGS}`);
    logBatches.push(r.ms);
    pairs.push(ids);
  }

  const mergeMs: number[] = [];
  const mergeIds: string[] = [];
  for (const [a, b] of pairs) {
    const r = await call(c, "POST", `/contacts/${a}/merge`, { contactIds: [b] });
    if (r.json.merge.mergedContactIds?.[0] !== b) throw new Error(`merge of ${b} into ${a} answered ${JSON.stringify(r.json.merge)}`);
    mergeMs.push(r.ms);
    mergeIds.push(r.json.merge.id);
  }
  const [a0, b0] = pairs[0]!;
  const afterMerge = await logCount(c, a0);

  const undoMs: number[] = [];
  for (const id of mergeIds) {
    const r = await call(c, "POST", `/merges/${id}/undo`);
    if (r.json.restoredContacts?.length !== 1) throw new Error(`undo of ${id} answered ${JSON.stringify(r.json).slice(0, 300)}`);
    undoMs.push(r.ms);
  }
  const afterUndo = [await logCount(c, a0), await logCount(c, b0)];
  if (afterMerge !== 2 * LOGS || afterUndo.some((n) => n !== LOGS)) {
    throw new Error(`logs of ${a0} after the merge: ${afterMerge} (expected ${2 * LOGS}); of ${a0} and ${b0} after the undo: ${afterUndo.join(", ")} (expected ${LOGS} each)`);
  }
  return { logBatch: latency(logBatches), merge: latency(mergeMs), undo: latency(undoMs) };
}

async function logCount(c: Client, contactId: string): Promise<number> {
  let count = 0;
  for (let cursor: string | null = null; ;) {
    const { json } = await call(c, "GET", `/contacts/${contactId}/interactions?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    count += json.data.length;
    if (!json.pagination.hasMore) return count;
    cursor = json.pagination.nextCursor;
  }
}

// ---------- a backend ----------

interface Figures {
  backend: Backend;
  n: number;
  loaded: Loaded;
  pages: Awaited<ReturnType<typeof duplicatePages>>;
  merges: Awaited<ReturnType<typeof mergesAndUndos>>;
  loadAvg: [number, number];
}

async function runOn(backend: Backend, n: number, env: Record<string, string>, data: string | null = null): Promise<Figures> {
  const cli = crmCli({ ...env, CRM_BOOTSTRAP: "false" }, 60_000);
  const reused = data ? reuse(data, n) : null;
  const projects = reused ? findTenants(cli) : createTenants(cli, n);
  if (!reused) for (const p of projects) cli(["project", "update", p.id, "--batch-items-per-hour", "1000000000"]);
  const server = await startServer({
    env: { ...env, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn" }, stdout: join(tmp, `${backend}.log`), stderr: join(tmp, `${backend}.err`),
    ready: "/readyz", name: `crm (${backend})`, children,
  });
  try {
    const total = projects.reduce((a, x) => a + x.count, 0);
    let loaded: Loaded;
    if (reused) {
      loaded = reused;
      log(`${backend}: ${projects.map((p) => `${p.name}: ${p.count.toLocaleString("en")}`).join(", ")} contacts, as built`);
    } else {
      log(`${backend}: loading ${projects.map((p) => p.count.toLocaleString("en")).join(" + ")} = ${total.toLocaleString("en")} contacts (batches of ${BATCH}, ${LOAD_CONNECTIONS} in flight)…`);
      loaded = await load(server.url, projects);
      log(`  ${loaded.rate.toFixed(0)} contacts/s (${loaded.seconds.toFixed(0)} s); duplicates written in the measured project: ${JSON.stringify(loaded.written)}`);
      // For a later BENCH_DUP_DATA run (with BENCH_KEEP=1).
      writeFileSync(join(tmp, "load.json"), JSON.stringify({ ...loaded, n, builtAt: new Date().toISOString() }));
    }
    const c = { url: server.url, key: projects[0]!.key };
    const startLoad = loadavg()[0]!;
    log(`${backend}: GET /duplicates, the first page ${READS} times, every page once, ${READS} later pages…`);
    const pages = await duplicatePages(c);
    log(`  first page p50 ${pages.first.p50.toFixed(2)} ms, p95 ${pages.first.p95.toFixed(2)} ms; ${pages.walk.groups.toLocaleString("en")} groups in ${pages.walk.pages} pages (${pages.walk.seconds.toFixed(1)} s)` +
      (pages.later ? `; later pages p50 ${pages.later.p50.toFixed(2)} ms, p95 ${pages.later.p95.toFixed(2)} ms` : ""));
    log(`${backend}: ${PAIRS} pairs with ${LOGS} logs each: merge each, then undo each…`);
    const merges = await mergesAndUndos(c);
    log(`  merge p50 ${merges.merge.p50.toFixed(2)} ms, p95 ${merges.merge.p95.toFixed(2)} ms; undo p50 ${merges.undo.p50.toFixed(2)} ms, p95 ${merges.undo.p95.toFixed(2)} ms`);
    return { backend, n, loaded, pages, merges, loadAvg: [startLoad, loadavg()[0]!] };
  } finally {
    await server.stop();
  }
}

// ---------- the report ----------

const lat = (l: Latency) => `${l.p50.toFixed(2)} / ${l.p95.toFixed(2)} (${l.max.toFixed(1)})`;

function table(f: Figures): string {
  const { walk } = f.pages;
  const written = f.loaded.written;
  const dupContacts = written.email + written.phone + written.name;
  const byReasons = [...walk.reasons].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toLocaleString("en")}`).join(", ");
  const rows: string[][] = [
    [`GET /duplicates, first page (limit 50), 1 connection, ${f.pages.first.count} requests: p50 / p95 (max) ms`, lat(f.pages.first),
      `p95 ≤ ${TARGET.firstPageP95Ms} ms`, verdict(f.pages.first.p95 <= TARGET.firstPageP95Ms)],
  ];
  if (f.pages.later) {
    rows.push([`GET /duplicates?cursor=…, later pages (${f.pages.later.count} requests over the ${walk.pages - 1} cursors of the walk): p50 / p95 (max) ms`, lat(f.pages.later),
      `(p95 ≤ ${TARGET.firstPageP95Ms} ms)`, verdict(f.pages.later.p95 <= TARGET.firstPageP95Ms)]);
  }
  rows.push(
    [`every page once, from the first to the last (${walk.pages.toLocaleString("en")} pages)`, `${walk.seconds.toFixed(1)} s, ${((walk.seconds * 1000) / walk.pages).toFixed(2)} ms a page`, "", ""],
    [`groups found (${walk.members.toLocaleString("en")} contactIds; by reasons: ${byReasons})`, walk.groups.toLocaleString("en"),
      `~${dupContacts.toLocaleString("en")} written as duplicates`, ""],
    [`POST /contacts/{id}/merge, 2 contacts with ${LOGS} logs each (${SHARED_IDENTIFIERS} uniqueIdentifiers on both), ${f.merges.merge.count} merges: p50 / p95 (max) ms`, lat(f.merges.merge), "", ""],
    [`POST /merges/{id}/undo of those merges, ${f.merges.undo.count} undos: p50 / p95 (max) ms`, lat(f.merges.undo), "", ""],
    [`for scale: POST /interactions/batch of the pair's ${2 * LOGS} logs: p50 / p95 (max) ms`, lat(f.merges.logBatch), "", ""],
  );
  return [
    `### ${f.backend === "sqlite" ? "SQLite (file)" : "PostgreSQL (embedded, durable defaults)"}, N = ${f.n.toLocaleString("en")}`,
    "",
    `${f.loaded.reused ? `Data reused from ${f.loaded.reused}, a copy; its load: ` : "Load: "}` +
      `${f.loaded.total.toLocaleString("en")} contacts in 3 projects (${f.n.toLocaleString("en")} measured) through POST /v1/contacts/batch at ` +
      `${Math.round(f.loaded.rate).toLocaleString("en")}/s (${f.loaded.seconds.toFixed(0)} s); written as duplicates in the measured project: ${written.email.toLocaleString("en")} by email, ` +
      `${written.phone.toLocaleString("en")} by phone, ${written.name.toLocaleString("en")} by name. Load average (1 min) ${f.loadAvg[0].toFixed(2)} → ${f.loadAvg[1].toFixed(2)} during the measures.`,
    "",
    mdTable(["figure", "value", "target", ""], rows),
  ].join("\n");
}

async function main() {
  const results: Figures[] = [];
  if (SQLITE) results.push(await runOn("sqlite", N, { CRM_DB_PATH: join(tmp, "crm.db") }, DATA));
  if (POSTGRES) {
    log("starting embedded PostgreSQL (durable defaults)…");
    cluster = await startBenchCluster({ synchronousCommit: "on", slowMs: 1000 });
    const { Client: PgClient } = await import("pg");
    const admin = new PgClient({ connectionString: cluster.url("postgres") });
    await admin.connect();
    await admin.query("CREATE DATABASE crm_dup").finally(() => admin.end());
    results.push(await runOn("postgres", PG_N, {
      CRM_DATABASE_URL: cluster.url("crm_dup"),
      CRM_SECRET_KEY: randomBytes(32).toString("base64"),
      CRM_DB_PATH: join(tmp, "unused.db"),
    }));
  }
  const report = [`bench/duplicates.ts, ${new Date().toISOString()}; 1 connection, on a shared 2-core machine: compare ratios.`, ...results.map(table)].join("\n\n");
  console.log(PRINT ? `BENCH_DUP_SECTION_BEGIN\n## Duplicates and merge (bench/duplicates.ts)\n\n${report}\nBENCH_DUP_SECTION_END` : `\n${report}\n`);
}

try {
  await main();
} catch (error) {
  console.error("[bench:duplicates] failed:", error);
  process.exitCode = 1;
} finally {
  await children.stopAll();
  await cleanup();
}
process.exit(process.exitCode ?? 0);
