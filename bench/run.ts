/**
 * `npm run bench`: starts the real server on a fresh database in a temp dir, builds 1 M
 * contacts through its HTTP API (bench/harness/seed/api.ts: three projects filled at once, the
 * upsert path, PATCHes; never ANALYZE, as users build theirs), measures latency and
 * throughput with wrk (or bench/loadgen.ts without it) and prints a table and writes
 * bench/RESULTS.md (bench/report/results.ts). The single-connection latencies are taken first, on the server that
 * built the data, before any restart. Everything is on 127.0.0.1 and every child is killed
 * at the end, on error, on Ctrl-C, and at a hard time limit.
 *
 * Side by side with the limits of this machine, in one run:
 * - HTTP limit: bench/bare-hono.ts answering the same JSON (reads are compared with it);
 * - storage limit: bench/limits.ts, raw one-row-transaction inserts into a copy of the seeded
 *   database (POST /contacts and POST interactions are compared with it);
 * - webhook figures from bench/webhooks.ts (run as a child), the server's peak VmRSS under
 *   load (bench/harness/rss.ts) and the compiled binary's time to ready (bench/binary.ts);
 * - the same scenarios on PostgreSQL, one node and two nodes on one database, beside raw `pg`
 *   limits (bench/postgres.ts, run as a child on its own embedded cluster and smaller data set;
 *   `bun bench/postgres.ts` runs that part alone and rewrites only its section).
 * - where a request's CPU goes (bench/costs.ts, run as a child on a copy of the seeded database
 *   after the wrk scenarios): each part of GET one, the lists, POST /contacts and POST
 *   interaction beside its floor, and each statement in the request beside the same statement
 *   bare; with the server's CPU per request under wrk (utime+stime from /proc around the
 *   measured seconds, a column of the load table), what the socket and HTTP add.
 * - duplicates, merge and undo (bench/duplicates.ts, run as a child last, on data of its own
 *   with ~5 % duplicates: the same number of contacts on SQLite, up to 200,000 on
 *   PostgreSQL); its section goes into bench/RESULTS.md after the PostgreSQL one.
 * - search (bench/search.ts, run as a child after it, on data of its own: the same number of
 *   contacts on both backends, loaded by the build before issue 31 and migrated by this one):
 *   each kind of query's latency at one connection, the search index's size before and
 *   after, the migration's time; its section goes into bench/RESULTS.md last.
 *
 * Right after seeding, tenants.json in the temp dir keeps the project ids, keys, counts and
 * the seed figures. BENCH_DATA=<dir> (a temp dir kept by BENCH_KEEP=1: crm.db, secret.key,
 * tenants.json) copies that database in and skips seeding: it was built through the API all
 * the same, and the report says so, with the seed figures from its tenants.json (unknown for
 * a dir without one: its projects are found by name and given new keys).
 * bench/report/before.ts keeps the previous figures as the "Before" section of bench/RESULTS.md.
 *
 * Env: BENCH_CONTACTS (1000000; contacts of the measured project, the other two get a tenth
 * and a hundredth of it), BENCH_SECONDS (10), BENCH_WARMUP (3), BENCH_THREADS (2),
 * BENCH_CONNECTIONS (32), BENCH_SEED_CONNECTIONS (32), BENCH_READS_ONLY=1 stops after the
 * single-connection read latencies (prints them, leaves bench/RESULTS.md alone),
 * BENCH_KEEP=1 keeps the temp dir, BENCH_DATA=<dir> reuses the database of a kept one (above),
 * BENCH_NO_WRK=1 forces bench/loadgen.ts, BENCH_COSTS=0 leaves bench/costs.ts out, BENCH_POSTGRES=0 leaves
 * the PostgreSQL section out (its own variables, BENCH_PG_*, are in bench/postgres.ts; it also
 * leaves PostgreSQL out of bench/duplicates.ts), BENCH_DUPLICATES=0 leaves bench/duplicates.ts out
 * (its own variables, BENCH_DUP_*, are in its header), BENCH_SEARCH=0 leaves bench/search.ts out
 * (its own variables, BENCH_SEARCH_*, are in its header).
 * `bun bench/run.ts 100000` is BENCH_CONTACTS=100000 (a quick run).
 */
import type { Subprocess } from "bun";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildBinary, readyOnDatabase, readyOnEmpty } from "./binary.ts";
import { postgresSection, runCosts, webhookFigures } from "./children.ts";
import { CONNECTIONS, envNumber, PG_LIMIT_MS, SECONDS, SEED_CONNECTIONS, SINGLE_SCENARIOS, SINGLE_SECONDS, THREADS, WARMUP } from "./config.ts";
import { measuredContacts, prepareData, saveTenants } from "./data.ts";
import type { LoadResult } from "./harness/load.ts";
import { BUN, Children, crmCli, guard, ROOT, startServer, type Server } from "./harness/process.ts";
import { ms } from "./harness/report.ts";
import { sampleRss, type RssSampler } from "./harness/rss.ts";
import { seedThroughApi } from "./harness/seed/api.ts";
import { prepareRawCopy, rawInsertBaseline } from "./limits.ts";
import { profileQueries } from "./profile.ts";
import { beforeSection } from "./report/before.ts";
import type { CostsReport } from "./report/costs.ts";
import { singleTable } from "./report/details.ts";
import { writeResults, type Row } from "./report/results.ts";
import { dropFromPageCache, loader, samplePaths, statementProbes, writePathFiles } from "./scenarios.ts";

const CONTACTS = Number(process.argv[2] ?? envNumber("BENCH_CONTACTS", 1_000_000));
const DATA = process.env.BENCH_DATA ? resolve(process.env.BENCH_DATA) : null;
const COSTS = process.env.BENCH_COSTS !== "0";
const READS_ONLY = !!process.env.BENCH_READS_ONLY;
const POSTGRES = process.env.BENCH_POSTGRES !== "0";
const POSTGRES_LIMIT_MS = POSTGRES ? PG_LIMIT_MS : 0;
const DUPLICATES = process.env.BENCH_DUPLICATES !== "0";
// bench/duplicates.ts: its loads at a pessimistic 400 contacts/s (SQLite) and 200/s (PostgreSQL, at most 200,000), plus 20 min.
const DUPLICATES_LIMIT_MS = DUPLICATES ? (20 * 60 + (CONTACTS * 1.11) / 400 + (POSTGRES ? (Math.min(CONTACTS, 200_000) * 1.11) / 200 : 0)) * 1000 : 0;
const SEARCH = process.env.BENCH_SEARCH !== "0";
// bench/search.ts: its loads at a pessimistic 250 contacts/s per backend, plus 20 min each for the migration and the queries, plus 5 min.
const SEARCH_LIMIT_MS = SEARCH ? ((CONTACTS * 1.11) / 250 * (POSTGRES ? 2 : 1) + 20 * 60 * (POSTGRES ? 2 : 1) + 5 * 60) * 1000 : 0;
// 30 min for the scenarios, plus building the data through the API at a pessimistic 400 contacts/s.
const HARD_LIMIT_MS = 30 * 60_000 + Math.ceil((CONTACTS * 1.11) / 400) * 1000 + POSTGRES_LIMIT_MS + DUPLICATES_LIMIT_MS + SEARCH_LIMIT_MS;

const WRK = process.env.BENCH_NO_WRK ? null : Bun.which("wrk");
const children = new Children();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-"));
const dbPath = join(tmp, "crm.db");
const log = (msg: string) => console.log(`[bench] ${msg}`);
const cleanup = () => {
  children.killAll();
  if (!process.env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
};
guard({ label: "bench", limitMs: HARD_LIMIT_MS, cleanup });
const cli = crmCli({ CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false" }, 30_000);

/** The CRM server (or bench/bare-hono.ts answering `contactJson`) on the bench's database. */
function start(kind: "crm" | "bare", opts: { logLevel?: string; logFile?: string; preload?: string; extraEnv?: Record<string, string>; contactJson?: string } = {}) {
  return startServer({
    cmd: kind === "crm" ? [BUN, ...(opts.preload ? ["--preload", opts.preload] : []), "src/main.ts", "serve"] : [BUN, "bench/bare-hono.ts", opts.contactJson!],
    env: { CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: opts.logLevel ?? "warn", ...opts.extraEnv },
    stdout: opts.logFile ?? "ignore",
    name: `${kind} server`,
    children,
  });
}

async function main() {
  const started = new Date();
  const before = beforeSection(join(ROOT, "bench", "RESULTS.md"), ROOT);
  const startLoad = loadavg()[0]!;
  const loaderName = WRK ? `wrk (${THREADS} threads, ${CONNECTIONS} connections)` : `bench/loadgen.ts (${CONNECTIONS} connections)`;

  // Three projects filled at once through the API; the first is measured. High limits so the fill is not throttled.
  // With BENCH_DATA, a database an earlier run built that way, copied in (never written where it lies).
  const data = prepareData({ data: DATA, tmp, dbPath, contacts: CONTACTS, cli, log });
  const { made } = data;
  const contacts = DATA ? made[0]!.count : CONTACTS;
  const project = { id: made[0]!.id };
  const key = { key: made[0]!.key };

  const rows: Row[] = [];
  const rssRows: Array<{ name: string; kb: number }> = [];
  let rss: RssSampler | null = null;
  const watch = (proc: Subprocess) => (rss?.stop(), (rss = sampleRss(proc.pid, 100)));
  let server = await start("crm", { logLevel: "warn" });
  watch(server.proc);
  const idleRssKb = rss!.last();

  if (!DATA) {
    log(`building ${made.map((p) => p.count.toLocaleString("en")).join(" + ")} contacts in ${made.length} projects through the API (${SEED_CONNECTIONS} connections)…`);
    const seeded = (data.seeded = await seedThroughApi(server.url, made, { connections: SEED_CONNECTIONS, log }));
    log(`built ${seeded.contacts.toLocaleString("en")} contacts in ${seeded.seconds.toFixed(1)} s (${seeded.rate.toFixed(0)}/s; ` +
      `${seeded.requests.toLocaleString("en")} requests, ${seeded.upserts} through the upsert path, ${seeded.patches} PATCHes)`);
  } else log(`${made.map((p) => `${p.name ?? p.id}: ${p.count.toLocaleString("en")}`).join(", ")} contacts, as built${data.seeded ? ` (${data.seeded.contacts.toLocaleString("en")} in ${data.seeded.seconds.toFixed(0)} s)` : ""}`);
  const { seeded } = data;
  // For a later BENCH_DATA run (with BENCH_KEEP=1): the tenants, their keys, and how the data was built.
  saveTenants(tmp, data, DATA, SEED_CONNECTIONS);

  const measured = measuredContacts(dbPath, project.id);
  const lg = loader({ wrk: WRK, threads: THREADS, connections: CONNECTIONS, tmp, children, contacts: () => measured });
  const paths = samplePaths(dbPath, project.id, measured, tmp);
  const files = writePathFiles(tmp, paths);

  // Service latency without queueing (one connection, one request at a time), first, on the
  // server that built the data: the statistics are whatever it gathered itself. Cold: the
  // file's pages are dropped from the OS page cache first, as this VM's reclaim (DAMON)
  // drops pages not read for a minute, so the first reads of a database users have come
  // from disk (docs/performance.md). Taken again warm after the 32-connection reads.
  dropFromPageCache(dbPath);
  const single: Array<{ name: string; r: LoadResult }> = [];
  const singleWarm: Array<{ name: string; r: LoadResult }> = [];
  const singleSources = SINGLE_SCENARIOS.map(([name, file]) => [name, files[file]] as const);
  for (const [name, source] of singleSources) {
    log(`running ${name} at 1 connection (cold)…`);
    rss!.reset();
    single.push({ name, r: await lg.single(server.url, key.key, source) });
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
  const run = async (name: string, target: Server, k: string | null, source: string, sampled = true) => {
    log(`running ${name}…`);
    if (sampled) rss?.reset();
    const r = await lg.scenario(target.url, k, source, target.proc.pid);
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
    singleWarm.push({ name, r: await lg.single(server.url, key.key, source) });
  }
  const postContacts = await run("POST /v1/contacts", server, key.key, "POST");
  const postInteractions = await run("POST /v1/contacts/CR-n/interactions", server, key.key, "INTERACTIONS");
  await server.stop();

  server = await start("crm", { logLevel: "info", logFile: join(tmp, "server-info.log") });
  watch(server.proc);
  await run("GET one, CRM_LOG_LEVEL=info", server, key.key, files.get);
  await server.stop();
  rss!.stop();
  rss = null;

  const bare = await start("bare", { contactJson });
  const bareR = await run("bare Hono GET (same JSON)", bare, null, files.get, false);
  await bare.stop();
  const ratio = getOne.rps / bareR.rps;

  log("statement-cache probe (server with --preload bench/stmt-probe.ts, 2 s per scenario)…");
  const probeFile = join(tmp, "stmt-probe.json");
  server = await start("crm", { preload: join(ROOT, "bench/stmt-probe.ts"), extraEnv: { STMT_PROBE_OUT: probeFile } });
  const probes = await statementProbes(lg.load, server.url, key.key, files, probeFile);
  await server.stop();

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
  const rawFull = rawInsertBaseline(copyPath, project.id, SINGLE_SECONDS, 1, true);
  log(`  service shape: ${rawFull.rate.toFixed(0)} rows/s`);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(copyPath + suffix, { force: true });

  log("webhook delivery bench (bun bench/webhooks.ts)…");
  const webhooks = await webhookFigures(children);

  // After everything else, so its cluster never shares the machine with the SQLite scenarios.
  let pgSection = "";
  if (POSTGRES) {
    log("PostgreSQL: one node and two nodes (bun bench/postgres.ts)…");
    pgSection = await postgresSection(children, POSTGRES_LIMIT_MS).catch((error) => {
      console.warn(`[bench] WARNING: the PostgreSQL bench failed; its section is left out: ${error}`);
      return `## PostgreSQL: one node and two nodes on one database (bench/postgres.ts)\n\nThe run failed: ${String(error).split("\n")[0]}`;
    });
  }

  // Last of all, on data of its own: GET /duplicates, merge and undo (its own servers and cluster).
  let dupSection = "";
  if (DUPLICATES) {
    log(`duplicates, merge and undo (bun bench/duplicates.ts ${CONTACTS})…`);
    dupSection = await childSection("bench/duplicates.ts", "bench:duplicates", "BENCH_DUP_SECTION", CONTACTS, DUPLICATES_LIMIT_MS).catch((error) => {
      console.warn(`[bench] WARNING: bench/duplicates.ts failed; its section is left out: ${error}`);
      return `## Duplicates and merge (bench/duplicates.ts)\n\nThe run failed: ${String(error).split("\n")[0]}`;
    });
  }

  // Then search (its own servers, cluster and data: the build before issue 31 loads it, the current build migrates it).
  let searchSection = "";
  if (SEARCH) {
    log(`search (bun bench/search.ts ${CONTACTS})…`);
    searchSection = await childSection("bench/search.ts", "bench:search", "BENCH_SEARCH_SECTION", CONTACTS, SEARCH_LIMIT_MS).catch((error) => {
      console.warn(`[bench] WARNING: bench/search.ts failed; its section is left out: ${error}`);
      return `## Search (bench/search.ts)\n\nThe run failed: ${String(error).split("\n")[0]}`;
    });
  }

  writeResults({
    CONNECTIONS, CONTACTS: contacts, SECONDS, WARMUP, SEED_CONNECTIONS, DATA, started, nproc: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown CPU",
    bunVersion: Bun.version, loader: loaderName, startLoad, made, seeded, measured, dataNote: data.dataNote, statisticsNote, raw, rawFull, bareR,
    getOne, reads, postContacts, postInteractions, single, singleWarm, rows, rssRows, idleRssKb, webhooks, readySeeded, readyEmpty, build,
    schemaCheck, profile, probes, costs, pgSection: [pgSection, dupSection, searchSection].filter(Boolean).join("\n\n"), before, ratio,
  }, join(ROOT, "bench", "RESULTS.md"));
  log("wrote bench/RESULTS.md");
}

/**
 * `bun <script> N --print` as a child (bench/duplicates.ts, bench/search.ts; BENCH_POSTGRES
 * passed on in the environment): the Markdown section between its `<marker>_BEGIN` and
 * `<marker>_END` lines, its progress lines (those starting with `[<label>]`) passed through.
 */
async function childSection(script: string, label: string, marker: string, contacts: number, timeoutMs: number): Promise<string> {
  const proc = Bun.spawn([BUN, script, String(contacts), "--print"], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  children.add(proc);
  const timer = setTimeout(() => proc.kill("SIGTERM"), timeoutMs);
  const kept: string[] = [];
  let partial = "";
  const take = (line: string) => (line.startsWith(`[${label}]`) ? console.log(line) : kept.push(line));
  const decoder = new TextDecoder();
  const reader = proc.stdout.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    const lines = (partial + decoder.decode(r.value, { stream: true })).split("\n");
    partial = lines.pop()!;
    lines.forEach(take);
  }
  take(partial);
  const code = await proc.exited;
  clearTimeout(timer);
  children.delete(proc);
  const body = kept.join("\n");
  const begin = body.indexOf(`${marker}_BEGIN\n`);
  const end = body.indexOf(`\n${marker}_END`);
  if (code !== 0 || begin < 0 || end < 0) throw new Error(`${script} exited with ${code}`);
  return body.slice(begin + `${marker}_BEGIN\n`.length, end);
}

try {
  await main();
} catch (error) {
  console.error("[bench] failed:", error);
  process.exitCode = 1;
} finally {
  await children.stopAll();
  cleanup();
}
process.exit(process.exitCode ?? 0);
