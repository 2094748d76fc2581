/**
 * `bun bench/search-profile.ts <crm.db | postgres://…> [kind…] [--relevance] [--verbose]
 * [--explain]`: where a search's time goes (issue 31; docs/api.md §11.6), in process, on a
 * database bench/search.ts built (BENCH_KEEP=1): for each kind of query of
 * bench/harness/seed/search-people.ts, the time of resolving the words, of the page of ids
 * and of the contacts' answer, and the statements run, per query; `--verbose` lists the
 * slowest query's statements, `--explain` also its slowest statement's plan as run. A SQLite
 * file is opened read-only; on PostgreSQL only SELECTs are sent. `--slowest=N` lists the N
 * slowest queries of each kind with each statement's time (where the tail comes from);
 * `--no-pairs` leaves the pair terms out of the drivers (the build before them, on the same data).
 */
import { Kysely, PostgresDialect, sql, type LogEvent } from "kysely";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { Database as Sqlite } from "bun:sqlite";
import pg from "pg";
import type { Database } from "../src/storage/schema.ts";
import { listContactRows } from "../src/contacts/list-query.ts";
import { pairTermsDrive } from "../src/contacts/search/driver.ts";
import { resolveSearch } from "../src/contacts/search/query.ts";
import { relevanceRows } from "../src/contacts/search/relevance.ts";
import { toContacts } from "../src/contacts/service.ts";
import { inListOrder } from "../src/storage/query.ts";
import { percentile } from "./harness/report.ts";
import { KINDS, queries, type Kind } from "./harness/seed/search-people.ts";

const [path, ...wanted] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (!path) throw new Error("usage: bun bench/search-profile.ts <crm.db | postgres://…> [kind…]");
const RELEVANCE = process.argv.includes("--relevance");
const EXPLAIN = process.argv.includes("--explain");
const VERBOSE = EXPLAIN || process.argv.includes("--verbose");
const POSTGRES = path.startsWith("postgres");
const COUNT = Number(process.env.PROFILE_QUERIES ?? 100);
if (process.argv.includes("--no-pairs")) pairTermsDrive.enabled = false;
const SLOWEST = Number(process.argv.find((a) => a.startsWith("--slowest="))?.split("=")[1] ?? 0);
let statements: Array<{ sql: string; parameters: readonly unknown[]; ms: number }> = [];
const log = (e: LogEvent) => void statements.push({ sql: e.query.sql, parameters: e.query.parameters, ms: e.queryDurationMillis });
const db = new Kysely<Database>({
  dialect: POSTGRES ? new PostgresDialect({ pool: new pg.Pool({ connectionString: path, max: 4 }) }) : sqliteDialect(path),
  log,
});
function sqliteDialect(file: string) {
  const raw = new Sqlite(file, { readonly: true });
  raw.exec("PRAGMA cache_size = -8192");
  return new BunSqliteDialect({ database: raw });
}
const project = await db.selectFrom("projects").select(["id", "contact_count"]).orderBy("contact_count", "desc").executeTakeFirstOrThrow();
const qs = queries(Number(project.contact_count), COUNT);
for (const kind of KINDS.filter((k) => !wanted.length || wanted.includes(k)) as Kind[]) {
  const total: number[] = [];
  const parts = { resolve: [] as number[], ids: [] as number[], answer: [] as number[], statements: [] as number[] };
  let slowest = { ms: 0, q: "", statements: [] as typeof statements };
  const timed: Array<{ ms: number; q: string; statements: typeof statements }> = [];
  for (let round = 0; round < 2; round++) {
    for (const q of qs[kind]) {
      statements = [];
      const t0 = performance.now();
      const search = await resolveSearch(db, project.id, q);
      const t1 = performance.now();
      const rows = RELEVANCE
        ? await relevanceRows(db, project.id, { searchWords: search.words }, search, undefined, 50)
        : await listContactRows(db, project.id, { searchWords: search.words }, 50);
      const t2 = performance.now();
      await toContacts(db, rows.slice(0, 50));
      const t3 = performance.now();
      if (round === 0) continue; // the first round warms the cache
      total.push(t3 - t0);
      parts.resolve.push(t1 - t0);
      parts.ids.push(t2 - t1);
      parts.answer.push(t3 - t2);
      parts.statements.push(statements.length);
      if (t3 - t0 > slowest.ms) slowest = { ms: t3 - t0, q, statements };
      timed.push({ ms: t3 - t0, q, statements });
    }
  }
  const f = (xs: number[]) => `${percentile(xs, 50).toFixed(2)}/${percentile(xs, 95).toFixed(2)}`;
  console.log(`${kind.padEnd(14)} total p50/p95 ${f(total)} ms · resolve ${f(parts.resolve)} · ids ${f(parts.ids)} · answer ${f(parts.answer)} · statements p95 ${percentile(parts.statements, 95)}`);
  for (const t of timed.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST)) {
    console.log(`  ${t.ms.toFixed(2)} ms ${JSON.stringify(t.q)}: ${t.statements.map((s) => `${s.ms.toFixed(2)} ${/count\(/.test(s.sql) ? "count" : s.sql.slice(0, 12)} ${s.parameters.filter((v) => String(v).length < 20).join(",")}`).join(" | ")}`);
  }
  if (VERBOSE) {
    console.log(`  slowest ${JSON.stringify(slowest.q)} ${slowest.ms.toFixed(2)} ms:`);
    for (const s of slowest.statements) console.log(`    ${s.ms.toFixed(2)} ms  ${s.sql.replace(/\s+/g, " ").slice(0, 400)}`);
    if (EXPLAIN) {
      const worst = slowest.statements.filter((st) => st.sql.startsWith("select")).sort((a, b) => b.ms - a.ms)[0]!;
      const explain = POSTGRES ? "explain (analyze, buffers) " : "explain query plan ";
      const statement = sql.raw(explain + worst.sql.replace(/\$\d+|\?/g, (() => { let i = 0; return () => literal(worst.parameters[i++]); })()));
      // A walk in list order is explained as it ran: through inListOrder (PostgreSQL: bitmap scans off).
      const walked = slowest.statements[slowest.statements.indexOf(worst) - 1]?.sql.startsWith("set enable_bitmapscan");
      const { rows } = walked ? await inListOrder(db, (d) => statement.execute(d)) : await statement.execute(db);
      for (const row of rows as Array<Record<string, unknown>>) console.log(`      ${Object.values(row).at(-1)}`);
    }
  }
}

/** A parameter written into the statement, for EXPLAIN only (the values are the bench's own). */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `'{${value.join(",")}}'`;
  return typeof value === "number" ? String(value) : `'${String(value).replaceAll("'", "''")}'`;
}

await db.destroy();
