import type { Compilable, CompiledQuery, Kysely } from "kysely";
import type { SqliteHandle } from "../../runtime/types.ts";
import { isPostgres } from "../dialect.ts";
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

const SLOT = Symbol("slot");
type Slot = { [SLOT]: number };
const isSlot = (value: unknown): value is Slot => typeof value === "object" && value !== null && SLOT in value;

/**
 * A query built and compiled once, then run with new values: for the hot paths, where
 * Kysely's building and compiling cost more than SQLite running the statement. `build`
 * receives placeholders in place of the values; they must be used as plain values (not
 * spread into `in` lists), which is checked at compile time.
 */
export function preparedQuery<Args extends unknown[], Row>(
  arity: Args["length"],
  build: (db: Kysely<Database>, ...slots: never[]) => Compilable<Row>,
) {
  // Compiled once per backend: the SQL text differs between SQLite and PostgreSQL ($1 vs ?).
  const compiledFor = new Map<boolean, CompiledQuery<Row>>();
  return async (db: Db, ...args: Args): Promise<Row[]> => {
    const postgres = isPostgres(db);
    let compiled = compiledFor.get(postgres);
    if (!compiled) {
      const slots = Array.from({ length: arity }, (_, i) => ({ [SLOT]: i }) as Slot);
      compiled = build(db as Kysely<Database>, ...(slots as never[])).compile();
      const used = new Set(compiled.parameters.filter(isSlot).map((s) => s[SLOT]));
      if (used.size !== arity) throw new Error(`prepared query uses ${used.size} of ${arity} values`);
      compiledFor.set(postgres, compiled);
    }
    const parameters = compiled.parameters.map((p) => (isSlot(p) ? args[p[SLOT]] : p));
    const inBatch = db.isTransaction ? batches.get(db) : undefined;
    if (inBatch) return inBatch(compiled.sql, parameters, returnsRows(compiled)) as Row[];
    // A read outside any transaction runs at once: Kysely's executor (connection queue,
    // promises) costs more than SQLite takes for a point lookup (docs/performance.md).
    if (!db.isTransaction && compiled.query.kind === "SelectQueryNode") {
      const rows = handles.get(db as Kysely<Database>)?.readNow(compiled.sql, parameters);
      if (rows) return rows as Row[];
    }
    const result = await db.executeQuery<Row>({ ...compiled, parameters });
    return result.rows;
  };
}

/** Most rows in one compiled INSERT: more go in several, so at most this many shapes are compiled per table. */
const ROWS_PER_INSERT = 32;

/**
 * A multi-row INSERT of `columns` into `table`, compiled once per row count: the rows a
 * write makes together (a contact's search terms, its tags) go in one statement (32 rows
 * at most each, so odd counts cannot fill the statement cache).
 */
export function preparedInsert<T extends keyof Database & string>(table: T, columns: ReadonlyArray<keyof Database[T] & string>) {
  const byCount = new Map<number, (db: Db, ...values: unknown[]) => Promise<never[]>>();
  const insertFor = (count: number) => {
    let insert = byCount.get(count);
    if (!insert) {
      insert = preparedQuery<unknown[], never>(count * columns.length, (kysely, ...slots) =>
        kysely
          .insertInto(table)
          .values(Array.from({ length: count }, (_, r) => Object.fromEntries(columns.map((column, i) => [column, slots[r * columns.length + i]]))) as never),
      );
      byCount.set(count, insert);
    }
    return insert;
  };
  return async (db: Db, rows: unknown[][]): Promise<void> => {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + ROWS_PER_INSERT);
      await insertFor(chunk.length)(db, ...chunk.flat());
    }
  };
}
