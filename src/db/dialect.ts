import { PostgresAdapter, sql, type Expression, type RawBuilder, type SelectQueryBuilder } from "kysely";
import { jsonArrayFrom as postgresJsonArray } from "kysely/helpers/postgres";
import { jsonArrayFrom as sqliteJsonArray } from "kysely/helpers/sqlite";
import type { Db } from "./schema.ts";

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
