/**
 * Where a request's CPU goes (issue 15): the real service started in this process on a
 * seeded database, each hot request called through `app.fetch` (no socket), beside the
 * floor of each of its parts measured alone in the same process: a bare Hono route
 * answering the same JSON, the key check, the rate limit, the zod schema, the SQL, and
 * JSON.stringify of the answer. Each scenario's total is the wall time per request (one at a
 * time) and this process's CPU time (process.cpuUsage: GC and the driver included, a loop
 * descheduled on a shared machine not). What the socket adds is the server's CPU per request
 * under wrk (bench/run.ts, bench/postgres.ts) minus that in-process CPU.
 *
 * SQL: every statement the service runs is timed while a scenario's requests are traced
 * (TRACED of them, one at a time): in bun:sqlite by wrapping Database.prototype.prepare /
 * query's statements, on PostgreSQL by wrapping pg's Client.prototype.query (what Kysely's
 * PostgresDialect calls; there the time is the round trip as the request waits for it). The
 * floor of the reads is every traced (sql, params) replayed in the traced order, cycling
 * (one unmeasured pass, then passes for up to COSTS_REPLAY_MS), on a bare connection:
 * bun:sqlite with the PRAGMAs the service set (cache_size, mmap_size…), or a plain `pg`
 * Client on the same database, so it sees the same access pattern the requests did. Writes
 * (begin, INSERT, UPDATE, commit…) are reported as they cost in the request; their floor
 * is the storage limit (bench/limits.ts, bench/postgres/limits.ts). A table per scenario breaks
 * the SQL down by statement shape.
 *
 *   bun bench/costs.ts <crm.db> <projectId> <apiKey>   prints the tables (markdown)
 *   CRM_DATABASE_URL=postgres://… bun bench/costs.ts - <projectId> <apiKey>
 *                                                      the same on PostgreSQL (CRM_SECRET_KEY as the nodes)
 *   COSTS_JSON=1 …                                     one `COSTS_JSON {…}` line instead (bench/run.ts, bench/postgres.ts)
 *
 * Env: COSTS_N (2000 requests per scenario, at most COSTS_MAX_MS = 3000 ms of them), COSTS_TRACED (200),
 * COSTS_REPLAY_MS (2000), COSTS_ONLY=<scenario name>, COSTS_TRACE_OUT=<file> (each read scenario's traced
 * reads per request, JSON, for bench/postgres/limits.ts's raw replay).
 *
 * Writes (POST /contacts, POST interaction) go into that database: run it on a copy.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { Hono } from "hono";
import type { CostRow, CostsReport, ScenarioCost, StatementCost } from "./report/costs.ts";

type Trace = { sql: string; params: unknown[]; method: string; us: number; request: number };
let tracing: Trace[] | null = null;
let currentRequest = 0;

const POSTGRES = !!process.env.CRM_DATABASE_URL;
const INT8 = 20;
const NUMERIC = 1700;

// ---------- tracing, installed before src/ is loaded ----------

/** PRAGMAs the service set on its first connection (the main one, src/storage/sqlite/open.ts; not the dispatcher's reader), applied to the bare one. */
const pragmasBy = new Map<object, Map<string, string>>();
const SHARED_PRAGMAS = /^\s*pragma\s+(cache_size|mmap_size|temp_store|cache_spill)\s*=\s*([^;\s]+)\s*;?\s*$/i;

if (!POSTGRES) {
  const wrapped = new WeakSet<object>();
  // Every statement bun:sqlite runs is timed while `tracing` is set.
  const wrap = (statement: any, sql: string) => {
    if (!statement || wrapped.has(statement)) return statement;
    wrapped.add(statement);
    for (const method of ["all", "get", "run", "values"] as const) {
      const original = statement[method].bind(statement);
      statement[method] = (...args: unknown[]) => {
        if (!tracing) return original(...args);
        const entry: Trace = { sql, params: args.length === 1 && Array.isArray(args[0]) ? args[0] : args, method, us: 0, request: currentRequest };
        tracing.push(entry);
        const started = performance.now();
        try {
          return original(...args);
        } finally {
          entry.us = (performance.now() - started) * 1000;
        }
      };
    }
    return statement;
  };
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database, sql: string, ...rest: unknown[]) {
    return wrap((prepare as Function).call(this, sql, ...rest), sql);
  } as typeof prepare;
  const query = Database.prototype.query;
  Database.prototype.query = function (this: Database, sql: string) {
    return wrap(query.call(this, sql), sql);
  } as typeof query;
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (this: Database, sql: string, ...rest: unknown[]) {
    const m = SHARED_PRAGMAS.exec(sql);
    if (m) {
      if (!pragmasBy.has(this)) pragmasBy.set(this, new Map());
      pragmasBy.get(this)!.set(m[1]!.toLowerCase(), m[2]!);
    }
    return (exec as Function).call(this, sql, ...rest);
  } as typeof exec;
} else {
  const pg = (await import("pg")).default;
  const query = pg.Client.prototype.query as Function;
  // Kysely's PostgresDialect calls client.query(sql, parameters) and awaits the promise.
  pg.Client.prototype.query = function (this: unknown, config: unknown, values?: unknown, callback?: unknown) {
    if (!tracing || typeof config !== "string" || typeof values === "function" || callback !== undefined) return query.apply(this, arguments);
    const entry: Trace = { sql: config, params: Array.isArray(values) ? values : [], method: "query", us: 0, request: currentRequest };
    tracing.push(entry);
    const started = performance.now();
    const done = () => void (entry.us = (performance.now() - started) * 1000);
    return (query.call(this, config, values) as Promise<unknown>).then(
      (result) => (done(), result),
      (error) => (done(), Promise.reject(error)),
    );
  } as never;
}

const [dbArg, projectId, apiKey] = process.argv.slice(2);
if (!dbArg || !projectId || !apiKey) throw new Error("usage: bun bench/costs.ts <crm.db | - with CRM_DATABASE_URL> <projectId> <apiKey>");

const { loadConfig } = await import("../src/config.ts");
const { startServices } = await import("../src/server.ts");
const { hashApiKey, isWellFormedKey } = await import("../src/auth/key-format.ts");
const { ContactIdParam, CreateContactBody, ListContactsQuery } = await import("../src/contacts/schemas.ts");
const { CreateInteractionBody } = await import("../src/interactions/schemas.ts");
const { RateLimiter, rateLimitHeaders } = await import("../src/auth/rate-limiter.ts");
const { Metrics } = await import("../src/metrics/registry.ts");

const config = loadConfig({
  ...process.env,
  ...(POSTGRES ? {} : { CRM_DB_PATH: dbArg }),
  PORT: "0", HOST: "127.0.0.1", CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn",
});
const service = await startServices(config);
const ORIGIN = "http://127.0.0.1";
const auth = { authorization: `Bearer ${apiKey}` };

// ---------- the bare connection: setup queries and the floor of the reads ----------

interface Bare {
  /** Rows of a setup query written with `?` placeholders. */
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** µs of one traced statement run bare. */
  time(t: Trace): Promise<number> | number;
  close(): Promise<void>;
  describe: string;
}

async function openBare(): Promise<Bare> {
  if (POSTGRES) {
    const pg = (await import("pg")).default;
    const types = {
      getTypeParser: (oid: number, format?: "text" | "binary") =>
        oid === INT8 || oid === NUMERIC ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text"),
    };
    const client = new pg.Client({ connectionString: process.env.CRM_DATABASE_URL, types: types as never, application_name: "crm-bench-costs" });
    await client.connect();
    const dollar = (sql: string) => {
      let i = 0;
      return sql.replace(/\?/g, () => `$${++i}`);
    };
    return {
      rows: async (sql, params = []) => (await client.query(dollar(sql), params)).rows,
      async time(t) {
        const started = performance.now();
        await client.query(t.sql, t.params);
        return (performance.now() - started) * 1000;
      },
      close: () => client.end(),
      describe: "a plain pg Client on the same database",
    };
  }
  const raw = new Database(dbArg!, { readonly: true });
  const pragmas = pragmasBy.values().next().value ?? new Map<string, string>();
  for (const [name, value] of pragmas) raw.exec(`PRAGMA ${name} = ${value}`);
  const statements = new Map<string, any>();
  return {
    rows: async (sql, params = []) => raw.query(sql).all(...(params as never[])) as never,
    time(t) {
      let statement = statements.get(t.sql);
      if (!statement) statements.set(t.sql, (statement = raw.prepare(t.sql)));
      const started = performance.now();
      statement[t.method](...t.params);
      return (performance.now() - started) * 1000;
    },
    close: async () => raw.close(),
    describe: `its own read-only bun:sqlite connection${pragmas.size ? ` (${[...pragmas].map(([k, v]) => `${k}=${v}`).join(", ")})` : ""}`,
  };
}
const bare = await openBare();

// ---------- measuring ----------

const N = Number(process.env.COSTS_N ?? 2000);
const MAX_MS = Number(process.env.COSTS_MAX_MS ?? 3000);
const TRACED = Number(process.env.COSTS_TRACED ?? 200);
const REPLAY_MS = Number(process.env.COSTS_REPLAY_MS ?? 2000);

/** Mean wall and CPU (this process, all threads) µs of `fn` over up to `n` calls (at most MAX_MS of them) after `n / 10` unmeasured ones. */
async function measure(n: number, fn: (i: number) => unknown): Promise<{ wallUs: number; cpuUs: number }> {
  for (let i = 0; i < Math.ceil(n / 10); i++) await fn(i);
  const cpu = process.cpuUsage();
  const started = performance.now();
  let i = 0;
  while (i < n && (i < 10 || performance.now() - started < MAX_MS)) await fn(i++);
  const wallUs = ((performance.now() - started) * 1000) / i;
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: (used.user + used.system) / i };
}
const mean = async (n: number, fn: (i: number) => unknown) => (await measure(n, fn)).wallUs;

// ---------- data for the scenarios ----------

// The highest number in use (bench/postgres/limits.ts's service-shape inserts move the project's counter past it on PostgreSQL).
const last = Number((await bare.rows<{ n: number }>("SELECT max(contact_number) AS n FROM contacts WHERE project_id = ?", [projectId]))[0]!.n);
const rand = (n: number) => 1 + Math.floor(Math.random() * n);
// Random contact numbers that exist, in random order.
const numbers = (await bare.rows<{ n: number }>(
  `SELECT contact_number AS n FROM contacts WHERE project_id = ? AND contact_number IN (${Array.from({ length: 4000 }, () => rand(last)).join(",")})`,
  [projectId],
)).map((r) => Number(r.n)).sort(() => Math.random() - 0.5);
if (numbers.length === 0) throw new Error(`no contacts in project ${projectId}`);
const people = await bare.rows<{ f: string | null; l: string | null; e: string | null; p: string | null }>(
  `SELECT first_name AS f, last_name AS l, email AS e, phone AS p FROM contacts WHERE project_id = ? AND contact_number IN (${numbers.slice(0, 500).join(",")})`,
  [projectId],
);
const prefixes = people.flatMap((r, i) => {
  const word = (i % 2 ? r.l ?? r.f : r.f ?? r.l)?.toLowerCase();
  return word && [...word].length >= 3 ? [[...word].slice(0, 3).join("")] : [];
});
const emails = people.flatMap((r) => (r.e ? [r.e] : []));
const phones = people.flatMap((r) => (r.p ? [r.p] : []));
const types = (await bare.rows<{ id: string }>("SELECT id FROM contact_types WHERE project_id = ?", [projectId])).map((t) => t.id);
const tags = (await bare.rows<{ name: string }>("SELECT name FROM tags WHERE project_id = ?", [projectId])).map((t) => t.name);
const interactionType = (await bare.rows<{ id: string }>("SELECT id FROM interaction_types WHERE project_id = ? LIMIT 1", [projectId]))[0]!.id;

interface Scenario {
  name: string;
  request: (i: number) => Request;
  /** The schema the route validates with, and its input. */
  validate: (i: number) => unknown;
}
const q = encodeURIComponent;
const pick = <T>(list: T[], i: number) => list[i % list.length]!;
let created = 0;
const contactBody = (i: number) => ({ firstName: `Cost${i}`, lastName: "Probe", email: `cost.${Date.now()}.${i}.${created++}@example.com`, tags: ["vip"] });
const list = (name: string, values: string[], param: string, extra = ""): Scenario[] =>
  values.length === 0 ? [] : [{
    name,
    request: (i) => new Request(`${ORIGIN}/v1/contacts?${param}=${q(pick(values, i))}${extra}`, { headers: auth }),
    validate: (i) => ListContactsQuery.parse({ [param]: pick(values, i), ...(extra ? { limit: "50" } : {}) }),
  }];
const scenarios: Scenario[] = [
  { name: "GET one", request: (i) => new Request(`${ORIGIN}/v1/contacts/CR-${pick(numbers, i)}`, { headers: auth }),
    validate: (i) => ContactIdParam.parse({ contactId: `CR-${pick(numbers, i)}` }) },
  ...list("list ?search", prefixes, "search", "&limit=50"),
  ...list("list ?contactTypeId", types, "contactTypeId"),
  ...list("list ?tag", tags, "tag"),
  ...list("list ?email", emails, "email"),
  ...list("list ?phone", phones, "phone"),
  { name: "POST /contacts", request: (i) => new Request(`${ORIGIN}/v1/contacts`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(contactBody(i)) }),
    validate: (i) => CreateContactBody.parse(contactBody(i)) },
  { name: "POST interaction", request: (i) => new Request(`${ORIGIN}/v1/contacts/CR-${pick(numbers, i)}/interactions`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ interactionTypeId: interactionType, note: "Called back" }) }),
    validate: () => CreateInteractionBody.parse({ interactionTypeId: interactionType, note: "Called back" }) },
];

const isRead = (sql: string) => /^\s*(select|with)\b/i.test(sql) && !/\b(insert|update|delete)\b/i.test(sql);

/** A statement's shape for the tables: quotes, column lists and value lists folded, ~80 characters. */
function shapeOf(sql: string): string {
  let s = sql.replace(/\s+/g, " ").replace(/"/g, "").replace(/\$\d+/g, "?").trim();
  s = s.replace(/^(insert into \S+) \([^)]*\)/i, "$1 (…)");
  s = s.replace(/values \([^()]*\)(, \([^()]*\))*/gi, "values (…)");
  s = s.replace(/in \((\?, )+\?\)/gi, "in (?…)");
  // The first select list at depth 0, down to its first column.
  const m = /^select (distinct )?/i.exec(s);
  if (m) {
    let depth = 0;
    for (let i = m[0].length; i < s.length; i++) {
      const c = s[i];
      if (c === "(") depth++;
      else if (c === ")") depth--;
      else if (depth === 0 && s.startsWith(" from ", i)) {
        const columns = s.slice(m[0].length, i);
        const comma = columns.search(/,(?![^(]*\))/);
        if (columns.length > 30 && comma > 0) s = `${s.slice(0, m[0].length)}${columns.slice(0, comma)}, …${s.slice(i)}`;
        break;
      }
    }
  }
  s = s.replace(/\|/g, "¦");
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

const results: ScenarioCost[] = [];
const traceOut: Record<string, Array<Array<{ sql: string; params: unknown[] }>>> = {};
let replayPasses = Infinity;
const limiter = new RateLimiter(() => Date.now());
const metrics = new Metrics();
const caller = { keyId: "key_x", projectId, scopes: [], rateLimitPerMinute: 1e9, contactCreatesPerHour: 1e9 } as never;
const call = (s: Scenario, i: number) => Promise.resolve(service.fetch(s.request(i), { ip: "127.0.0.1" }));

const only = process.env.COSTS_ONLY;
for (const s of scenarios.filter((x) => !only || x.name === only)) {
  const { wallUs: total, cpuUs: totalCpu } = await measure(N, (i) => call(s, i).then((r) => r.text()));

  // One traced pass: the statements each request ran and the time the driver took for them.
  tracing = [];
  let sample: unknown;
  for (let i = 0; i < TRACED; i++) {
    currentRequest = i;
    const response = await call(s, i);
    if (response.status >= 300) throw new Error(`${s.name} answered ${response.status}: ${await response.text()}`);
    sample = await response.json();
  }
  const trace = tracing;
  tracing = null;

  // The reads again, bare, in the traced order: one unmeasured pass, then passes for up to REPLAY_MS.
  const reads = trace.filter((t) => isRead(t.sql));
  const bareBySql = new Map<string, { n: number; us: number }>();
  let passes = 0;
  if (reads.length) {
    for (const t of reads) await bare.time(t);
    const started = performance.now();
    while (passes < 1 || (passes < 20 && performance.now() - started < REPLAY_MS)) {
      for (const t of reads) {
        const us = await bare.time(t);
        const e = bareBySql.get(t.sql) ?? { n: 0, us: 0 };
        e.n++;
        e.us += us;
        bareBySql.set(t.sql, e);
      }
      passes++;
    }
    replayPasses = Math.min(replayPasses, passes);
    if (!/^POST/.test(s.name)) {
      traceOut[s.name] = Array.from({ length: TRACED }, () => [] as Array<{ sql: string; params: unknown[] }>);
      for (const t of reads) traceOut[s.name]![t.request]!.push({ sql: t.sql, params: t.params });
    }
  }

  // By statement shape, in the order first run.
  const byShape = new Map<string, { kind: "read" | "write"; n: number; us: number; bareN: number; bareUs: number }>();
  for (const t of trace) {
    const key = shapeOf(t.sql);
    const e = byShape.get(key) ?? { kind: isRead(t.sql) ? "read" as const : "write" as const, n: 0, us: 0, bareN: 0, bareUs: 0 };
    e.n++;
    e.us += t.us;
    byShape.set(key, e);
  }
  for (const [sql, b] of bareBySql) {
    const e = byShape.get(shapeOf(sql))!;
    e.bareN += b.n;
    e.bareUs += b.us;
  }
  const breakdown: StatementCost[] = [...byShape].map(([statement, e]) => ({
    statement, kind: e.kind, perRequest: e.n / TRACED, us: e.us / e.n, bareUs: e.kind === "read" && e.bareN ? e.bareUs / e.bareN : null,
  }));
  const readUs = reads.reduce((a, t) => a + t.us, 0) / TRACED;
  const writeUs = (trace.reduce((a, t) => a + t.us, 0) - readUs * TRACED) / TRACED;
  const readFloorUs = reads.length ? breakdown.reduce((a, b) => a + (b.bareUs ?? 0) * b.perRequest, 0) : null;
  const writes = trace.length - reads.length;

  const body = JSON.stringify(sample);
  const hono = new Hono().all("*", (c) => c.json(sample as object));
  const bareHonoUs = await mean(N, (i) => Promise.resolve(hono.fetch(s.request(i))).then((r) => r.text()));
  const requestUs = await mean(N, (i) => s.request(i));
  const keyCache = new Map([[apiKey, { fetched: Date.now() }]]);
  const keyMissUs = await mean(N, () => (isWellFormedKey(apiKey, config.CRM_ENV), hashApiKey(apiKey)));
  const driver = POSTGRES ? "pg round trips, wall" : "time inside bun:sqlite";
  const rows: CostRow[] = [
    { part: "Request object (the test's, also in the bare route)", us: requestUs, floorUs: null, floor: "" },
    { part: "routing + answer (bare Hono route, same JSON)", us: bareHonoUs - requestUs, floorUs: bareHonoUs - requestUs, floor: "bare Hono" },
    // What authenticate pays for a key seen in the last second (src/auth/keys.ts); a miss, once a second per key, also the CRC and SHA-256.
    { part: `key check (cached by its text; a miss adds CRC + SHA-256: ${keyMissUs.toFixed(1)} µs)`, us: await mean(N, () => keyCache.get(apiKey)!.fetched <= Date.now()), floorUs: null, floor: "" },
    { part: "rate limit + headers", us: await mean(N, () => rateLimitHeaders(limiter.check(caller, s.name === "POST /contacts"))), floorUs: null, floor: "" },
    { part: "request id + metrics", us: await mean(N, () => (crypto.randomUUID().replaceAll("-", ""), metrics.observeRequest("GET", "/v1/x", 200, 0.001))), floorUs: null, floor: "" },
    { part: "zod validation", us: await mean(N, s.validate), floorUs: null, floor: "" },
    { part: `SQL reads: ${(reads.length / TRACED).toFixed(1)} statements (${driver})`, us: readUs, floorUs: readFloorUs,
      floor: reads.length ? `the same ${reads.length} reads replayed bare, ${passes} passes` : "" },
    { part: `SQL writes: ${(writes / TRACED).toFixed(1)} statements incl. begin/commit (${driver})`, us: writeUs, floorUs: null,
      floor: writes ? `as is; storage floor: ${POSTGRES ? "bench/postgres/limits.ts" : "bench/limits.ts"}` : "" },
    { part: "JSON.stringify of the answer", us: await mean(N, () => JSON.stringify(sample)), floorUs: null, floor: `${body.length} B` },
  ];
  const known = rows.slice(1).reduce((a, r) => a + r.us, 0);
  rows.push({ part: "the rest: Kysely, middleware, row mapping, promises, GC", us: total - requestUs - known, floorUs: null, floor: "" });
  results.push({ name: s.name, totalUs: total - requestUs, cpuUs: totalCpu - requestUs, statements: trace.length / TRACED, readUs, writeUs, readFloorUs, rows, breakdown });
}

await service.stop();
await bare.close();

const report: CostsReport = {
  backend: POSTGRES ? "postgres" : "sqlite",
  contacts: last,
  traced: TRACED,
  replayPasses: Number.isFinite(replayPasses) ? replayPasses : 0,
  scenarios: results,
};
if (process.env.COSTS_TRACE_OUT) writeFileSync(process.env.COSTS_TRACE_OUT, JSON.stringify(traceOut));
if (process.env.COSTS_JSON) console.log(`COSTS_JSON ${JSON.stringify(report)}`);
else {
  const { costsMarkdown } = await import("./report/costs.ts");
  console.log(`# Where a request's CPU goes (bench/costs.ts), ${report.backend}, ${last.toLocaleString("en")} contacts in the project\n`);
  console.log(`SQL: ${TRACED} requests per scenario traced; their reads replayed bare on ${bare.describe}, in the traced order.\n`);
  console.log(costsMarkdown(report));
}
process.exit(0);
