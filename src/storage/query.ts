import { PostgresAdapter, type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder } from "kysely";
import type { Dialect, FilterOnly } from "./port.ts";
import { postgresDialect } from "./postgres/dialect.ts";
import type { Database, Db } from "./schema.ts";
import { sqliteDialect } from "./sqlite/dialect.ts";

/**
 * The query-time half of the storage port (src/storage/port.ts, docs/scaling.md §6) as plain
 * functions of `db | trx`, for the domains: each asks the backend the executor runs on.
 * Everything else in the domains is plain Kysely that compiles for both.
 */

/**
 * The backend of `db`: the one place a backend is recognised. Kysely keeps the adapter on
 * the executor, and a transaction shares its database's.
 */
export function dialectOf(db: Db): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgresDialect : sqliteDialect;
}

/** Both backends, for what is asked of an error rather than of an executor. */
const dialects: readonly Dialect[] = [sqliteDialect, postgresDialect];

/** Serialises work on `name` across every node until the transaction ends (`Dialect.lockUntilCommit`). */
export function lockUntilCommit(trx: Db, name: string): Promise<void> {
  return dialectOf(trx).lockUntilCommit(trx, name);
}

/** lockUntilCommit of several names, in the order given: sort them, so writers sharing some never wait in a cycle. */
export function locksUntilCommit(trx: Db, names: string[]): Promise<void> {
  return names.length === 0 ? Promise.resolve() : dialectOf(trx).locksUntilCommit(trx, names);
}

/** A unique constraint refused the row (SQLite's UNIQUE constraint message, PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return !!e && dialects.some((d) => d.isUniqueViolation(e));
}

/**
 * The database could not be reached or dropped the connection (PostgreSQL only: SQLite
 * is a file). The request is answered 500 ERR_INTERNAL with Retry-After: 1 (docs/api.md §4's codes are closed) and the next one gets a fresh connection from
 * the pool (docs/scaling.md §6: a lost connection is retried, never fatal).
 */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return !!e && dialects.some((d) => d.isConnectionError(e));
}

/**
 * The rows of `query` as one JSON array column (json_agg on PostgreSQL, json_group_array
 * on SQLite), so a row and its few children come back in one statement. Read it with
 * `jsonColumn`: SQLite gives the text, PostgreSQL the parsed value.
 */
export function jsonArrayFrom<O>(db: Db, query: SelectQueryBuilder<any, any, O> & Expression<O>): RawBuilder<O[]> {
  return dialectOf(db).jsonArrayFrom(query);
}

export function jsonColumn<T>(value: T | string): T {
  return typeof value === "string" ? (JSON.parse(value) as T) : value;
}

/** `ref` as a filter the planner never picks an index for, on the backend of `db` (`Dialect.filterOnly`). */
export function filterOnlyIn(db: Db): FilterOnly {
  return dialectOf(db).filterOnly;
}

/** `contacts` limited to the rows whose id is in `ids` (as `idList` encodes them), each found by its primary key (`Dialect.contactsByIds`). */
export function contactsByIds(db: Db, ids: unknown): SelectQueryBuilder<Database, "contacts", {}> {
  return dialectOf(db).contactsByIds(db, ids);
}

/** The ids as the one value `contactsByIds` takes on the backend of `db` (`Dialect.idList`). */
export function idList(db: Db, ids: number[]): unknown {
  return dialectOf(db).idList(ids);
}

/** `read`, whose statements walk an index in list order to a LIMIT, planned as that walk (`Dialect.inListOrder`). */
export function inListOrder<T>(db: Db, read: (db: Db) => Promise<T>): Promise<T> {
  return dialectOf(db).inListOrder(db, read);
}

/** The columns that end this node's claim on a delivery when its attempt is recorded (`Dialect.leaseEnd`). */
export function leaseEnd(trx: Db): Dialect["leaseEnd"] {
  return dialectOf(trx).leaseEnd;
}

/**
 * After an erase commits, takes what it freed out of the database's files (docs/security.md §7,
 * docs/security.md §7): SQLite checkpoints its write-ahead log, PostgreSQL vacuums
 * `tables` (`Dialect.reclaimErased`). True when it completed; false when a reader kept the
 * checkpoint from completing.
 */
export async function reclaimErased(db: Kysely<Database>, tables: readonly (keyof Database)[]): Promise<boolean> {
  if (db.isTransaction) throw new Error("reclaimErased runs after the erase commits, outside its transaction");
  return dialectOf(db).reclaimErased(db, tables);
}
