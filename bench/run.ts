/**
 * `npm run bench`: starts the real server on a fresh database in a temp dir, builds 1 M
 * contacts through its HTTP API (bench/seed-api.ts: three projects filled at once, the
 * upsert path, PATCHes; never ANALYZE, as users build theirs), measures latency and
 * throughput with wrk (or bench/loadgen.ts without it) and prints a table and writes
 * bench/RESULTS.md. The single-connection latencies are taken first, on the server that
 * built the data, before any restart. Everything is on 127.0.0.1 and every child is killed
 * at the end, on error, on Ctrl-C, and at a hard time limit.
 *
 * Side by side with the limits of this machine, in one run:
 * - HTTP limit: bench/bare-hono.ts answering the same JSON (reads are compared with it);
 * - storage limit: bench/limits.ts, raw one-row-transaction inserts into a copy of the seeded
 *   database (POST /contacts and POST interactions are compared with it);
 * - webhook figures from bench/webhooks.ts (run as a child), the server's peak VmRSS under
 *   load (bench/rss.ts) and the compiled binary's time to ready (bench/binary.ts);
 * - the same scenarios on PostgreSQL, one node and two nodes on one database, beside raw `pg`
 *   limits (bench/postgres.ts, run as a child on its own embedded cluster and smaller data set;
 *   `bun bench/postgres.ts` runs that part alone and rewrites only its section).
 * - where a request's CPU goes (bench/costs.ts, run as a child on a copy of the seeded database
 *   after the wrk scenarios): each part of GET one, the lists, POST /contacts and POST
 *   interaction beside its floor, and each statement in the request beside the same statement
 *   bare; with the server's CPU per request under wrk (utime+stime from /proc around the
 *   measured seconds, a column of the load table), what the socket and HTTP add.
 *
 * Right after seeding, tenants.json in the temp dir keeps the project ids, keys, counts and
 * the seed figures. BENCH_DATA=<dir> (a temp dir kept by BENCH_KEEP=1: crm.db, secret.key,
 * tenants.json) copies that database in and skips seeding: it was built through the API all
 * the same, and the report says so, with the seed figures from its tenants.json (unknown for
 * a dir without one: its projects are found by name and given new keys).
 * bench/report.ts keeps the previous figures as the "Before" section of bench/RESULTS.md.
 *
 * Env: BENCH_CONTACTS (1000000; contacts of the measured project, the other two get a tenth
 * and a hundredth of it), BENCH_SECONDS (10), BENCH_WARMUP (3), BENCH_THREADS (2),
 * BENCH_CONNECTIONS (32), BENCH_SEED_CONNECTIONS (32), BENCH_READS_ONLY=1 stops after the
 * single-connection read latencies (prints them, leaves bench/RESULTS.md alone),
 * BENCH_KEEP=1 keeps the temp dir, BENCH_DATA=<dir> reuses the database of a kept one (above),
 * BENCH_NO_WRK=1 forces bench/loadgen.ts, BENCH_COSTS=0 leaves bench/costs.ts out, BENCH_POSTGRES=0 leaves
 * the PostgreSQL section out (its own variables, BENCH_PG_*, are in bench/postgres.ts).
 * `bun bench/run.ts 100000` is BENCH_CONTACTS=100000 (a quick run).
 */
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildBinary, readyOnDatabase, readyOnEmpty } from "./binary.ts";
import { prepareRawCopy, rawInsertBaseline } from "./limits.ts";
import { procTicks, runCosts, runLoad, ticksToUs, type LoadResult } from "./load.ts";
import { postgresSection } from "./pg-child.ts";
import { profileQueries, type QueryProfile } from "./profile.ts";
import { beforeDeliveries, beforeRows, beforeSection, COST_SCENARIO_LOAD, costsMarkdown, mdTable, type CostsReport } from "./report.ts";
import { mb, sampleRss, type RssSampler } from "./rss.ts";
import { createTenants, findTenants, seedThroughApi, type ApiSeedProject, type ApiSeedResult } from "./seed-api.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
let CONTACTS = Number(process.argv[2] ?? env("BENCH_CONTACTS", 1_000_000));
const DATA = process.env.BENCH_DATA ? resolve(process.env.BENCH_DATA) : null;
const COSTS = process.env.BENCH_COSTS !== "0";
const SEED_CONNECTIONS = env("BENCH_SEED_CONNECTIONS", 32);
const READS_ONLY = !!process.env.BENCH_READS_ONLY;
const SECONDS = env("BENCH_SECONDS", 10);
const WARMUP = env("BENCH_WARMUP", 3);
let THREADS = env("BENCH_THREADS", 2);
let CONNECTIONS = env("BENCH_CONNECTIONS", 32);
const POSTGRES = process.env.BENCH_POSTGRES !== "0";
// bench/postgres.ts: 20 min plus its data through the API at a pessimistic 50 contacts/s.
const POSTGRES_LIMIT_MS = POSTGRES ? 20 * 60_000 + Math.ceil((Number(process.env.BENCH_PG_CONTACTS ?? 10_000) * 1.11) / 50) * 1000 : 0;
// 30 min for the scenarios, plus building the data through the API at a pessimistic 400 contacts/s.
const HARD_LIMIT_MS = 30 * 60_000 + Math.ceil((CONTACTS * 1.11) / 400) * 1000 + POSTGRES_LIMIT_MS;

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const HOST = "127.0.0.1";
const WRK = process.env.BENCH_NO_WRK ? null : Bun.which("wrk");
const children = new Set<Subprocess>();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-"));
const dbPath = join(tmp, "crm.db");
const log = (msg: string) => console.log(`[bench] ${msg}`);

// ---------- processes ----------

async function stop(proc: Subprocess) {
  if (proc.exitCode === null && !proc.killed) proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
  if (!exited) proc.kill("SIGKILL");
  children.delete(proc);
}

function cleanup() {
  for (const proc of children) proc.kill("SIGKILL");
  if (!process.env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
}
setTimeout(() => {
  console.error(`[bench] hard time limit of ${HARD_LIMIT_MS / 60_000} min reached; stopping.`);
  cleanup();
  process.exit(1);
}, HARD_LIMIT_MS).unref();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => (cleanup(), process.exit(130)));

function cli(args: string[]) {
  const r = Bun.spawnSync([BUN, "src/main.ts", ...args, "--json"], {
    cwd: ROOT,
    env: { ...process.env, CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false" },
    timeout: 30_000,
  });
  if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: HOST, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function startServer(kind: "crm" | "bare", opts: { logLevel?: string; logFile?: string; preload?: string; extraEnv?: Record<string, string>; contactJson?: string } = {}) {
  const port = freePort();
  const cmd =
    kind === "crm"
      ? [BUN, ...(opts.preload ? ["--preload", opts.preload] : []), "src/main.ts", "serve"]
      : [BUN, "bench/bare-hono.ts", opts.contactJson!];
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST, CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: opts.logLevel ?? "warn", ...opts.extraEnv },
    stdout: opts.logFile ? Bun.file(opts.logFile) : "ignore",
    stderr: "inherit",
  });
  children.add(proc);
  const url = `http://${HOST}:${port}`;
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`${kind} server exited with ${proc.exitCode}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return { proc, url };
    await Bun.sleep(100);
  }
  await stop(proc);
  throw new Error(`${kind} server did not answer /healthz within 30 s`);
}

// ---------- load ----------

/** One wrk (or bench/loadgen.ts) run; source: a file of GET paths, "POST" or "INTERACTIONS" (bench/load.ts). */
function load(url: string, key: string | null, source: string, seconds: number): Promise<LoadResult> {
  return runLoad({
    url, key, source, seconds, threads: THREADS, connections: CONNECTIONS, wrk: WRK,
    contacts: measured, typesFile: join(tmp, "interaction-types"), children,
  });
}

/** wrk -t1 -c1: the latency of one request with nothing queued in front of it. */
async function loadSingle(url: string, key: string, source: string) {
  const [t, c] = [THREADS, CONNECTIONS];
  THREADS = 1;
  CONNECTIONS = 1;
  try {
    return await load(url, key, source, Math.max(2, Math.round(SECONDS / 2)));
  } finally {
    [THREADS, CONNECTIONS] = [t, c];
  }
}

/** Warm-up, then the measured run; with `pid`, that process's CPU (utime+stime) per request over the measured seconds. */
async function scenario(url: string, key: string | null, source: string, pid?: number): Promise<LoadResult & { cpuUs: number }> {
  if (WARMUP > 0) await load(url, key, source, WARMUP);
  const before = pid ? procTicks(pid) : 0;
  const r = await load(url, key, source, SECONDS);
  const cpuUs = pid ? ticksToUs(procTicks(pid) - before) / Math.max(1, r.requests) : Number.NaN;
  return { ...r, cpuUs };
}

// ---------- data for the scenarios ----------

/** Contacts of the measured project, as built (an upsert that found its email made none). */
let measured = CONTACTS;

/**
 * Request paths for the read scenarios, from the measured project's own data: contacts by
 * number, emails and phones as they were stored, its types and tags, and 3-letter prefixes
 * of the names (drawn from contacts, so common names come up as often as they occur).
 */
function samplePaths(projectId: string) {
  const db = new Database(dbPath, { readonly: true });
  const rand = (n: number) => 1 + Math.floor(Math.random() * n);
  const ids = Array.from({ length: 20_000 }, () => rand(measured));
  const rows = db
    .query(`SELECT first_name, last_name, email, phone FROM contacts WHERE project_id = ? AND contact_number IN (${Array.from({ length: 3000 }, () => rand(measured)).join(",")})`)
    .all(projectId) as Array<{ first_name: string | null; last_name: string | null; email: string | null; phone: string | null }>;
  const prefixes = rows.flatMap((r) => {
    const word = [r.first_name, r.last_name][Math.floor(Math.random() * 2)]?.toLowerCase();
    return word && [...word].length >= 3 ? [[...word].slice(0, 3).join("")] : [];
  });
  const emails = rows.flatMap((r) => (r.email ? [r.email] : []));
  const phones = rows.flatMap((r) => (r.phone ? [r.phone] : []));
  const types = db.query("SELECT id FROM contact_types WHERE project_id = ?").all(projectId) as Array<{ id: string }>;
  const tags = db.query("SELECT name FROM tags WHERE project_id = ?").all(projectId) as Array<{ name: string }>;
  const interactionTypes = db.query("SELECT id FROM interaction_types WHERE project_id = ?").all(projectId) as Array<{ id: string }>;
  const hasStat1 = (db.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_stat1'").get() as { n: number }).n > 0;
  const statistics = hasStat1 && (db.query("SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl = 'contacts'").get() as { n: number }).n > 0;
  db.close();
  writeFileSync(join(tmp, "interaction-types"), interactionTypes.map((t) => t.id).join("\n") + "\n");
  const q = encodeURIComponent;
  return {
    get: ids.map((n) => `/v1/contacts/CR-${n}`),
    search: prefixes.map((p) => `/v1/contacts?search=${q(p)}&limit=50`),
    type: types.map((t) => `/v1/contacts?contactTypeId=${q(t.id)}`),
    tag: tags.map((t) => `/v1/contacts?tag=${q(t.name)}`),
    email: emails.map((e) => `/v1/contacts?email=${q(e)}`),
    phone: phones.map((p) => `/v1/contacts?phone=${q(p)}`),
    ids,
    statistics,
  };
}

/** Drops the file's pages from the OS page cache (posix_fadvise DONTNEED through GNU dd): the next reads come from disk. */
function dropFromPageCache(path: string) {
  for (const file of [path, `${path}-wal`]) Bun.spawnSync(["dd", `if=${file}`, "iflag=nocache", "count=0", "status=none"]);
}

function writePaths(name: string, paths: string[]) {
  const file = join(tmp, `${name}.paths`);
  writeFileSync(file, paths.join("\n") + "\n");
  return file;
}

// ---------- report ----------

/** The single-connection latencies, one row per scenario, judged against p95 ≤ 5 ms. */
function singleTable(single: Array<{ name: string; r: LoadResult }>): string {
  const lines = ["| scenario | p50 ms | p95 ms | p99 ms | req/s | p95 ≤ 5 ms |", "|---|---|---|---|---|---|"];
  for (const { name, r } of single) {
    lines.push(`| ${name} | ${ms(r.p50Us)} | ${ms(r.p95Us)} | ${ms(r.p99Us)} | ${r.rps.toFixed(0)} | ${name === "GET one" ? "" : r.p95Us <= 5000 ? "PASS" : "MISS"} |`);
  }
  return lines.join("\n");
}

interface Row {
  name: string;
  r: LoadResult & { cpuUs: number };
}

const ms = (us: number) => (us / 1000).toFixed(2);

/** The scenarios at CONNECTIONS; the p95 targets are judged at 1 connection (summary table). */
function table(rows: Row[]): string {
  const head = ["scenario", "p50 ms", "p95 ms", "p99 ms", "req/s", "requests", "non-2xx/err", "server CPU µs/req"];
  return mdTable(head, rows.map(({ name, r }) => {
    const errs = Object.values(r.errors).reduce((a, b) => a + b, 0);
    return [name, ms(r.p50Us), ms(r.p95Us), ms(r.p99Us), r.rps.toFixed(0), String(r.requests), String(errs), Number.isFinite(r.cpuUs) ? r.cpuUs.toFixed(0) : ""];
  }));
}

/** The BENCH_JSON of bench/webhooks.ts (see its header for the three scenarios). */
interface WebhookFigures {
  events: number;
  delivered: number;
  seconds: number;
  deliveriesPerSecond: number;
  createsPerSecondMeanwhile: number;
  latencySamples: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  fairnessSamples: number;
  fairnessP50Ms: number;
  fairnessMaxMs: number;
  maxRssKb: number;
}

/** bench/webhooks.ts as a child (its own server, receiver and temp dir); its BENCH_JSON line. */
async function webhookBench(): Promise<WebhookFigures> {
  const proc = Bun.spawn([BUN, "bench/webhooks.ts"], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  children.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), 11 * 60_000);
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timer);
  children.delete(proc);
  for (const line of out.split("\n")) if (line.startsWith("[bench:webhooks]")) console.log(line);
  const json = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (code !== 0 || !json) throw new Error(`bench/webhooks.ts exited with ${code}:\n${out}`);
  return JSON.parse(json.slice("BENCH_JSON ".length));
}

// ---------- main ----------

async function main() {
  const started = new Date();
  const before = beforeSection(join(ROOT, "bench", "RESULTS.md"), ROOT);
  const startLoad = loadavg()[0]!;
  const bunVersion = Bun.version;
  const nproc = cpus().length;
  const cpuModel = cpus()[0]?.model ?? "unknown CPU";
  const loader = WRK ? `wrk (${THREADS} threads, ${CONNECTIONS} connections)` : `bench/loadgen.ts (${CONNECTIONS} connections)`;
  log(`machine: ${nproc} CPUs (${cpuModel}), Bun ${bunVersion}; temp dir ${tmp}`);
  if (!WRK) log("wrk not found on PATH (install: apt-get install -y wrk); falling back to bench/loadgen.ts, a slower Bun load generator.");
  log(`load: ${loader}, ${WARMUP} s warm-up + ${SECONDS} s per scenario. Client and server share these ${nproc} CPUs.`);

  // Three projects filled at once through the API; the first is measured. High limits so the fill is not throttled.
  // With BENCH_DATA, a database an earlier run built that way, copied in (never written where it lies).
  let made: ApiSeedProject[];
  let seeded: ApiSeedResult | null = null;
  let dataNote = "";
  let builtAt: string | undefined = new Date().toISOString();
  if (DATA) {
    if (!existsSync(join(DATA, "crm.db"))) throw new Error(`BENCH_DATA=${DATA} holds no crm.db`);
    log(`reusing the database of ${DATA} (BENCH_DATA): copying it into ${tmp}…`);
    for (const file of ["crm.db", "crm.db-wal", "secret.key"]) if (existsSync(join(DATA, file))) copyFileSync(join(DATA, file), join(tmp, file));
    const saved = join(DATA, "tenants.json");
    if (existsSync(saved)) {
      const t = JSON.parse(readFileSync(saved, "utf8")) as { projects: ApiSeedProject[]; seed: ApiSeedResult | null; connections?: number; builtAt?: string };
      made = t.projects;
      seeded = t.seed;
      builtAt = t.builtAt;
      dataNote = `reused from ${DATA} (BENCH_DATA, copied into the temp dir): built through the HTTP API of the server under test (bench/seed-api.ts) ` +
        `by an earlier run of this bench${t.builtAt ? ` (${t.builtAt})` : ""}, its keys and seed figures from its tenants.json`;
    } else {
      made = findTenants(cli);
      builtAt = undefined;
      dataNote = `reused from ${DATA} (BENCH_DATA, copied into the temp dir): built through the HTTP API of the server under test (bench/seed-api.ts) ` +
        `by an earlier run of this bench that kept no tenants.json, so its projects were found by name (bench, tenant-b, tenant-c) and given new keys, ` +
        `and how it was built (requests, upserts, PATCHes, seconds, rate) is unknown`;
    }
    // Counts as they are now: the kept run's POST scenarios added contacts through the API too.
    const db = new Database(dbPath, { readonly: true });
    const now = new Map((db.query("SELECT id, contact_count AS n FROM projects").all() as Array<{ id: string; n: number }>).map((p) => [p.id, p.n]));
    db.close();
    made = made.map((p) => ({ ...p, count: now.get(p.id) ?? p.count }));
    CONTACTS = made[0]!.count;
  } else {
    made = createTenants(cli, CONTACTS);
  }
  const project = { id: made[0]!.id };
  const key = { key: made[0]!.key };

  const rows: Row[] = [];
  const rssRows: Array<{ name: string; kb: number }> = [];
  let rss: RssSampler | null = null;
  const watch = (proc: Subprocess) => (rss?.stop(), (rss = sampleRss(proc.pid, 100)));
  let server = await startServer("crm", { logLevel: "warn" });
  watch(server.proc);
  const idleRssKb = rss!.last();

  if (!DATA) {
    log(`building ${made.map((p) => p.count.toLocaleString("en")).join(" + ")} contacts in ${made.length} projects through the API (${SEED_CONNECTIONS} connections)…`);
    seeded = await seedThroughApi(server.url, made, { connections: SEED_CONNECTIONS, log });
    log(`built ${seeded.contacts.toLocaleString("en")} contacts in ${seeded.seconds.toFixed(1)} s (${seeded.rate.toFixed(0)}/s; ` +
      `${seeded.requests.toLocaleString("en")} requests, ${seeded.upserts} through the upsert path, ${seeded.patches} PATCHes)`);
  } else log(`${made.map((p) => `${p.name ?? p.id}: ${p.count.toLocaleString("en")}`).join(", ")} contacts, as built${seeded ? ` (${seeded.contacts.toLocaleString("en")} in ${seeded.seconds.toFixed(0)} s)` : ""}`);
  // For a later BENCH_DATA run (with BENCH_KEEP=1): the tenants, their keys, and how the data was built.
  writeFileSync(join(tmp, "tenants.json"), JSON.stringify({
    builtBy: "bench/run.ts (bench/seed-api.ts, through the HTTP API)",
    builtAt,
    reusedFrom: DATA ?? undefined,
    connections: SEED_CONNECTIONS,
    projects: made,
    seed: seeded,
  }, null, 2) + "\n", { mode: 0o600 });

  measured = (new Database(dbPath, { readonly: true }).query("SELECT last_contact_number AS n FROM projects WHERE id = ?").get(project.id) as { n: number }).n;
  const paths = samplePaths(project.id);
  const files = {
    get: writePaths("get", paths.get),
    search: writePaths("search", paths.search),
    type: writePaths("type", paths.type),
    tag: writePaths("tag", paths.tag),
    email: writePaths("email", paths.email),
    phone: writePaths("phone", paths.phone),
    mixed: writePaths("mixed", [...paths.get.slice(0, 2000), ...paths.search, ...paths.type, ...paths.tag, ...paths.email.slice(0, 500)]),
  };

  // Service latency without queueing (one connection, one request at a time), first, on the
  // server that built the data: the statistics are whatever it gathered itself. Cold: the
  // file's pages are dropped from the OS page cache first, as this VM's reclaim (DAMON)
  // drops pages not read for a minute, so the first reads of a database users have come
  // from disk (docs/performance.md). Taken again warm after the 32-connection reads.
  dropFromPageCache(dbPath);
  const single: Array<{ name: string; r: LoadResult }> = [];
  const singleWarm: Array<{ name: string; r: LoadResult }> = [];
  const singleSources = [["GET one", files.get], ["search", files.search], ["?contactTypeId", files.type], ["?tag", files.tag], ["?email", files.email], ["?phone", files.phone]] as const;
  for (const [name, source] of singleSources) {
    log(`running ${name} at 1 connection (cold)…`);
    rss!.reset();
    single.push({ name, r: await loadSingle(server.url, key.key, source) });
    rssRows.push({ name: `${name}, 1 connection`, kb: rss!.max() });
  }
  const statisticsNote = paths.statistics
    ? "the server had gathered planner statistics of the contacts itself"
    : "no planner statistics of the contacts yet (none in sqlite_stat1)";
  if (READS_ONLY) {
    console.log(`\n${measured.toLocaleString("en")} contacts in the measured project, built through the API${seeded ? ` in ${seeded.seconds.toFixed(0)} s` : ""}${DATA ? ` (reused from ${DATA})` : ""}; ${statisticsNote}.\n`);
    console.log(singleTable(single));
    return;
  }

  log("profiling the service code in-process (no HTTP)…");
  const qs = (p: string[]) => p.map((x) => x.split("?")[1]!);
  const profile = await profileQueries(dbPath, project.id, [
    { name: "GET one", inputs: paths.ids.slice(0, 300) },
    { name: "search", inputs: qs(paths.search) },
    { name: "list ?contactTypeId", inputs: qs(paths.type) },
    { name: "list ?tag", inputs: qs(paths.tag) },
    { name: "list ?email", inputs: qs(paths.email) },
    { name: "list ?phone", inputs: qs(paths.phone) },
  ]);

  const sample = await fetch(`${server.url}/v1/contacts/CR-${Math.ceil(measured / 2)}`, { headers: { authorization: `Bearer ${key.key}` } });
  if (sample.status !== 200) throw new Error(`GET one answered ${sample.status}: ${await sample.text()}`);
  const contactJson = join(tmp, "contact.json");
  writeFileSync(contactJson, await sample.text());

  /** One scenario; `sampled` records the CRM server's peak VmRSS during it (warm-up included). */
  const run = async (name: string, target: { url: string; proc: Subprocess }, k: string | null, source: string, sampled = true) => {
    log(`running ${name}…`);
    if (sampled) rss?.reset();
    const r = await scenario(target.url, k, source, target.proc.pid);
    if (sampled && rss) rssRows.push({ name, kb: rss.max() });
    rows.push({ name, r });
    log(`  ${name}: p50 ${ms(r.p50Us)} ms, p95 ${ms(r.p95Us)} ms, ${r.rps.toFixed(0)} req/s, server CPU ${r.cpuUs.toFixed(0)} µs/request`);
    const failed = Object.values(r.errors).reduce((a, b) => a + b, 0);
    if (failed > 0) console.warn(`[bench] WARNING: ${failed} of ${r.requests} ${name} requests failed or were not 2xx/3xx; its figures do not measure the happy path.`);
    return r;
  };
  const getOne = await run("GET /v1/contacts/CR-n", server, key.key, files.get);
  const reads = {
    search: await run("GET ?search=<3-letter prefix>", server, key.key, files.search),
    type: await run("GET ?contactTypeId=<type>", server, key.key, files.type),
    tag: await run("GET ?tag=<tag name>", server, key.key, files.tag),
    email: await run("GET ?email=<address>", server, key.key, files.email),
    phone: await run("GET ?phone=<number>", server, key.key, files.phone),
  };
  for (const [name, source] of singleSources) {
    log(`running ${name} at 1 connection (warm)…`);
    singleWarm.push({ name, r: await loadSingle(server.url, key.key, source) });
  }
  const postContacts = await run("POST /v1/contacts", server, key.key, "POST");
  const postInteractions = await run("POST /v1/contacts/CR-n/interactions", server, key.key, "INTERACTIONS");
  await stop(server.proc);

  server = await startServer("crm", { logLevel: "info", logFile: join(tmp, "server-info.log") });
  watch(server.proc);
  await run("GET one, CRM_LOG_LEVEL=info", server, key.key, files.get);
  await stop(server.proc);
  rss!.stop();
  rss = null;

  const bare = await startServer("bare", { contactJson });
  const bareR = await run("bare Hono GET (same JSON)", bare, null, files.get, false);
  await stop(bare.proc);
  const ratio = getOne.rps / bareR.rps;

  log("statement-cache probe (server with --preload bench/stmt-probe.ts, 2 s per scenario)…");
  const probeFile = join(tmp, "stmt-probe.json");
  server = await startServer("crm", { preload: join(ROOT, "bench/stmt-probe.ts"), extraEnv: { STMT_PROBE_OUT: probeFile } });
  const readProbe = async () => {
    await Bun.sleep(400);
    return JSON.parse(await Bun.file(probeFile).text().catch(() => "{}")) as Record<string, number>;
  };
  const probes: Array<{ name: string; requests: number; distinct: number; prepared: number }> = [];
  for (const [name, source] of [["GET one", files.get], ["search", files.search], ["list ?tag", files.tag], ["POST", "POST"], ["mixed reads (all GET kinds)", files.mixed]] as const) {
    await load(server.url, key.key, source, 1); // first use of each statement is a necessary prepare
    const before = await readProbe();
    const { requests } = await load(server.url, key.key, source, 2);
    const after = await readProbe();
    let prepared = 0, distinct = 0;
    for (const [sql, n] of Object.entries(after)) {
      if (n > (before[sql] ?? 0)) distinct++;
      prepared += n - (before[sql] ?? 0);
    }
    probes.push({ name, requests, distinct, prepared });
  }
  await stop(server.proc);

  // ---------- where a request's CPU goes: bench/costs.ts on a copy ----------
  let costs: CostsReport | string | null = null;
  if (COSTS) {
    log("where a request's CPU goes (bun bench/costs.ts, in-process on a copy of the seeded database)…");
    const costsDir = join(tmp, "costs");
    mkdirSync(costsDir, { recursive: true });
    for (const file of ["crm.db", "crm.db-wal", "secret.key"]) if (existsSync(join(tmp, file))) copyFileSync(join(tmp, file), join(costsDir, file));
    costs = await runCosts({ db: join(costsDir, "crm.db"), projectId: project.id, key: key.key, children }).catch((error) => {
      console.warn(`[bench] WARNING: bench/costs.ts failed; its tables are left out: ${error}`);
      return String(error).split("\n")[0]!;
    });
    rmSync(costsDir, { recursive: true, force: true });
    if (typeof costs !== "string") {
      for (const c of costs.scenarios) log(`  ${c.name}: ${c.totalUs.toFixed(0)} µs in-process, ${c.statements.toFixed(1)} statements`);
    }
  }

  // ---------- limits: storage, binary start, webhooks ----------
  log("copying the seeded database for the raw-insert baseline and the binary start…");
  const copyPath = join(tmp, "copy.db");
  const schemaCheck = prepareRawCopy(dbPath, tmp, copyPath);
  log(`  ${schemaCheck}`);

  log("building dist/crm (npm run build)…");
  const build = buildBinary();
  log(`  built in ${build.seconds.toFixed(1)} s (${build.sizeMb.toFixed(0)} MB); timing dist/crm serve to the first 200 of /healthz, 5 starts each…`);
  const readySeeded = await readyOnDatabase(copyPath, 5, children);
  const readyEmpty = await readyOnEmpty(tmp, 5, children);
  log(`  seeded copy: median ${readySeeded.medianMs.toFixed(0)} ms; empty: median ${readyEmpty.medianMs.toFixed(0)} ms`);

  log(`raw one-row-transaction inserts into the copy (${WARMUP} s warm-up + ${SECONDS} s)…`);
  const raw = rawInsertBaseline(copyPath, project.id, SECONDS, WARMUP);
  log(`  ${raw.rate.toFixed(0)} rows/s in transactions, p50 ${ms(raw.p50Us)} ms, p99 ${ms(raw.p99Us)} ms`);
  const rawFull = rawInsertBaseline(copyPath, project.id, Math.max(2, Math.round(SECONDS / 2)), 1, true);
  log(`  service shape: ${rawFull.rate.toFixed(0)} rows/s`);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(copyPath + suffix, { force: true });

  log("webhook delivery bench (bun bench/webhooks.ts)…");
  // Its own bench (bench/webhooks.ts); a failure there, or a figure it no longer reports, leaves
  // that figure empty (NaN) instead of losing this run.
  const reported: Partial<WebhookFigures> = await webhookBench().catch((error) => {
    console.warn(`[bench] WARNING: the webhook bench failed; its figures are left out: ${error}`);
    return {};
  });
  const figure = (name: keyof WebhookFigures) => (typeof reported[name] === "number" ? reported[name] : Number.NaN);
  const webhooks = Object.fromEntries(
    (["events", "delivered", "seconds", "deliveriesPerSecond", "createsPerSecondMeanwhile", "latencySamples", "latencyP50Ms", "latencyP95Ms", "fairnessSamples", "fairnessP50Ms", "fairnessMaxMs", "maxRssKb"] as const)
      .map((name) => [name, figure(name)]),
  ) as unknown as WebhookFigures;

  // After everything else, so its cluster never shares the machine with the SQLite scenarios.
  let pgSection = "";
  if (POSTGRES) {
    log("PostgreSQL: one node and two nodes (bun bench/postgres.ts)…");
    pgSection = await postgresSection(children, POSTGRES_LIMIT_MS).catch((error) => {
      console.warn(`[bench] WARNING: the PostgreSQL bench failed; its section is left out: ${error}`);
      return `## PostgreSQL: one node and two nodes on one database (bench/postgres.ts)\n\nThe run failed: ${String(error).split("\n")[0]}`;
    });
  }

  // ---------- print ----------
  const lines: string[] = [];
  const out = (s = "") => (console.log(s), lines.push(s));
  const maxRssKb = Math.max(...rssRows.map((r) => r.kb));
  const maxRssRow = rssRows.find((r) => r.kb === maxRssKb)!;
  const singleOf = (name: string) => single.find((s) => s.name === name)!.r;
  out(`# CRM service benchmark`);
  out();
  out(`- date: ${started.toISOString()}`);
  out(`- machine: nproc=${nproc} (${cpuModel}), Bun ${bunVersion}, ${process.platform}/${process.arch}`);
  out(`- load generator: ${loader}; ${WARMUP} s warm-up then ${SECONDS} s measured per scenario, 127.0.0.1 only.`);
  out(`- **client and server share the same ${nproc} CPUs**, so absolute req/s are lower than on separate machines.`);
  out(`- load average (1 min) at start ${startLoad.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}: anything else running on the machine skews these figures.`);
  const counts = made.map((p) => p.count.toLocaleString("en")).join(" + ");
  const seedFigures = seeded
    ? `${seeded.contacts.toLocaleString("en")} contacts built in 3 projects filled at once (${DATA ? "now " : ""}${counts} people` +
      `${DATA ? ", the kept run's POST scenarios included" : ""}), ${measured.toLocaleString("en")} in the measured one; ` +
      `${seeded.requests.toLocaleString("en")} requests (${seeded.upserts} through the upsert path ` +
      `GET ?email= then PATCH/POST, ${seeded.patches} PATCHes of earlier contacts) in ${seeded.seconds.toFixed(0)} s, ${seeded.rate.toFixed(0)} contacts/s`
    : `3 projects filled at once (${counts} contacts now, the kept run's POST scenarios included), ${measured.toLocaleString("en")} in the measured one; seed figures unknown`;
  out(DATA
    ? `- data: ${dataNote}; never ANALYZEd by hand: ${seedFigures}. At 1 connection (a fresh server on the copy): ${statisticsNote}.`
    : `- data: built through the HTTP API of the server under test (bench/seed-api.ts), never ANALYZEd by hand: ` +
      `${seedFigures} at ${SEED_CONNECTIONS} connections. At 1 connection: ${statisticsNote}.`);
  out(`- server: \`bun src/main.ts serve\`, CRM_LOG_LEVEL=warn unless the row says info (log to a file).`);
  out();
  out(`## Summary: the service against the limits of this machine, at ${CONTACTS.toLocaleString("en")} contacts`);
  out();
  out(`Limits: **HTTP** = bench/bare-hono.ts (a bare Hono route on Bun answering the same contact JSON, ${CONNECTIONS} connections); ` +
    `**storage** = bench/limits.ts (raw bun:sqlite, one contact + its tags + search terms per BEGIN IMMEDIATE … COMMIT, ` +
    `src/storage/sqlite/open.ts PRAGMAs, into a copy of the seeded database; one writer, no HTTP; latency is one transaction, rate is rows per second inside transactions). ` +
    `Service rows are at ${CONNECTIONS} connections; "× limit" for p50/p99 is service latency / limit latency (1.0 = as fast as the limit). ` +
    `p95 targets for search and lists are judged at 1 connection (no queueing).`);
  out();
  const f0 = (n: number) => n.toFixed(0);
  const x = (n: number) => `${n.toFixed(n < 0.1 ? 3 : 2)}×`;
  const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
  type S = { name: string; r: { rps: number; p50Us: number; p99Us: number } };
  const vsLimit = (s: S, limitName: string, limit: { rps: number; p50Us: number; p99Us: number }, target = "", pass?: boolean) => [
    s.name, f0(s.r.rps), ms(s.r.p50Us), ms(s.r.p99Us), limitName, x(s.r.rps / limit.rps), x(s.r.p50Us / limit.p50Us), x(s.r.p99Us / limit.p99Us),
    target, pass === undefined ? "" : verdict(pass),
  ];
  const rawAsLoad = { rps: raw.rate, p50Us: raw.p50Us, p99Us: raw.p99Us };
  const postRatio = postContacts.rps / raw.rate;
  const p95At1 = (name: string) => singleOf(name).p95Us / 1000;
  const p95Warm = (name: string) => (singleWarm.find((x) => x.name === name)?.r.p95Us ?? Number.NaN) / 1000;
  const webhookOk = webhooks.deliveriesPerSecond >= 2000 && webhooks.latencyP50Ms < 50;
  const fairnessOk = webhooks.fairnessSamples === 40 && webhooks.fairnessMaxMs < 1000;
  const summary = [
    ["HTTP limit: bare Hono GET", f0(bareR.rps), ms(bareR.p50Us), ms(bareR.p99Us), "—", "1.00×", "1.00×", "1.00×", "", ""],
    ["storage limit: raw 1-row-txn insert", f0(raw.rate), ms(raw.p50Us), ms(raw.p99Us), "—", "1.00×", "1.00×", "1.00×", "", ""],
    vsLimit({ name: "GET one contact", r: getOne }, "HTTP", bareR, "req/s ≥ 0.6× HTTP limit", ratio >= 0.6),
    vsLimit({ name: "search (?search=)", r: reads.search }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("search").toFixed(2)}, warm ${p95Warm("search").toFixed(2)}`, p95At1("search") <= 5),
    vsLimit({ name: "list ?contactTypeId", r: reads.type }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?contactTypeId").toFixed(2)}, warm ${p95Warm("?contactTypeId").toFixed(2)}`, p95At1("?contactTypeId") <= 5),
    vsLimit({ name: "list ?tag", r: reads.tag }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?tag").toFixed(2)}, warm ${p95Warm("?tag").toFixed(2)}`, p95At1("?tag") <= 5),
    vsLimit({ name: "list ?email", r: reads.email }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?email").toFixed(2)}, warm ${p95Warm("?email").toFixed(2)}`, p95At1("?email") <= 5),
    vsLimit({ name: "list ?phone", r: reads.phone }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?phone").toFixed(2)}, warm ${p95Warm("?phone").toFixed(2)}`, p95At1("?phone") <= 5),
    vsLimit({ name: "POST /contacts", r: postContacts }, "storage", rawAsLoad, "req/s ≥ 0.5× storage limit", postRatio >= 0.5),
    vsLimit({ name: "POST interaction", r: postInteractions }, "storage", rawAsLoad),
    ["webhook deliveries/s to 1 subscription while creates run; event→delivery", f0(webhooks.deliveriesPerSecond), webhooks.latencyP50Ms.toFixed(2), webhooks.latencyP95Ms.toFixed(2),
      "—", "", "", "", "≥ 2,000/s, p50 < 50 ms", verdict(webhookOk)],
    ["another project's delivery while 16 slow subscriptions are busy", "—", webhooks.fairnessP50Ms.toFixed(2), webhooks.fairnessMaxMs.toFixed(2),
      "—", "", "", "", "max < 1 s", verdict(fairnessOk)],
    [`RSS under load, max (${maxRssRow.name})`, `${mb(maxRssKb).toFixed(1)} MB`, "", "", "—", "", "", "", "≤ 150 MB", verdict(mb(maxRssKb) <= 150)],
    ["dist/crm ready, seeded copy (median of 5)", `${readySeeded.medianMs.toFixed(0)} ms`, "", "", "—", "", "", "", "< 200 ms", verdict(readySeeded.medianMs < 200)],
    ["dist/crm ready, empty db (median of 5)", `${readyEmpty.medianMs.toFixed(0)} ms`, "", "", "—", "", "", "", "< 200 ms", verdict(readyEmpty.medianMs < 200)],
  ];
  out(mdTable(["figure", "req/s (or value)", "p50 ms", "p99 ms", "vs limit", "req/s ratio", "p50 × limit", "p99 × limit", "target", "verdict"], summary));
  out();
  out(`- webhook rows (bench/webhooks.ts): a backlog of ${webhooks.events} events drains to one subscription while 16 connections create contacts ` +
    `(${webhooks.delivered} deliveries in ${webhooks.seconds.toFixed(2)} s, ${f0(webhooks.createsPerSecondMeanwhile)} creates/s meanwhile); p50/p99 columns hold ` +
    `event→delivery p50/p95 under the same create load (${webhooks.latencySamples} events); the fairness row's are p50/max over ${webhooks.fairnessSamples} of 40 events; `+
    `webhook server's own peak RSS ${mb(webhooks.maxRssKb).toFixed(1)} MB.`);
  out(`- storage limit: ${raw.rows} rows (${raw.termsPerRow.toFixed(1)} search terms and ${raw.tagsPerRow.toFixed(1)} tags per row), p95 ${ms(raw.p95Us)} ms; ` +
    `${raw.wallRate.toFixed(0)} rows/s counting the JS that builds the row values. ${schemaCheck}.`);
  out(`- informational, ${rawFull.label}: ${rawFull.rate.toFixed(0)} rows/s, p50 ${ms(rawFull.p50Us)} ms, p99 ${ms(rawFull.p99Us)} ms ` +
    `(POST /contacts = ${x(postContacts.rps / rawFull.rate)} of it).`);
  out(`- dist/crm: built by \`npm run build\` in ${build.seconds.toFixed(1)} s, ${build.sizeMb.toFixed(0)} MB; spawn → first 200 of /healthz, ` +
    `seeded copy ${readySeeded.runsMs.map((v) => v.toFixed(0)).join(", ")} ms; empty file (first start: migrations + bootstrap key) ` +
    `${readyEmpty.runsMs.map((v) => v.toFixed(0)).join(", ")} ms.`);
  out();
  out(`## Load scenarios (${CONNECTIONS} connections)`);
  out();
  out(table(rows));
  out();
  out(`Latency at 1 connection (no queueing; ${Math.max(2, Math.round(SECONDS / 2))} s each, wrk -t1 -c1; taken first, ` +
    `${DATA ? "on the first server started on the reused data" : "on the server that built the data"}; cold: the file's pages dropped from the OS page cache first):`);
  out();
  out(singleTable(single));
  out();
  out(`The same warm, after the ${CONNECTIONS}-connection reads:`);
  out();
  out(singleTable(singleWarm));
  out();
  out(`GET-one throughput vs bare Hono route: ${getOne.rps.toFixed(0)} / ${bareR.rps.toFixed(0)} = **${ratio.toFixed(2)}×** ` +
    `(target ≥ 0.6×: ${ratio >= 0.6 ? "PASS" : "MISS"})`);
  out();
  out(`POST /contacts vs raw one-row-transaction inserts: ${postContacts.rps.toFixed(0)} / ${raw.rate.toFixed(0)} = **${postRatio.toFixed(2)}×** ` +
    `(target ≥ 0.5×: ${verdict(postRatio >= 0.5)})`);
  out();
  out(`## RSS under load (VmRSS of the server process, sampled every 100 ms; idle after start ${mb(idleRssKb).toFixed(1)} MB)`);
  out();
  out(mdTable(["scenario", "peak RSS MB"], rssRows.map((r) => [r.name, mb(r.kb).toFixed(1)])));
  out();
  out(`## In-process profile (service functions on the seeded DB, no HTTP, 300 calls each)`);
  out();
  for (const p of profile.queries as QueryProfile[]) {
    out(`- **${p.name}**: p50 ${p.p50Ms} ms, p95 ${p.p95Ms} ms, ${p.statements} distinct statements; ` +
      `slowest statement (${p.topAvgUs} µs per run) takes ${Math.round(p.topShare * 100)}% of statement time:`);
    out(`  - \`${p.topSql.replace(/\s+/g, " ").slice(0, 400)}\``);
    out(`  - plan: ${p.plan.map((l) => `\`${l}\``).join(" → ")}`);
  }
  out();
  out(`## Statement cache`);
  out();
  out(`- preparing a statement costs ${profile.statementCost.prepareUs} µs on average over the ${profile.statementCost.statements} ` +
    `statements above; taking it from Bun's cache (Database.query) ${profile.statementCost.cachedUs} µs.`);
  out(`- Bun's own statement cache (Database.query) keeps only Database.MAX_QUERY_CACHE_SIZE = ${profile.bunQueryCacheSize} statements.`);
  out(`- statements the server really prepared while under load (2 s per scenario after a 1 s warm-up; bench/stmt-probe.ts ` +
    `counts bun:sqlite prepares behind whatever cache src/runtime/bun.ts uses). ~0 per request = the cache works:`);
  out();
  out(`| scenario | requests | statements prepared | distinct SQL prepared | prepares per request |`);
  out(`|---|---|---|---|---|`);
  for (const p of probes) out(`| ${p.name} | ${p.requests} | ${p.prepared} | ${p.distinct} | ${(p.prepared / Math.max(1, p.requests)).toFixed(4)} |`);
  out();
  if (costs !== null) {
    out(`## Where a request's CPU goes (bench/costs.ts)`);
    out();
    if (typeof costs === "string") out(`bench/costs.ts failed: ${costs}`);
    else {
      const underWrk = Object.fromEntries(rows.map((row) => [row.name, row.r.cpuUs]));
      out(`The service started in bench/costs.ts's own process on a copy of the seeded database, each request called through \`app.fetch\` ` +
        `one at a time (no socket), beside the floor of each part measured alone in the same process. SQL: ${costs.traced} requests per scenario traced ` +
        `(every bun:sqlite statement timed), their reads replayed in the traced order, cycling (${costs.replayPasses}+ passes after an unmeasured one), ` +
        `on a bare read-only connection with the service's PRAGMAs; writes (begin … commit) as they cost in the request, their floor is the storage limit above. ` +
        `In-process each write request commits alone; under wrk group commit shares COMMITs. ` +
        `Server CPU under wrk: the load table's column (utime+stime of the server over the measured seconds ÷ requests, ${CONNECTIONS} connections).`);
      out();
      for (const c of costs.scenarios) {
        const loadName = COST_SCENARIO_LOAD[c.name] ?? c.name;
        const cpu = underWrk[loadName];
        if (cpu !== undefined && Number.isFinite(cpu)) {
          out(`- ${c.name}: ${cpu.toFixed(0)} µs server CPU per request under wrk − ${c.cpuUs.toFixed(0)} µs CPU in-process ` +
            `(${c.totalUs.toFixed(0)} µs wall) = **${(cpu - c.cpuUs).toFixed(0)} µs** that the socket, Bun.serve and ${CONNECTIONS} connections add`);
        }
      }
      const bareCpu = underWrk["bare Hono GET (same JSON)"];
      if (bareCpu !== undefined && Number.isFinite(bareCpu)) out(`- for scale: the bare Hono route costs ${bareCpu.toFixed(0)} µs server CPU per request under wrk.`);
      out();
      out(costsMarkdown(costs, { level: 3, underWrk }));
    }
    out();
  }
  if (pgSection) {
    out(pgSection);
    out();
  }
  out(`## Before → after`);
  out();
  const old = beforeRows(before);
  const cmp: string[][] = [];
  const pct = (a: number, b: number) => `${b >= a ? "+" : ""}${(((b - a) / a) * 100).toFixed(0)}%`;
  for (const { name, r } of [...rows, ...single.map((s) => ({ name: s.name, r: s.r, one: true }))]) {
    const o = old.get(name);
    const label = rows.some((x) => x.name === name) ? name : `${name} (1 connection)`;
    if (!o) {
      cmp.push([label, "—", r.rps.toFixed(0), "", "—", ms(r.p95Us)]);
      continue;
    }
    cmp.push([label, o.rps.toFixed(0), r.rps.toFixed(0), pct(o.rps, r.rps), o.p95.toFixed(2), ms(r.p95Us)]);
  }
  const oldDeliveries = beforeDeliveries(before);
  cmp.push(["webhook deliveries/s", oldDeliveries === null ? "—" : String(oldDeliveries), f0(webhooks.deliveriesPerSecond),
    oldDeliveries === null ? "" : pct(oldDeliveries, webhooks.deliveriesPerSecond), "", ""]);
  out(mdTable(["scenario", "before req/s", "after req/s", "change", "before p95 ms", "after p95 ms"], cmp));
  out();
  out(before);
  writeFileSync(join(ROOT, "bench", "RESULTS.md"), lines.join("\n") + "\n");
  log("wrote bench/RESULTS.md");
}

try {
  await main();
} catch (error) {
  console.error("[bench] failed:", error);
  process.exitCode = 1;
} finally {
  for (const proc of [...children]) await stop(proc);
  cleanup();
}
process.exit(process.exitCode ?? 0);
