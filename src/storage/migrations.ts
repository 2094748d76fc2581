import { createHash } from "node:crypto";
import type { PoolClient } from "pg";
import { ConfigError } from "../config.ts";
import type { SqliteHandle } from "../runtime/types.ts";

/**
 * What both backends' migration runners share (src/storage/sqlite/migrate.ts,
 * src/storage/postgres/migrate.ts): migrations are plain SQL files, db/*.sql for SQLite and
 * db/postgres/*.sql for PostgreSQL, embedded at build time; applied ones are frozen by
 * their checksum, and a database migrated by a newer build stops the start.
 */

/**
 * One migration: its file name without `.sql`, its text (checksummed when applied), and
 * optionally a step of code run right after the text, in the same transaction, for what SQL
 * alone cannot do (0014_search_folding rebuilds the search terms, src/storage/search-rebuild.ts).
 * The checksum covers the text only: a step is this build's code, run once, when the file is
 * applied.
 */
export interface Migration<Step = unknown> {
  name: string;
  sql: string;
  after?: Step;
  /**
   * PostgreSQL: tables the migration rewrote, vacuumed and analyzed once the pending
   * migrations are applied, before the node serves (docs/operations.md §3.3): a table
   * rewritten in bulk has neither statistics nor a visibility map until autovacuum's next
   * round, and its index-only ranges visit the heap meanwhile.
   */
  vacuumAfter?: readonly string[];
}

/** SQLite's migrations: a step runs on the raw handle, synchronously, inside the runner's IMMEDIATE transaction. */
export type SqliteMigration = Migration<(raw: SqliteHandle) => void>;
/** PostgreSQL's: a step runs on the connection that holds the start lock, inside the file's transaction. */
export type PostgresMigration = Migration<(client: PoolClient) => Promise<void>>;

/** A migration as the database recorded it. */
export interface Recorded {
  name: string;
  checksum: string | null;
}

/**
 * The database cannot be used by this build: an applied migration's file changed, or a
 * newer build migrated it. A start-up refusal like a bad setting: `crm: <one line>`, exit 2.
 */
export class MigrationError extends ConfigError {}

/** SHA-256 of a migration's text, line endings read as \n (a CRLF checkout is the same file). */
export function checksum(sql: string): string {
  return createHash("sha256").update(sql.replace(/\r\n/g, "\n")).digest("hex");
}

/** Stops the start when a newer build migrated the database (checked before anything is written). */
export function refuseNewer(names: string[], list: readonly Migration[]): void {
  const unknown = names.filter((name) => !list.some((m) => m.name === name));
  if (unknown.length > 0) {
    throw new MigrationError(
      `this database was migrated by a newer version (it records ${unknown.join(", ")}, which this build does not have); run that version or a newer one`,
    );
  }
}

/** Stops the start when an applied migration's file changed since. */
export function assertFrozen(row: Recorded, sql: string): void {
  const expected = checksum(sql);
  if (row.checksum !== null && row.checksum !== expected) {
    throw new MigrationError(
      `migration ${row.name} differs from the one applied to this database (file checksum ${expected.slice(0, 12)}, applied ${row.checksum.slice(0, 12)}): migrations are frozen; add a new file`,
    );
  }
}
