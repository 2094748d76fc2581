import { PostgresAdapter, sql, type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder } from "kysely";
import { jsonArrayFrom as postgresJsonArray } from "kysely/helpers/postgres";
import { jsonArrayFrom as sqliteJsonArray } from "kysely/helpers/sqlite";
import type { Database, Db } from "./schema.ts";

/**
 * The few things that differ between the backends at query time (decisions §13), in one
 * place so the domains never ask which database they run on. Everything else in the
 * domains is plain Kysely that compiles for both.
 */

/** True on PostgreSQL. Kysely keeps the adapter on the executor; a transaction shares its database's. */
export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Serialises work on `name` across every node until the transaction ends: a PostgreSQL
 * transaction-scoped advisory lock. On SQLite the writer is already one transaction at
 * a time (BEGIN IMMEDIATE, group commit), so there is nothing to take.
 */
export async function lockUntilCommit(trx: Db, name: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
}

/** A unique constraint refused the row (SQLite's UNIQUE constraint message, PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  return e.code === "23505" || (typeof e.message === "string" && e.message.includes("UNIQUE constraint failed"));
}

/**
 * The database could not be reached or dropped the connection (PostgreSQL only: SQLite
 * is a file). The request is answered 500 ERR_INTERNAL with Retry-After: 1 (decisions §8's codes are closed) and the next one gets a fresh connection from
 * the pool (decisions §13: a lost connection is retried, never fatal).
 */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  const code = typeof e.code === "string" ? e.code : "";
  if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"].includes(code)) {
    return true;
  }
  const message = typeof e.message === "string" ? e.message : "";
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message);
}

/**
 * The rows of `query` as one JSON array column (json_agg on PostgreSQL, json_group_array
 * on SQLite), so a row and its few children come back in one statement. Read it with
 * `jsonColumn`: SQLite gives the text, PostgreSQL the parsed value.
 */
export function jsonArrayFrom<O>(db: Db, query: SelectQueryBuilder<any, any, O> & Expression<O>): RawBuilder<O[]> {
  return (isPostgres(db) ? postgresJsonArray(query) : sqliteJsonArray(query)) as RawBuilder<O[]>;
}

export function jsonColumn<T>(value: T | string): T {
  return typeof value === "string" ? (JSON.parse(value) as T) : value;
}

/** Waits between checkpoint tries while a reader holds an older snapshot: about 1.6 s in all. */
const CHECKPOINT_WAITS_MS = [25, 50, 100, 200, 400, 800];

/**
 * After an erase commits, takes what it freed out of the database's files (decisions §25,
 * docs/security.md §7). SQLite: content is zeroed as it is freed (`secure_delete`, always on:
 * src/storage/sqlite/open.ts), but the write-ahead log still holds the pages as they were; a TRUNCATE
 * checkpoint writes the zeroed pages into the database file and empties the log. It runs
 * without the busy timeout, so the server's thread never blocks on another process's read,
 * and is tried again briefly while a reader (the server, a CLI, Litestream) holds an older
 * snapshot. PostgreSQL: `VACUUM` of `tables` on a pooled connection (it cannot run in a
 * transaction), index entries included, so dead row versions give up their space.
 * True when it completed; false when a reader kept the checkpoint from completing.
 */
export async function reclaimErased(db: Kysely<Database>, tables: readonly (keyof Database)[]): Promise<boolean> {
  if (db.isTransaction) throw new Error("reclaimErased runs after the erase commits, outside its transaction");
  if (isPostgres(db)) {
    await sql`vacuum (index_cleanup on) ${sql.join(tables.map((table) => sql.table(table)))}`.execute(db);
    return true;
  }
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
