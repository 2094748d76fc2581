/**
 * The report of bench/costs.ts (where a request's CPU goes), as it hands it to bench/run.ts
 * and bench/postgres.ts, and its Markdown tables.
 */
import { mdTable } from "../harness/report.ts";

/** One line of a scenario's parts table: what the part costs in the request, and its floor measured alone. */
export interface CostRow {
  part: string;
  us: number;
  floorUs: number | null;
  floor: string;
}

/** One statement shape of a scenario: runs per request, µs per run in the request and bare (reads only). */
export interface StatementCost {
  statement: string;
  kind: "read" | "write";
  perRequest: number;
  us: number;
  bareUs: number | null;
}

export interface ScenarioCost {
  name: string;
  /** In-process µs per request (wall, one request at a time), the test's Request object left out. */
  totalUs: number;
  /** The same requests' CPU µs (this process, all threads: GC and the driver's included), the Request object left out. */
  cpuUs: number;
  statements: number;
  /** µs per request inside the driver: reads, writes (begin … commit), and the reads' bare floor. */
  readUs: number;
  writeUs: number;
  readFloorUs: number | null;
  rows: CostRow[];
  breakdown: StatementCost[];
}

export interface CostsReport {
  backend: "sqlite" | "postgres";
  /** The measured project's contacts (its last contact number). */
  contacts: number;
  /** Requests per scenario whose statements were traced (and replayed bare). */
  traced: number;
  /** Bare passes over each scenario's traced reads (after one unmeasured pass). */
  replayPasses: number;
  scenarios: ScenarioCost[];
}

/** The load-table name (bench/run.ts, bench/postgres.ts) of each bench/costs.ts scenario. */
export const COST_SCENARIO_LOAD: Record<string, string> = {
  "GET one": "GET /v1/contacts/CR-n",
  "list ?search": "GET ?search=<3-letter prefix>",
  "list ?contactTypeId": "GET ?contactTypeId=<type>",
  "list ?tag": "GET ?tag=<tag name>",
  "list ?email": "GET ?email=<address>",
  "list ?phone": "GET ?phone=<number>",
  "POST /contacts": "POST /v1/contacts",
  "POST interaction": "POST /v1/contacts/CR-n/interactions",
};

/**
 * The tables of a bench/costs.ts report: an overview (one row per scenario; with `underWrk`,
 * the server's CPU per request under wrk by load-table name, also what the socket and HTTP
 * add), then per scenario its parts and its statements. `level` is the scenarios' heading level.
 */
export function costsMarkdown(report: CostsReport, options: { level?: number; underWrk?: Record<string, number>; underWrkLabel?: string } = {}): string {
  const h = "#".repeat(options.level ?? 3);
  const pg = report.backend === "postgres";
  const f = (n: number | null | undefined) => (n === null || n === undefined || !Number.isFinite(n) ? "" : (Math.abs(n) < 0.05 ? 0 : n).toFixed(1));
  const lines: string[] = [];
  const wrk = options.underWrk;
  const sql = pg ? "pg round trips" : "bun:sqlite";
  lines.push(mdTable(
    ["scenario", "in-process µs/req", "in-process CPU µs/req", "statements/req", `SQL reads µs/req (${sql})`, "reads bare µs/req", `SQL writes µs/req (${sql})`, "the rest µs/req",
      ...(wrk ? [options.underWrkLabel ?? "server CPU µs/req under wrk", "socket + HTTP add µs/req"] : [])],
    report.scenarios.map((s) => {
      const rest = s.rows.find((r) => r.part.startsWith("the rest"))?.us ?? NaN;
      const cpu = wrk?.[COST_SCENARIO_LOAD[s.name] ?? s.name];
      // CPU, not wall: on PostgreSQL the request waits for its round trips, and a shared machine may deschedule the loop.
      const own = s.cpuUs;
      return [s.name, f(s.totalUs), f(s.cpuUs), s.statements.toFixed(1), f(s.readUs), f(s.readFloorUs), f(s.writeUs), f(rest),
        ...(wrk ? [f(cpu), cpu === undefined ? "" : f(cpu - own)] : [])];
    }),
  ));
  if (pg) {
    lines.push("");
    lines.push("On PostgreSQL the SQL columns are the round trips as the request waited for them (the socket, PostgreSQL's work, parsing the answer); " +
      "a request's round trips can overlap (two statements on two pooled connections at once), so the rest can come out below zero.");
  }
  if (wrk) {
    lines.push("");
    lines.push(pg
      ? "socket + HTTP = the node's CPU per request under wrk − the in-process CPU per request (this process only: PostgreSQL's CPU is counted apart in the load table): " +
        "what Bun.serve, the socket and concurrency add."
      : "socket + HTTP = the server's CPU per request under wrk − the in-process CPU per request: what Bun.serve, the socket and concurrency add. " +
        "It can come out below zero on writes: under wrk, group commit shares one COMMIT among many requests, in-process each request commits alone.");
  }
  for (const s of report.scenarios) {
    lines.push("", `${h} ${s.name}: ${s.totalUs.toFixed(1)} µs in-process per request`, "");
    lines.push(mdTable(["part", "µs", "floor µs", "floor"], s.rows.map((r) => [r.part, f(r.us), f(r.floorUs), r.floor])));
    lines.push("");
    lines.push(mdTable(
      ["statement", "runs/req", "µs/run in request", "µs/run bare", "µs/req in request"],
      s.breakdown.map((b) => [`\`${b.statement}\``, b.perRequest.toFixed(2), f(b.us), b.kind === "write" ? "(write)" : f(b.bareUs), f(b.us * b.perRequest)]),
    ));
  }
  return lines.join("\n");
}
