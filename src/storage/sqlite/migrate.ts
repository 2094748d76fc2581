import type { SqliteHandle } from "../../runtime/index.ts";
import { assertFrozen, checksum, MigrationError, refuseNewer, type Recorded, type SqliteMigration as Migration } from "../migrations.ts";
import { migrations as embedded } from "./migrations.ts";

export { checksum, MigrationError } from "../migrations.ts";

// Fresh databases get the checksum column here; older ones get it from ALTER TABLE, which
// writes the same definition into sqlite_master, so both schemas read the same.
const CREATE_TABLE =
  "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL, checksum TEXT) STRICT";

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
 * A migration's step (`after`) runs right after its SQL, before that check, in the same
 * transaction. Temporary storage is on disk meanwhile (`temp_store = FILE`; the server keeps
 * it in memory): SQLite's sorts of millions of rows (a CREATE INDEX, a step's ordered copy)
 * then run in cache-sized pieces through temporary files instead of growing the process.
 */
export function migrate(raw: SqliteHandle, list: readonly Migration[] = embedded): string[] {
  raw.exec(CREATE_TABLE);
  refuseNewer(raw.all<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name").map((r) => r.name), list);
  adoptUnrecordedChecksums(raw, list);
  const recorded = verify(raw, list);
  const pending = list.filter((m) => !recorded.has(m.name));
  if (pending.length === 0) return [];

  const foreignKeys = raw.all<{ foreign_keys: number }>("PRAGMA foreign_keys")[0]?.foreign_keys === 1;
  const tempStore = raw.all<{ temp_store: number }>("PRAGMA temp_store")[0]?.temp_store ?? 0;
  raw.exec("PRAGMA foreign_keys = OFF");
  raw.exec("PRAGMA temp_store = FILE");
  const applied: string[] = [];
  try {
    for (const migration of pending) if (applyOne(raw, migration)) applied.push(migration.name);
  } finally {
    if (foreignKeys) raw.exec("PRAGMA foreign_keys = ON");
    raw.exec(`PRAGMA temp_store = ${tempStore}`);
  }
  return applied;
}

/** Applies one migration unless another process recorded it first; true when applied. */
function applyOne(raw: SqliteHandle, { name, sql, after }: Migration): boolean {
  raw.exec("BEGIN IMMEDIATE");
  try {
    const row = raw.all<Recorded>("SELECT name, checksum FROM schema_migrations WHERE name = ?", [name])[0];
    if (row) {
      assertFrozen(row, sql);
    } else {
      raw.exec(sql);
      after?.(raw);
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

/** The recorded names, once every recorded migration is known and unchanged. */
function verify(raw: SqliteHandle, list: readonly Migration[]): Set<string> {
  const rows = raw.all<Recorded>("SELECT name, checksum FROM schema_migrations ORDER BY name");
  refuseNewer(rows.map((r) => r.name), list);
  for (const row of rows) assertFrozen(row, list.find((m) => m.name === row.name)!.sql);
  return new Set(rows.map((r) => r.name));
}

/** True when every embedded migration is recorded (for /readyz). */
export function migrationsApplied(raw: SqliteHandle): boolean {
  const names = new Set(raw.all<{ name: string }>("SELECT name FROM schema_migrations").map((r) => r.name));
  return embedded.every((m) => names.has(m.name));
}
