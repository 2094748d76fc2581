import type { Compilable, CompiledQuery, Kysely } from "kysely";
import type { Dialect } from "./port.ts";
import { dialectOf } from "./query.ts";
import type { Database, Db } from "./schema.ts";

const SLOT = Symbol("slot");
type Slot = { [SLOT]: number };
const isSlot = (value: unknown): value is Slot => typeof value === "object" && value !== null && SLOT in value;

/**
 * A query built and compiled once, then run with new values: for the hot paths, where
 * Kysely's building and compiling cost more than SQLite running the statement. `build`
 * receives placeholders in place of the values; they must be used as plain values (not
 * spread into `in` lists), which is checked at compile time. The backend may run the
 * statement on its connection at once (`Dialect.runDirectly`: SQLite inside a group-commit
 * batch, or a read outside any transaction); otherwise it goes through Kysely.
 */
export function preparedQuery<Args extends unknown[], Row>(
  arity: Args["length"],
  build: (db: Kysely<Database>, ...slots: never[]) => Compilable<Row>,
) {
  // Compiled once per backend: the SQL text differs between SQLite and PostgreSQL ($1 vs ?).
  const compiledFor = new Map<Dialect, CompiledQuery<Row>>();
  return async (db: Db, ...args: Args): Promise<Row[]> => {
    const dialect = dialectOf(db);
    let compiled = compiledFor.get(dialect);
    if (!compiled) {
      const slots = Array.from({ length: arity }, (_, i) => ({ [SLOT]: i }) as Slot);
      compiled = build(db as Kysely<Database>, ...(slots as never[])).compile();
      const used = new Set(compiled.parameters.filter(isSlot).map((s) => s[SLOT]));
      if (used.size !== arity) throw new Error(`prepared query uses ${used.size} of ${arity} values`);
      compiledFor.set(dialect, compiled);
      dialect.keepPrepared(compiled.sql);
    }
    const parameters = compiled.parameters.map((p) => (isSlot(p) ? args[p[SLOT]] : p));
    const direct = dialect.runDirectly(db, compiled, parameters);
    if (direct) return direct as Row[];
    const result = await db.executeQuery<Row>({ ...compiled, parameters });
    return result.rows;
  };
}

/** Most rows in one compiled INSERT of a few rows: up to this many, one statement of the exact count. */
const ROWS_PER_INSERT = 32;

/**
 * A multi-row INSERT of `columns` into `table`, compiled once per row count: the rows a
 * write makes together (a contact's search terms, its tags) go in one statement (32 rows
 * at most each, so odd counts cannot fill the statement cache). With `maxRows` above 32
 * (a batch's rows, docs/api.md §18.4) more go in one statement, in chunks of a power of
 * two, so a few shapes serve any count. `returning`: those columns of every row inserted.
 */
export function preparedInsert<T extends keyof Database & string, R = never>(
  table: T,
  columns: ReadonlyArray<keyof Database[T] & string>,
  options: { maxRows?: number; returning?: ReadonlyArray<keyof Database[T] & string> } = {},
) {
  const byCount = new Map<number, (db: Db, ...values: unknown[]) => Promise<R[]>>();
  const insertFor = (count: number) => {
    let insert = byCount.get(count);
    if (!insert) {
      insert = preparedQuery<unknown[], R>(count * columns.length, (kysely, ...slots) => {
        const query = kysely
          .insertInto(table)
          .values(Array.from({ length: count }, (_, r) => Object.fromEntries(columns.map((column, i) => [column, slots[r * columns.length + i]]))) as never);
        return (options.returning ? query.returning(options.returning as never) : query) as never;
      });
      byCount.set(count, insert);
    }
    return insert;
  };
  const maxRows = Math.max(ROWS_PER_INSERT, options.maxRows ?? ROWS_PER_INSERT);
  return async (db: Db, rows: unknown[][]): Promise<R[]> => {
    const out: R[] = [];
    for (let i = 0; i < rows.length; ) {
      const left = rows.length - i;
      const count = left <= ROWS_PER_INSERT ? left : 2 ** Math.floor(Math.log2(Math.min(left, maxRows)));
      out.push(...(await insertFor(count)(db, ...rows.slice(i, i + count).flat())));
      i += count;
    }
    return out;
  };
}
