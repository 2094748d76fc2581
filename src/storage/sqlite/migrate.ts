import { createHash } from "node:crypto";
import { ConfigError } from "../../config.ts";
import type { SqliteHandle } from "../../runtime/index.ts";
import { migrations as embedded, type Migration } from "./migrations.ts";

/**
 * The database cannot be used by this build: an applied migration's file changed, or a
 * newer build migrated it. A start-up refusal like a bad setting: `crm: <one line>`, exit 2.
 */
export class MigrationError extends ConfigError {}

/** SHA-256 of a migration's text, line endings read as \n (a CRLF checkout is the same file). */
export function checksum(sql: string): string {
  return createHash("sha256").update(sql.replace(/\r\n/g, "\n")).digest("hex");
}

// Fresh databases get the checksum column here; older ones get it from ALTER TABLE, which
// writes the same definition into sqlite_master, so both schemas read the same.
const CREATE_TABLE =
  "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL, checksum TEXT) STRICT";

export interface Recorded {
  name: string;
  checksum: string | null;
}

/**
 * Checks the recorded migrations against the embedded ones, then applies those not yet
 * recorded, each in its own IMMEDIATE transaction (so a CLI and a server starting together
 * apply each file once), recording its checksum (docs/decisions.md, schema upgrades).
 *
 * Applied migrations are frozen: a recorded checksum that differs from the file's stops
 * the start, and so does a recorded name this build does not have (a newer build migrated
 * the database). Rows recorded before checksums existed (no column, or NULL) are taken as
 * applied and given the embedded file's checksum: no build before recorded one, so there
 * is no history to compare with; 0001/0002 were edited after release, and
 * 0004_order_keys_and_delivery_status brings any of their versions to today's schema.
 *
 * Pending migrations run with foreign keys off (a pragma that cannot change inside a
 * transaction) and `PRAGMA foreign_key_check` before each COMMIT: SQLite's procedure for
 * rebuilding a table, so dropping a parent table does not cascade into its children.
 */
export function migrate(raw: SqliteHandle, list: readonly Migration[] = embedded): string[] {
  raw.exec(CREATE_TABLE);
  refuseNewer(raw.all<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name").map((r) => r.name), list);
  adoptUnrecordedChecksums(raw, list);
  const recorded = verify(raw, list);
  const pending = list.filter((m) => !recorded.has(m.name));
  if (pending.length === 0) return [];

  const foreignKeys = raw.all<{ foreign_keys: number }>("PRAGMA foreign_keys")[0]?.foreign_keys === 1;
  raw.exec("PRAGMA foreign_keys = OFF");
  const applied: string[] = [];
  try {
    for (const migration of pending) if (applyOne(raw, migration)) applied.push(migration.name);
  } finally {
    if (foreignKeys) raw.exec("PRAGMA foreign_keys = ON");
  }
  return applied;
}

/** Applies one migration unless another process recorded it first; true when applied. */
function applyOne(raw: SqliteHandle, { name, sql }: Migration): boolean {
  raw.exec("BEGIN IMMEDIATE");
  try {
    const row = raw.all<Recorded>("SELECT name, checksum FROM schema_migrations WHERE name = ?", [name])[0];
    if (row) {
      assertFrozen(row, sql);
    } else {
      raw.exec(sql);
      const broken = raw.all<{ table: string; parent: string }>("PRAGMA foreign_key_check");
      if (broken.length > 0) {
        const pairs = [...new Set(broken.map((b) => `${b.table} → ${b.parent}`))].join(", ");
        throw new MigrationError(`migration ${name} would leave ${broken.length} rows with a missing parent (${pairs}); it was rolled back`);
      }
      raw.all("INSERT INTO schema_migrations (name, applied_at, checksum) VALUES (?, ?, ?) RETURNING name", [
        name,
        new Date().toISOString(),
        checksum(sql),
      ]);
    }
    raw.exec("COMMIT");
    return !row;
  } catch (error) {
    raw.exec("ROLLBACK");
    throw error;
  }
}

/**
 * Gives rows recorded before checksums the embedded file's checksum (adding the column to
 * a table made before it), in one IMMEDIATE transaction; writes nothing when none lacks one.
 */
function adoptUnrecordedChecksums(raw: SqliteHandle, list: readonly Migration[]): void {
  const hasColumn = () => raw.all("SELECT 1 FROM pragma_table_info('schema_migrations') WHERE name = 'checksum'").length > 0;
  const lacking = () => raw.all("SELECT 1 FROM schema_migrations WHERE checksum IS NULL LIMIT 1").length > 0;
  if (hasColumn() && !lacking()) return;
  raw.exec("BEGIN IMMEDIATE");
  try {
    if (!hasColumn()) raw.exec("ALTER TABLE schema_migrations ADD COLUMN checksum TEXT");
    for (const { name, sql } of list) {
      raw.all("UPDATE schema_migrations SET checksum = ? WHERE name = ? AND checksum IS NULL RETURNING name", [checksum(sql), name]);
    }
    raw.exec("COMMIT");
  } catch (error) {
    raw.exec("ROLLBACK");
    throw error;
  }
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

/** The recorded names, once every recorded migration is known and unchanged. */
function verify(raw: SqliteHandle, list: readonly Migration[]): Set<string> {
  const rows = raw.all<Recorded>("SELECT name, checksum FROM schema_migrations ORDER BY name");
  refuseNewer(rows.map((r) => r.name), list);
  for (const row of rows) assertFrozen(row, list.find((m) => m.name === row.name)!.sql);
  return new Set(rows.map((r) => r.name));
}

export function assertFrozen(row: Recorded, sql: string): void {
  const expected = checksum(sql);
  if (row.checksum !== null && row.checksum !== expected) {
    throw new MigrationError(
      `migration ${row.name} differs from the one applied to this database (file checksum ${expected.slice(0, 12)}, applied ${row.checksum.slice(0, 12)}): migrations are frozen; add a new file`,
    );
  }
}

/** True when every embedded migration is recorded (for /readyz). */
export function migrationsApplied(raw: SqliteHandle): boolean {
  const names = new Set(raw.all<{ name: string }>("SELECT name FROM schema_migrations").map((r) => r.name));
  return embedded.every((m) => names.has(m.name));
}
