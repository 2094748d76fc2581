import { Cron } from "croner";
import type { KeyStore } from "../auth/keys.ts";
import type { RateLimiter } from "../auth/rate-limiter.ts";
import type { Database } from "../db/schema.ts";
import { applyRetention } from "./retention.ts";
import { refreshStatistics } from "../db/statistics.ts";
import type { Logger } from "../lib/log.ts";
import type { Kysely } from "kysely";

/**
 * Periodic housekeeping (croner): last-used times, limiter memory, retention of events,
 * attempts and idempotency records, and planner statistics (src/db/statistics.ts: a no-op
 * unless a table has grown 25-fold or was never analyzed).
 */
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
    new Cron("30 */10 * * * *", { protect: true }, guard("retention", () => applyRetention(deps.db))),
    new Cron("0 5,15,25,35,45,55 * * * *", { protect: true }, guard("statistics", () => refreshStatistics(deps.db))),
  ];
  return {
    async stop() {
      for (const job of jobs) job.stop();
      await deps.keys.flushLastUsed();
    },
  };
}
