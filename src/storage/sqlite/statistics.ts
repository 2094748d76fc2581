import { sql, type Kysely, type RawBuilder } from "kysely";
import type { SqliteHandle } from "../../runtime/types.ts";
import type { BulkTable } from "../port.ts";
import type { Database } from "../schema.ts";

/**
 * The SQLite query planner's inputs, kept in one place (docs/performance.md, "Plans on a
 * database as users build it"). A database filled through the API has no statistics
 * (sqlite_stat1) until something runs ANALYZE; without them SQLite guesses that every index
 * equality matches ~10 rows, and `?email=` walked the whole project in list order instead
 * of taking contacts_email. Two defences, both SQLite-specific:
 *
 * - statistics kept fresh with `PRAGMA optimize` (SQLite ≥ 3.46; Bun bundles 3.54, Deno's
 *   node:sqlite 3.53): at open, every 10 minutes (src/jobs/index.ts) and at close;
 * - list queries shaped so the index they are meant to walk is the only one the planner can
 *   use (`filterOnly`), whatever the statistics say.
 */

/**
 * Rows ANALYZE samples per index when optimize runs it. The planner only needs the ratios
 * (rows per project, per email…), and a sample gives them. The first analysis of a 1 M-contact
 * file still takes ~0.6 s, once: counting the big indexes dominates (100 or 400 were no faster).
 */
const ANALYSIS_LIMIT = 1000;

/**
 * 0x10002: check every table, not only those this connection has queried (0x10000), and
 * ANALYZE those that need it (0x02): a table with an index never analyzed, or grown
 * 25-fold since its last analysis. A no-op costs ~0.1 ms.
 */
const OPTIMIZE = "PRAGMA optimize = 0x10002";

/**
 * The tables a bulk load fills, by the table it is reported for (`BulkTable`, src/storage/port.ts):
 * the first of each list is the anchor whose growth is measured, the rest are analyzed with it.
 */
const BULK_FAMILIES: Record<BulkTable, readonly (keyof Database)[]> = {
  contacts: ["contacts", "contact_search_terms", "contact_tags", "contact_unique_values", "events"],
  interaction_logs: ["interaction_logs", "events"],
};
const WATCHED = [...new Set(Object.values(BULK_FAMILIES).flat())];

/**
 * Below this many rows a watched table keeps no statistics (docs/performance.md, "Plans right
 * after a bulk load"): statistics taken while contacts held one row told the planner every
 * index matched one row, and right after a load of 20,000 contacts a search took ~500 ms
 * (instead of ~3 ms) until the next analysis. Without statistics SQLite assumes a large
 * table, which the list queries are shaped for (`filterOnly` below), so a small table is
 * planned as a large one and never poisons the plans of the rows that follow.
 */
export const COLD_ROWS = 1000;

/** At open, after migrations: a database built through the API gets statistics here. */
export function refreshStatisticsAtOpen(raw: Pick<SqliteHandle, "exec">): void {
  try {
    raw.exec(`PRAGMA analysis_limit = ${ANALYSIS_LIMIT}`);
    raw.exec(OPTIMIZE);
    // Statistics of a watched table taken while it was tiny are dropped (`COLD_ROWS`).
    raw.exec(`DELETE FROM sqlite_stat1 WHERE ${COLD}`);
    raw.exec("ANALYZE sqlite_schema");
  } catch {
    // Best effort: another process holding the write lock past busy_timeout only delays
    // the statistics to the next run; it must not stop the service from starting.
  }
}

/**
 * Every 10 minutes (src/jobs/index.ts) and at close (best effort there), through Kysely so
 * it waits its turn behind any open transaction on the connection.
 */
export async function refreshStatistics(db: Kysely<Database>): Promise<void> {
  await sql.raw(OPTIMIZE).execute(db);
  await dropColdStatistics(db);
}

/** The statistics optimize or ANALYZE took of a watched table under `COLD_ROWS` rows (the first number of a sqlite_stat1 row). */
const COLD = `tbl IN (${WATCHED.map((t) => `'${t}'`).join(", ")}) AND CAST(stat AS INTEGER) < ${COLD_ROWS}`;
const DROP_COLD = `DELETE FROM sqlite_stat1 WHERE ${COLD}`;

/** Whether anything was ever analyzed (sqlite_stat1 exists only from the first ANALYZE on). */
async function hasStatistics(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_schema WHERE name = 'sqlite_stat1'`.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}

/**
 * Drops the statistics of watched tables under `COLD_ROWS` rows and, when it did, has the
 * planner read sqlite_stat1 again (`ANALYZE sqlite_schema`, https://sqlite.org/lang_analyze.html).
 */
async function dropColdStatistics(db: Kysely<Database>): Promise<void> {
  if (!(await hasStatistics(db))) return;
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_stat1 WHERE ${sql.raw(COLD)}`.execute(db);
  if (Number(rows[0]?.n ?? 0) === 0) return;
  await sql.raw(DROP_COLD).execute(db);
  await sql.raw("ANALYZE sqlite_schema").execute(db);
}

/**
 * After bulk loads (`Storage.refreshGrownStatistics`, src/jobs/statistics.ts): each anchor
 * table (`BULK_FAMILIES`) that holds at least `COLD_ROWS` rows and twice the rows of its
 * statistics (or has none) is analyzed with its family, one `ANALYZE table` at a time, each
 * waiting its turn behind the open group commit. Measured by `max(rowid)` (a seek; deletes
 * make it an overestimate, which only analyzes early). With analysis_limit an ANALYZE of a
 * table samples its indexes instead of reading them: ~0.5 ms at 100,000 rows. Doubling
 * keeps the statistics within 2× of the table whatever wrote the rows (batches, imports
 * from the CLI's process, a restored file), and costs a load of N rows about log2(N)
 * small analyses.
 */
export async function refreshGrownStatistics(db: Kysely<Database>): Promise<string[]> {
  const analyzed = await analyzedRows(db);
  const due = new Set<keyof Database>();
  for (const family of Object.values(BULK_FAMILIES)) {
    const anchor = family[0]!;
    const row = await sql<{ n: number | null }>`SELECT max(rowid) AS n FROM ${sql.table(anchor)}`.execute(db);
    const rows = Number(row.rows[0]?.n ?? 0);
    const known = analyzed.get(anchor);
    if (rows >= COLD_ROWS && (known === undefined || rows >= 2 * known)) for (const table of family) due.add(table);
  }
  for (const table of due) await sql`ANALYZE ${sql.table(table)}`.execute(db);
  if (due.size > 0) await dropColdStatistics(db);
  return [...due];
}

/** The rows each watched table had when its statistics were taken: the largest first number of its sqlite_stat1 rows. */
async function analyzedRows(db: Kysely<Database>): Promise<Map<string, number>> {
  if (!(await hasStatistics(db))) return new Map();
  const { rows } = await sql<{ tbl: string; n: number }>`SELECT tbl, max(CAST(stat AS INTEGER)) AS n FROM sqlite_stat1 GROUP BY tbl`.execute(db);
  return new Map(rows.map((r) => [r.tbl, Number(r.n)]));
}

/**
 * A column reference the planner may filter on but never choose an index for (SQLite's
 * unary `+`, https://sqlite.org/optoverview.html#disqualifying_where_clause_terms_using_unary_).
 * The list queries (src/contacts/list-query.ts) write every term but their driver's this
 * way, so the driving index is the only sensible plan with or without statistics. The
 * list queries reach it as `filterOnlyIn(db)` (src/storage/query.ts): PostgreSQL's is a plain
 * reference (its statistics are kept by autovacuum).
 */
export function filterOnly<T = unknown>(ref: string): RawBuilder<T> {
  return sql<T>`+${sql.ref(ref)}`;
}
