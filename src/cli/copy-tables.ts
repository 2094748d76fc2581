import type { PoolClient } from "pg";
import type { SqliteHandle } from "../runtime/index.ts";
import { UsageError } from "./args.ts";
import { progress } from "./progress.ts";

/**
 * Every table of the data, parents before children (foreign keys), in the order
 * `crm copy-to-postgres` fills them (docs/scaling.md §6). `schema_migrations` is each backend's
 * own bookkeeping, and PostgreSQL's `rate_limit_buckets` is live state that refills, so
 * neither is copied. A SQLite table missing here stops the copy (see `copyTables`): a new
 * migration's table cannot be left behind unnoticed.
 */
export const COPY_ORDER = [
  "settings",
  "projects",
  "api_keys",
  "contact_types",
  "interaction_types",
  "custom_fields",
  "tags",
  "contacts",
  "contact_tags",
  "contact_search_terms",
  "search_typo_keys",
  "contact_unique_values",
  "contact_name_keys",
  "duplicate_groups",
  "merges",
  "interaction_logs",
  "events",
  "idempotency_records",
  "webhooks",
  "deliveries",
  "delivery_attempts",
  "forms",
  "form_submissions",
  "admins",
  "admin_imports",
  "erased_contacts",
  "changes",
  "change_counters",
] as const;

/**
 * Live state that is not carried over: each backend's migration bookkeeping, and the admin
 * console's sessions, sign-in tries and locks and setup links (docs/admin.md §1), which
 * expire within hours, and uploads waiting for their import to start (an hour at most);
 * admins sign in again on the new database.
 */
const NOT_COPIED = ["schema_migrations", "admin_sessions", "admin_sign_in_attempts", "admin_setup_tokens", "admin_import_uploads"];

export type CopiedTable = (typeof COPY_ORDER)[number];

/** Rows per read and per multi-row INSERT: 500 × at most 21 columns stays far below PostgreSQL's 65,535 parameters. */
const BATCH = 500;
/** Tables with at least this many rows show progress on stderr (`crm import`'s bar). */
const PROGRESS_FROM = 100_000;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

interface Shape {
  /** Every column of the SQLite table, in its order; PostgreSQL-only columns keep their defaults. */
  columns: string[];
  /** The primary key's columns, in key order: the keyset cursor of the reads. */
  key: string[];
}

function shapeOf(sqlite: SqliteHandle, table: string): Shape {
  const info = sqlite.all<{ name: string; pk: number }>(`PRAGMA table_info(${quote(table)})`);
  if (info.length === 0) throw new Error(`the SQLite database has no table ${table}`);
  const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
  if (key.length === 0) throw new Error(`table ${table} has no primary key to read it in order`);
  return { columns: info.map((c) => c.name), key };
}

/**
 * The rows of `table` in primary-key order, BATCH at a time, each batch read after the
 * last key of the one before (a keyset cursor on the key's index): memory stays the same
 * at a thousand rows or ten million.
 */
function* batches(sqlite: SqliteHandle, table: string, { columns, key }: Shape): Generator<unknown[][]> {
  const select = `SELECT ${columns.map(quote).join(", ")} FROM ${quote(table)}`;
  const order = key.map(quote).join(", ");
  const first = `${select} ORDER BY ${order} LIMIT ${BATCH}`;
  const next = `${select} WHERE (${order}) > (${key.map(() => "?").join(", ")}) ORDER BY ${order} LIMIT ${BATCH}`;
  let after: unknown[] | null = null;
  for (;;) {
    const rows: Record<string, unknown>[] = sqlite.all(after ? next : first, after ?? []);
    if (rows.length > 0) yield rows.map((row) => columns.map((c) => row[c]));
    if (rows.length < BATCH) return;
    const last: Record<string, unknown> = rows[rows.length - 1]!;
    after = key.map((c) => last[c]);
  }
}

function insertStatement(table: string, columns: string[], rows: number): string {
  const width = columns.length;
  const tuples = Array.from({ length: rows }, (_, i) => `(${columns.map((_, j) => `$${i * width + j + 1}`).join(", ")})`);
  return `INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES ${tuples.join(", ")}`;
}

/** The tables of COPY_ORDER that hold at least one row on the target. */
async function tablesWithRows(target: PoolClient): Promise<string[]> {
  const probes = COPY_ORDER.map((t) => `SELECT '${t}' AS name WHERE EXISTS (SELECT 1 FROM ${quote(t)})`);
  return (await target.query<{ name: string }>(probes.join(" UNION ALL "))).rows.map((r) => r.name);
}

async function copyTable(sqlite: SqliteHandle, target: PoolClient, table: CopiedTable): Promise<number> {
  const shape = shapeOf(sqlite, table);
  const total = sqlite.all<{ n: number }>(`SELECT count(*) AS n FROM ${quote(table)}`)[0]!.n;
  const bar = total >= PROGRESS_FROM ? progress(table, total, PROGRESS_FROM) : null;
  const full = { name: `crm_copy_${table}`, text: insertStatement(table, shape.columns, BATCH) };
  let copied = 0;
  // One INSERT in flight while the next batch is read from SQLite.
  let inFlight: Promise<unknown> = Promise.resolve();
  for (const rows of batches(sqlite, table, shape)) {
    await inFlight;
    const values = rows.flat();
    inFlight = rows.length === BATCH ? target.query({ ...full, values }) : target.query(insertStatement(table, shape.columns, rows.length), values);
    inFlight.catch(() => undefined); // awaited on the next turn or after the loop
    copied += rows.length;
    bar?.update(copied, copied);
  }
  await inFlight;
  bar?.done(copied, copied);
  return copied;
}

/**
 * Copies every table of COPY_ORDER from `sqlite` into the PostgreSQL connection `target`
 * in ONE transaction (docs/scaling.md §6): the target's tables are locked (a node started
 * meanwhile waits on its first read or write, then finds the copy), must all be empty, and are filled
 * in foreign-key order with the same ids; then the contacts identity moves past the
 * highest id, so new contacts never take a copied id. Any failure rolls the whole copy
 * back. The reads run in one SQLite read transaction: one consistent snapshot even while
 * a server still writes. Returns the rows copied per table.
 */
export async function copyTables(sqlite: SqliteHandle, target: PoolClient): Promise<Record<CopiedTable, number>> {
  const known = new Set<string>([...COPY_ORDER, ...NOT_COPIED]);
  const unknown = sqlite
    // Litestream's own tables (_litestream_seq, _litestream_lock) are its bookkeeping, not data.
    .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_litestream\\_%' ESCAPE '\\' ORDER BY name")
    .filter((t) => !known.has(t.name));
  if (unknown.length > 0) throw new Error(`the SQLite database has tables this build cannot copy: ${unknown.map((t) => t.name).join(", ")}`);

  const counts = {} as Record<CopiedTable, number>;
  sqlite.exec("BEGIN");
  try {
    await target.query("BEGIN");
    try {
      await target.query(`LOCK TABLE ${COPY_ORDER.map(quote).join(", ")} IN ACCESS EXCLUSIVE MODE`);
      const filled = await tablesWithRows(target);
      if (filled.length > 0) {
        throw new UsageError(`the target database already holds data (in ${filled.join(", ")}); copy-to-postgres only fills an empty database`);
      }
      for (const table of COPY_ORDER) {
        try {
          counts[table] = await copyTable(sqlite, target, table);
        } catch (error) {
          throw new Error(`copying ${table}: ${(error as Error)?.message ?? error}`, { cause: error });
        }
      }
      // is_called false on an empty table: the first contact then gets id 1.
      await target.query(
        "SELECT setval(pg_get_serial_sequence('contacts', 'id'), GREATEST((SELECT max(id) FROM contacts), 1), (SELECT max(id) FROM contacts) IS NOT NULL)",
      );
      await target.query("COMMIT");
    } catch (error) {
      await target.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  } finally {
    sqlite.exec("COMMIT");
  }
  return counts;
}
