import { CompiledQuery, type DatabaseConnection, type Dialect, type Driver } from "kysely";

/**
 * Wraps a SQLite dialect so transactions start with `BEGIN IMMEDIATE` (docs/operations.md §3): the
 * write lock is taken up front, so a transaction never fails half-way on SQLITE_BUSY when
 * the CLI writes to the same file.
 */
export function immediateTransactions(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver(): Driver {
      const driver = dialect.createDriver();
      return {
        init: () => driver.init(),
        acquireConnection: () => driver.acquireConnection(),
        releaseConnection: (c) => driver.releaseConnection(c),
        destroy: () => driver.destroy(),
        commitTransaction: (c) => driver.commitTransaction(c),
        rollbackTransaction: (c) => driver.rollbackTransaction(c),
        beginTransaction: async (connection: DatabaseConnection) => {
          await connection.executeQuery(CompiledQuery.raw("begin immediate"));
        },
      };
    },
  };
}
