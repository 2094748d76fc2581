import { sql, type Kysely } from "kysely";
import { jsonArrayFrom } from "kysely/helpers/sqlite";
import type { Dialect } from "../port.ts";
import type { Database } from "../schema.ts";
import { runDirectly } from "./direct.ts";
import { filterOnly } from "./statistics.ts";

/** Waits between checkpoint tries while a reader holds an older snapshot: about 1.6 s in all. */
const CHECKPOINT_WAITS_MS = [25, 50, 100, 200, 400, 800];

/** SQLite's side of the query-time port (src/storage/port.ts, docs/scaling.md §6). */
export const sqliteDialect: Dialect = {
  // The writer is already one transaction at a time (BEGIN IMMEDIATE, group commit).
  lockUntilCommit: async () => {},
  locksUntilCommit: async () => {},
  jsonArrayFrom: (query) => jsonArrayFrom(query) as never,
  filterOnly,
  contactsByIds(db, ids) {
    const list = sql<{ value: number }>`json_each(${ids})`.as("ids");
    return db.selectFrom(list).crossJoin("contacts").whereRef("contacts.id", "=", "ids.value") as never;
  },
  idList: (ids) => JSON.stringify(ids),
  // Claims are in the process's memory only (src/storage/claims.ts): no lease columns.
  leaseEnd: {},
  // SQLite's plans follow the driver's shape already (filterOnly).
  inListOrder: (db, read) => read(db),
  reclaimErased,
  runDirectly,
  // SQLite caches its compiled statements already (src/runtime/bun.ts).
  keepPrepared: () => undefined,
  isUniqueViolation: (e) => typeof e.message === "string" && e.message.includes("UNIQUE constraint failed"),
  // A file: never unreachable.
  isConnectionError: () => false,
};

/**
 * After an erase commits, takes what it freed out of the database's files (docs/security.md §7,
 * docs/security.md §7). Content is zeroed as it is freed (`secure_delete`, always on:
 * src/storage/sqlite/open.ts), but the write-ahead log still holds the pages as they were;
 * a TRUNCATE checkpoint writes the zeroed pages into the database file and empties the
 * log. It runs without the busy timeout, so the server's thread never blocks on another
 * process's read, and is tried again briefly while a reader (the server, a CLI,
 * Litestream) holds an older snapshot. False when a reader kept it from completing.
 */
async function reclaimErased(db: Kysely<Database>): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    if (await checkpointOnce(db)) return true;
    const wait = CHECKPOINT_WAITS_MS[attempt];
    if (wait === undefined) return false;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** One `wal_checkpoint(TRUNCATE)` with the busy timeout off on the connection, restored after. */
async function checkpointOnce(db: Kysely<Database>): Promise<boolean> {
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(conn);
    await sql`pragma busy_timeout = 0`.execute(conn);
    try {
      const result = await sql<{ busy: number }>`pragma wal_checkpoint(truncate)`.execute(conn);
      return result.rows[0]?.busy === 0;
    } finally {
      await sql.raw(`pragma busy_timeout = ${Number(rows[0]?.timeout ?? 5000)}`).execute(conn);
    }
  });
}
