import { ConfigError, type Config } from "../../config.ts";
import type { Logger } from "../../lib/log.ts";
import type { Storage } from "../port.ts";
import { postgresBuckets } from "./buckets.ts";
import { leasedClaims } from "./claims.ts";
import { postgresMigrationsApplied } from "./migrate.ts";
import { openPostgres } from "./open.ts";
import { refreshGrownStatistics } from "./statistics.ts";
import { PooledWrites } from "./writes.ts";

/** How long /readyz waits for the database before answering 503. */
const READY_TIMEOUT_MS = 2_000;

const BACKUP_REFUSAL =
  "crm backup copies the SQLite file; this server uses PostgreSQL (CRM_DATABASE_URL): back it up with pg_dump (pg_dump --format=custom --file=crm.dump URL) or the server's point-in-time recovery (docs/scaling.md)";

/**
 * The storage port on PostgreSQL (`CRM_DATABASE_URL`; src/storage/port.ts, docs/scaling.md §6):
 * several nodes share the database, so claims are leases in it and a key's rate-limit
 * buckets live in it; each write request has its own pooled transaction.
 */
export async function openPostgresStorage(url: string, config: Config, options: { log?: Logger }): Promise<Storage> {
  const { db, pool, close } = await openPostgres(url, config.CRM_DB_POOL_SIZE, options.log).catch((error) => {
    if (error instanceof ConfigError) throw error; // a migration refusal says what it is
    throw new ConfigError(`cannot open the database at ${redacted(url)} (CRM_DATABASE_URL): ${String(error?.message ?? error).split("\n")[0]}`);
  });
  return {
    db,
    reader: db,
    newWriteQueue: () => new PooledWrites(db),
    claims: leasedClaims(db),
    sharedBuckets: postgresBuckets(db),
    // Autovacuum keeps PostgreSQL's statistics; bulk loads are analyzed at once (statistics.ts).
    refreshStatistics: async () => {},
    refreshGrownStatistics: () => refreshGrownStatistics(db),
    backup: {
      refusal: BACKUP_REFUSAL,
      copyInto: () => {
        throw new Error(BACKUP_REFUSAL);
      },
    },
    ready: () => withTimeout(postgresMigrationsApplied(pool), READY_TIMEOUT_MS),
    close,
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
