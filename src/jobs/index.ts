import { Cron } from "croner";
import type { KeyStore } from "../auth/keys.ts";
import type { RateLimiter } from "../auth/rate-limiter.ts";
import type { Database } from "../db/schema.ts";
import { deleteExpiredIdempotencyRecords } from "../idempotency/repository.ts";
import type { Logger } from "../lib/log.ts";
import type { Kysely } from "kysely";

/** Periodic housekeeping (croner): last-used times, limiter memory, idempotency retention. */
export function startJobs(deps: { db: Kysely<Database>; keys: KeyStore; limiter: RateLimiter; log: Logger }) {
  const guard = (name: string, run: () => Promise<void> | void) => async () => {
    try {
      await run();
    } catch (error) {
      deps.log.error("job failed", { job: name, error: String(error) });
    }
  };
  const jobs = [
    new Cron("*/5 * * * * *", { protect: true }, guard("flush-last-used", () => deps.keys.flushLastUsed())),
    new Cron("0 * * * * *", { protect: true }, guard("limiter-sweep", () => deps.limiter.sweep())),
    new Cron("0 */10 * * * *", { protect: true }, guard("idempotency-retention", () => deleteExpiredIdempotencyRecords(deps.db, Date.now()))),
  ];
  return {
    async stop() {
      for (const job of jobs) job.stop();
      await deps.keys.flushLastUsed();
    },
  };
}
