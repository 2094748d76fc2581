import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from "kysely";

/** The part of `node:sqlite`'s DatabaseSync we use. */
export interface SyncDatabase {
  prepare(sql: string): {
    all(...params: unknown[]): unknown[];
    run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
    columns(): unknown[];
  };
  exec(sql: string): void;
  close(): void;
}

/**
 * node:sqlite binds only null, numbers, bigints, strings and Uint8Arrays (Deno 2.9 throws
 * "cannot be bound" otherwise); bun:sqlite also takes booleans and undefined, so map those
 * the way Bun does: true/false → 1/0, undefined → NULL.
 */
export function bindable(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  return value === undefined ? null : value;
}

const STATEMENT_CACHE_SIZE = 500;

/** Kysely over a synchronous SQLite handle with a statement cache; used under Deno (node:sqlite). */
export function nodeSqliteDialect(database: SyncDatabase): Dialect {
  const cache = new Map<string, ReturnType<SyncDatabase["prepare"]>>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (stmt) return stmt;
    // Bounded: `in (?, ?, …)` lists make new SQL texts; drop the oldest (Map keeps insertion order).
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(sql, (stmt = database.prepare(sql)));
    return stmt;
  };
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const stmt = prepare(query.sql);
      const params = query.parameters.map(bindable);
      if (stmt.columns().length > 0) return { rows: stmt.all(...params) as R[] };
      const result = stmt.run(...params);
      return { rows: [], numAffectedRows: BigInt(result.changes), insertId: BigInt(result.lastInsertRowid) };
    },
    streamQuery() {
      throw new Error("streaming is not supported");
    },
  };
  // One connection, one user at a time (docs/operations.md §3: one writer connection).
  let queue: Promise<void> = Promise.resolve();
  let release: (() => void) | undefined;
  const driver: Driver = {
    async init() {},
    async acquireConnection() {
      const previous = queue;
      let done!: () => void;
      queue = new Promise<void>((resolve) => (done = resolve));
      await previous;
      release = done;
      return connection;
    },
    async releaseConnection() {
      release?.();
    },
    beginTransaction: async (c) => void (await c.executeQuery(CompiledQuery.raw("begin immediate"))),
    commitTransaction: async (c) => void (await c.executeQuery(CompiledQuery.raw("commit"))),
    rollbackTransaction: async (c) => void (await c.executeQuery(CompiledQuery.raw("rollback"))),
    async destroy() {
      database.close();
    },
  };
  return {
    createDriver: () => driver,
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}
