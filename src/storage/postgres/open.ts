import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Logger } from "../../lib/log.ts";
import type { Database } from "../schema.ts";
import { isConnectionError } from "../query.ts";
import { DialectWithWalks } from "./dialect.ts";
import { migratePostgres } from "./migrate.ts";
import { NamedStatementsClient } from "./named-statements.ts";

/** How long a starting node waits for an unreachable database (a server still starting, a failover) before giving up. */
const START_WAIT_MS = 30_000;

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Column types as the SQLite driver gives them: bigint (contacts.id, count(*)) and numeric
 * as JavaScript numbers, not strings. Every value we store fits in 2^53.
 */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

export interface OpenPostgres {
  db: Kysely<Database>;
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * Opens `poolSize` connections' worth of pools to `url` (docs/scaling.md §4, §6), applies
 * pending migrations under the start lock and returns Kysely over them: the main pool, and
 * from a pool of 4 up a fifth of the connections for list-order walks (`listOrderPoolSize`). A connection that breaks
 * is dropped by the pool and the next checkout opens a new one; an idle client's error
 * is logged, never thrown (it would end the process).
 */
export async function openPostgres(url: string, poolSize: number, log?: Logger): Promise<OpenPostgres> {
  const walks = listOrderPoolSize(poolSize);
  const lost = (error: Error) => log?.warn("database connection lost; the pool opens a new one", { error: String(error?.message ?? error) });
  const pool = newPool(url, poolSize - walks, { lost });
  try {
    await migrateWhenReachable(pool, log);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  if (walks === 0) {
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, pool, close: () => db.destroy() };
  }
  // The list-order walks' own connections (postgresDialect.inListOrder): bitmap scans off for
  // their whole session, set once as each opens, so a walk is one statement. The pool hands a
  // connection out only once its SET succeeded; one whose SET failed is ended, never used.
  // (Not a startup `options` parameter: PgBouncer refuses those by default.)
  const walkPool = newPool(url, walks, { lost, onConnect: async (client) => void (await client.query("SET enable_bitmapscan = off")) });
  const walkDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: walkPool }) });
  // At most one walk a connection (a walk's statements run one after another), counted as it
  // starts: a walk never waits for a list-order connection. Past that, it takes a main-pool
  // connection instead, with SET and RESET around it (dialect.ts).
  let walking = 0;
  const slots = {
    db: walkDb,
    take() {
      if (walking >= walks) return false;
      walking++;
      return true;
    },
    release: () => void walking--,
  };
  const db = new Kysely<Database>({ dialect: new DialectWithWalks({ pool }, slots) });
  // db.destroy() ends the pool.
  return { db, pool, close: async () => void (await Promise.all([db.destroy(), walkDb.destroy()])) };
}

/**
 * How many of a node's CRM_DB_POOL_SIZE connections serve list-order walks (docs/scaling.md
 * §4): a fifth, from a pool of 4 up; a smaller pool has none, and each walk turns bitmap scans
 * off and on around itself on a pooled connection (two more round trips).
 */
export function listOrderPoolSize(poolSize: number): number {
  return poolSize >= 4 ? Math.max(1, Math.round(poolSize / 5)) : 0;
}

interface PoolHooks {
  lost: (error: Error) => void;
  /** Run on each new connection before the pool hands it out; a rejection ends it (pg-pool's onConnect). */
  onConnect?: (client: pg.ClientBase) => Promise<void>;
}

function newPool(url: string, max: number, { lost, onConnect }: PoolHooks): pg.Pool {
  const pool = new pg.Pool({
    // Typed as returning void in @types/pg; pg-pool awaits the promise.
    onConnect: onConnect as ((client: pg.ClientBase) => void) | undefined,
    connectionString: url,
    // The statements built once run by name (named-statements.ts).
    Client: NamedStatementsClient,
    max,
    types,
    // A request waits at most this long for a connection before it fails (503), so an
    // unreachable database answers quickly instead of piling requests up.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: "crm",
  });
  // The pool listens for errors of idle connections only; one that breaks while checked
  // out (a query or transaction in progress) would emit 'error' with no listener and end
  // the process. Its query fails on its own; the connection is discarded on release.
  pool.on("connect", (client) => client.on("error", lost));
  pool.on("error", lost);
  return pool;
}

/** Migrates once the database answers: a node started before its database waits up to START_WAIT_MS, then fails with the cause. */
async function migrateWhenReachable(pool: pg.Pool, log?: Logger): Promise<void> {
  const deadline = performance.now() + START_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      await migratePostgres(pool);
      return;
    } catch (error) {
      if (!isConnectionError(error) || performance.now() > deadline) throw error;
      if (attempt === 1) log?.warn("waiting for the database", { error: String((error as Error).message ?? error) });
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }
}
