import { PostgresAdapter, PostgresDialect, sql, type DialectAdapter, type Kysely, type RawBuilder } from "kysely";
import { jsonArrayFrom } from "kysely/helpers/postgres";
import type { Dialect } from "../port.ts";
import type { Database, Db } from "../schema.ts";
import { nameStatement } from "./named-statements.ts";

/** Driver and server codes of a connection that could not be made or was lost. */
const CONNECTION_CODES = ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"];

/**
 * Serialises work on `name` across every node until the transaction ends: a
 * transaction-scoped advisory lock on the name's hash. The one advisory lock of the
 * backend: the bootstrap, the setup link and the outbox claim (claims.ts) take it.
 */
export async function advisoryLockUntilCommit(trx: Db, name: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
}

/** advisoryLockUntilCommit for several names in one statement, taken in the order given (unnest yields the array in order). */
export async function advisoryLocksUntilCommit(trx: Db, names: string[]): Promise<void> {
  if (names.length === 1) return advisoryLockUntilCommit(trx, names[0]!);
  await sql`select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${names}::text[]) as k`.execute(trx);
}

/**
 * `read` on one connection with bitmap scans off, turned back on after, whatever happens
 * (Dialect.inListOrder): in a transaction, or where the node has no list-order connections.
 */
async function withoutBitmapScans<T>(conn: Db, read: (db: Db) => Promise<T>): Promise<T> {
  await sql`set enable_bitmapscan = off`.execute(conn);
  try {
    return await read(conn);
  } finally {
    await sql`reset enable_bitmapscan`.execute(conn);
  }
}

/** A node's list-order connections (open.ts): their Kysely, and a slot per connection that a walk takes while it runs. */
export interface Walks {
  db: Kysely<Database>;
  /** Takes a slot when one is free (false: every list-order connection has its walk). */
  take(): boolean;
  release(): void;
}

/** PostgreSQL's adapter, carrying the node's list-order connections (`walksOf`). */
class AdapterWithWalks extends PostgresAdapter {
  constructor(readonly walks: Walks) {
    super();
  }
}

export class DialectWithWalks extends PostgresDialect {
  constructor(
    config: ConstructorParameters<typeof PostgresDialect>[0],
    private readonly walks: Walks,
  ) {
    super(config);
  }
  override createAdapter(): DialectAdapter {
    return new AdapterWithWalks(this.walks);
  }
}

/** The list-order connections of the database `db` was opened on (open.ts), if it has them. */
function walksOf(db: Db): Walks | undefined {
  const adapter = db.getExecutor().adapter;
  return adapter instanceof AdapterWithWalks ? adapter.walks : undefined;
}

const plainReference = <T>(ref: string): RawBuilder<T> => sql<T>`${sql.ref(ref)}`;

/** PostgreSQL's side of the query-time port (src/storage/port.ts, docs/scaling.md §6). */
export const postgresDialect: Dialect = {
  lockUntilCommit: advisoryLockUntilCommit,
  locksUntilCommit: advisoryLocksUntilCommit,
  jsonArrayFrom: (query) => jsonArrayFrom(query) as never,
  // No unary `+` for text here, and autovacuum keeps the statistics.
  filterOnly: plainReference,
  // One array parameter: PostgreSQL plans `= ANY` as primary-key lookups whatever its
  // statistics say (a database filled through the API may not be analyzed yet).
  contactsByIds: (db, ids) => db.selectFrom("contacts").where(sql<boolean>`contacts.id = ANY(${ids}::bigint[])`),
  idList: (ids) => ids,
  // The node's lease ends with its attempt recorded, so a retry is due at its own time (claims.ts).
  leaseEnd: { lease_until: null, lease_owner: null },
  // Outside a transaction, on the node's list-order connections (bitmap scans off for their
  // session, open.ts): the walk is its own statement, no SET and RESET around it. When each has
  // its walk, on a main-pool connection with SET and RESET: walks never queue on a fifth of the
  // pool while the rest is idle (docs/scaling.md §4). A caller holding a connection pinned by
  // `db.connection()` must not call this: the walk would run on another connection (none does).
  inListOrder: async (db, read) => {
    if (db.isTransaction) return withoutBitmapScans(db, read);
    const walks = walksOf(db);
    if (!walks?.take()) return db.connection().execute((conn) => withoutBitmapScans(conn, read));
    try {
      return await read(walks.db);
    } finally {
      walks.release();
    }
  },
  /**
   * `VACUUM` of `tables` on a pooled connection (it cannot run in a transaction), index
   * entries included, so dead row versions give up their space (docs/security.md §7).
   */
  async reclaimErased(db, tables) {
    await sql`vacuum (index_cleanup on) ${sql.join(tables.map((table) => sql.table(table)))}`.execute(db);
    return true;
  },
  runDirectly: () => undefined,
  keepPrepared: nameStatement,
  isUniqueViolation: (e) => e.code === "23505",
  /**
   * The request is answered 500 ERR_INTERNAL with Retry-After: 1 (docs/api.md §4's codes are
   * closed) and the next one gets a fresh connection from the pool (docs/scaling.md §6: a lost
   * connection is retried, never fatal).
   */
  isConnectionError(e) {
    if (typeof e.code === "string" && CONNECTION_CODES.includes(e.code)) return true;
    const message = typeof e.message === "string" ? e.message : "";
    return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message);
  },
};
