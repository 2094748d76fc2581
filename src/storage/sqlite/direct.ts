import type { CompiledQuery, Kysely } from "kysely";
import type { SqliteHandle } from "../../runtime/types.ts";
import type { Database, Db } from "../schema.ts";

type DirectHandle = Pick<SqliteHandle, "readNow" | "runInTransaction">;

/** The raw handle behind each opened database, for reads that need not queue (open.ts). */
const handles = new WeakMap<Kysely<Database>, DirectHandle>();

export function enableDirectReads(db: Kysely<Database>, handle: DirectHandle): void {
  handles.set(db, handle);
}

/** Transactions whose compiled statements run at once on the connection (see runsBatchDirectly). */
const batches = new WeakMap<object, NonNullable<SqliteHandle["runInTransaction"]>>();

/**
 * A group-commit batch (src/storage/sqlite/group-commit.ts) holds the SQLite connection alone from its
 * BEGIN to its COMMIT, and its requests run one after another: their compiled statements
 * can run on the connection at once, skipping Kysely's executor (connection queue,
 * promises, result copies: ~5 µs a statement, a dozen a create). Anyone else waits for the
 * connection through Kysely as before, so nothing outside the batch sees its rows early.
 */
export function runsBatchDirectly(trx: Db, root: Kysely<Database>): void {
  const run = handles.get(root)?.runInTransaction;
  if (run) batches.set(trx, run);
}

/** Whether a statement answers rows: a SELECT, or a write with RETURNING. */
const returnsRows = (compiled: CompiledQuery): boolean =>
  compiled.query.kind === "SelectQueryNode" || (compiled.query as { returning?: unknown }).returning !== undefined;

/**
 * A prepared query's statement (src/storage/prepared.ts) run on the connection at once:
 * inside a group-commit batch, or a read outside any transaction, where Kysely's executor
 * (connection queue, promises) costs more than SQLite takes for a point lookup
 * (docs/performance.md). Undefined when it must go through Kysely.
 */
export function runDirectly(db: Db, compiled: CompiledQuery, parameters: readonly unknown[]): unknown[] | undefined {
  const inBatch = db.isTransaction ? batches.get(db) : undefined;
  if (inBatch) return inBatch(compiled.sql, parameters, returnsRows(compiled));
  if (db.isTransaction || compiled.query.kind !== "SelectQueryNode") return undefined;
  return handles.get(db as Kysely<Database>)?.readNow(compiled.sql, parameters) ?? undefined;
}
