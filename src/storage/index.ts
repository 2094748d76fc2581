import type { Kysely } from "kysely";
import { ConfigError, type Config } from "../config.ts";
import type { Logger } from "../lib/log.ts";
import type { SqliteHandle } from "../runtime/index.ts";
import { GroupCommit, type WriteQueue } from "./sqlite/group-commit.ts";
import { migrationsApplied } from "./sqlite/migrate.ts";
import { openDatabase } from "./sqlite/open.ts";
import { postgresMigrationsApplied } from "./postgres/migrate.ts";
import { openPostgres } from "./postgres/open.ts";
import { PooledWrites } from "./postgres/writes.ts";
import { openReader } from "./sqlite/reader.ts";
import type { Database } from "./schema.ts";

/** How long /readyz waits for the database before answering 503. */
const READY_TIMEOUT_MS = 2_000;

/**
 * The storage seam (decisions §13): the one place that opens the backend chosen by the
 * configuration. SQLite (`CRM_DB_PATH`, the embedded default) or PostgreSQL
 * (`CRM_DATABASE_URL`). The domains get a Kysely database and a write queue and never ask
 * which it is; the few statements that must differ live in src/storage/query.ts, the
 * migrations (db/, db/postgres/), the outbox claim (src/webhooks/lease.ts), the shared
 * rate-limit buckets (src/auth/shared-buckets.ts) and SQLite's statistics.
 */
export interface Storage {
  backend: "sqlite" | "postgres";
  db: Kysely<Database>;
  /** Where the dispatcher looks for due deliveries: SQLite's read-only second connection; the pool itself on PostgreSQL. */
  reader: Kysely<Database>;
  /** The SQLite file's handle (`crm backup`); null on PostgreSQL. */
  sqlite: SqliteHandle | null;
  /** Write requests' transactions: group commit on SQLite, one pooled transaction each on PostgreSQL. */
  newWriteQueue(): WriteQueue;
  /** Reachable and fully migrated (/readyz); false, never a throw, when the database is down. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

export async function openStorage(config: Config, options: { reader?: boolean; log?: Logger } = {}): Promise<Storage> {
  if (config.CRM_DATABASE_URL) {
    const { db, pool, close } = await openPostgres(config.CRM_DATABASE_URL, config.CRM_DB_POOL_SIZE, options.log).catch((error) => {
      if (error instanceof ConfigError) throw error; // a migration refusal says what it is
      throw new ConfigError(`cannot open the database at ${redacted(config.CRM_DATABASE_URL!)} (CRM_DATABASE_URL): ${String(error?.message ?? error).split("\n")[0]}`);
    });
    return {
      backend: "postgres",
      db,
      reader: db,
      sqlite: null,
      newWriteQueue: () => new PooledWrites(db),
      ready: () => withTimeout(postgresMigrationsApplied(pool), READY_TIMEOUT_MS),
      close,
    };
  }
  const database = await openDatabase(config.CRM_DB_PATH, config.CRM_SYNCHRONOUS);
  const reader = options.reader ? openReader(config.CRM_DB_PATH) : null;
  return {
    backend: "sqlite",
    db: database.db,
    reader: reader?.db ?? database.db,
    sqlite: database.raw,
    newWriteQueue: () => new GroupCommit(database.db),
    // The database answers on its own handle, never queued behind writes.
    ready: async () => {
      try {
        return migrationsApplied(database.raw);
      } catch {
        return false;
      }
    },
    close: async () => {
      await reader?.close();
      await database.close();
    },
  };
}

async function withTimeout(check: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([check.catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
