import { sql, type Kysely } from "kysely";
import type { BulkTable } from "../port.ts";
import type { Database, Db } from "../schema.ts";

/**
 * PostgreSQL's planner statistics after a bulk load (docs/performance.md, "Plans right after
 * a bulk load"). Autovacuum analyzes a table once 10 % of it has changed, but only at its
 * next round (autovacuum_naptime, a minute) and one table at a time; right after a batch
 * load the first requests would be planned on statistics taken when the table was tiny.
 * `refreshGrownStatistics` (`Storage.refreshGrownStatistics`, src/storage/port.ts) analyzes
 * at once the tables a load filled, by one node at a time.
 */

/** The tables a bulk load fills, by the table it is reported for; analyzed together. */
const BULK_FAMILIES: Record<BulkTable, readonly (keyof Database)[]> = {
  contacts: ["contacts", "contact_search_terms", "contact_tags", "contact_unique_values", "events"],
  interaction_logs: ["interaction_logs", "events"],
};
const WATCHED = [...new Set(Object.values(BULK_FAMILIES).flat())];

/** Below this many live rows a table is left to autovacuum (as src/storage/sqlite/statistics.ts's COLD_ROWS). */
const MIN_ROWS = 1000;

/** This job's advisory lock (hashed as src/storage/postgres/dialect.ts hashes its names): a node that does not get it at once leaves the work to the node that has it. */
const LOCK = "crm:statistics";

/**
 * The watched tables changed by at least as many rows since their last analysis as they
 * held then (`n_mod_since_analyze` ≥ `n_live_tup` − it: doubled by inserts, or rewritten
 * by updates), and holding at least MIN_ROWS rows, or never analyzed with that many.
 * pg_stat_user_tables is the server's shared memory: cheap, and the same on every node
 * (a backend reports its counts within a second of its commit).
 */
async function grownTables(db: Db): Promise<string[]> {
  const { rows } = await sql<{ relname: string }>`
    select relname from pg_stat_user_tables
    where schemaname = current_schema() and relname in (${sql.join(WATCHED)})
      and n_live_tup >= ${MIN_ROWS}
      and (coalesce(last_analyze, last_autoanalyze) is null or n_mod_since_analyze >= n_live_tup - n_mod_since_analyze)`.execute(db);
  return rows.map((r) => r.relname);
}

/**
 * One pass: the tables that grew (above) are analyzed in one transaction holding a
 * transaction-scoped advisory lock taken without waiting, so across nodes one analyzes and
 * the others skip; the check is repeated under the lock, so a node that gets it right after
 * another's analysis finds nothing left to do. ANALYZE takes a SHARE UPDATE EXCLUSIVE lock
 * on each table: reads and writes go on meanwhile. It samples 30,000 rows per table
 * (default_statistics_target 100), whatever the table's size.
 */
export async function refreshGrownStatistics(db: Kysely<Database>): Promise<string[]> {
  if ((await grownTables(db)).length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${LOCK}, 0)) as ok`.execute(trx);
    if (!rows[0]?.ok) return [];
    const tables = await grownTables(trx);
    for (const table of tables) await sql`analyze ${sql.table(table)}`.execute(trx);
    return tables;
  });
}
