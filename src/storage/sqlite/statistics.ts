import { sql, type Kysely, type RawBuilder } from "kysely";
import type { SqliteHandle } from "../../runtime/types.ts";
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

/** At open, after migrations: a database built through the API gets statistics here. */
export function refreshStatisticsAtOpen(raw: Pick<SqliteHandle, "exec">): void {
  try {
    raw.exec(`PRAGMA analysis_limit = ${ANALYSIS_LIMIT}`);
    raw.exec(OPTIMIZE);
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
