import type { Pool, PoolClient } from "pg";
import { assertFrozen, checksum, refuseNewer, type PostgresMigration as Migration, type Recorded } from "../migrations.ts";
import { postgresMigrations } from "./migrations.ts";

/** The advisory lock every node takes to migrate and bootstrap (docs/scaling.md §6: each applied once). */
export const START_LOCK = 0x63726d01; // "crm" 1

const CREATE_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at text NOT NULL, checksum text)";

/**
 * Applies the pending PostgreSQL migrations while holding the start lock, so nodes
 * starting together apply each file once and the others wait, then find it recorded.
 * Like SQLite's runner: applied files are frozen (checksums), and a database migrated by
 * a newer build stops the start (a node older than the schema refuses to start).
 * Each file runs in its own transaction (PostgreSQL's DDL is transactional), with its step
 * (`after`) if it has one, on this same connection: the start lock keeps other nodes of
 * this build from migrating meanwhile.
 */
export async function migratePostgres(pool: Pool, list: readonly Migration[] = postgresMigrations): Promise<string[]> {
  return withStartLock(pool, async (client) => {
    await client.query(CREATE_TABLE);
    const rows = (await client.query<Recorded>("SELECT name, checksum FROM schema_migrations ORDER BY name")).rows;
    refuseNewer(rows.map((r) => r.name), list);
    for (const row of rows) assertFrozen(row, list.find((m) => m.name === row.name)!.sql);
    const recorded = new Set(rows.map((r) => r.name));
    const applied: string[] = [];
    for (const migration of list.filter((m) => !recorded.has(m.name))) {
      await client.query("BEGIN");
      try {
        await client.query(migration.sql);
        await migration.after?.(client);
        await client.query("INSERT INTO schema_migrations (name, applied_at, checksum) VALUES ($1, $2, $3)", [
          migration.name,
          new Date().toISOString(),
          checksum(migration.sql),
        ]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
      applied.push(migration.name);
    }
    await vacuumRewritten(client, list.filter((m) => applied.includes(m.name)));
    return applied;
  });
}

/**
 * VACUUM ANALYZE of the tables the applied migrations rewrote (`vacuumAfter`), once each,
 * still under the start lock (VACUUM cannot run in a transaction): the first searches after
 * an upgrade read index-only ranges planned on real statistics, not the heap (7 s for the
 * term table after 0013 at 1,110,000 contacts, docs/operations.md §3.3). Reads and writes go on meanwhile.
 */
async function vacuumRewritten(client: PoolClient, applied: readonly Migration[]): Promise<void> {
  const tables = [...new Set(applied.flatMap((m) => m.vacuumAfter ?? []))];
  for (const table of tables) await client.query(`VACUUM (ANALYZE) ${client.escapeIdentifier(table)}`);
}

/** Runs `work` on one connection holding the start lock (session-scoped, released after). */
export async function withStartLock<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [START_LOCK]);
    try {
      return await work(client);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [START_LOCK]);
    }
  } finally {
    client.release();
  }
}

/** True when every embedded migration is recorded (for /readyz); throws when the database cannot be reached. */
export async function postgresMigrationsApplied(pool: Pool): Promise<boolean> {
  const names = new Set((await pool.query<{ name: string }>("SELECT name FROM schema_migrations")).rows.map((r) => r.name));
  return postgresMigrations.every((m) => names.has(m.name));
}
