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

/** Kysely over a synchronous SQLite handle with a statement cache; used under Deno (node:sqlite). */
export function nodeSqliteDialect(database: SyncDatabase): Dialect {
  const cache = new Map<string, ReturnType<SyncDatabase["prepare"]>>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = database.prepare(sql)));
    return stmt;
  };
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const stmt = prepare(query.sql);
      const params = query.parameters.map((p) => (typeof p === "boolean" ? Number(p) : p));
      if (stmt.columns().length > 0) return { rows: stmt.all(...params) as R[] };
      const result = stmt.run(...params);
      return { rows: [], numAffectedRows: BigInt(result.changes), insertId: BigInt(result.lastInsertRowid) };
    },
    streamQuery() {
      throw new Error("streaming is not supported");
    },
  };
  // One connection, one user at a time (decisions §11: one writer connection).
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
