import { Cron } from "croner";
import type { KeyStore } from "../auth/keys.ts";
import type { RateLimiter } from "../auth/rate-limiter.ts";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { memoryKeeper } from "./memory.ts";
import type { StatisticsWatch } from "./statistics.ts";
import { applyRetention } from "./retention.ts";
import { backfillDuplicateKeys } from "../duplicates/backfill.ts";
import { runtime } from "../runtime/index.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { Kysely } from "kysely";

export type JobName = "flush-last-used" | "limiter-sweep" | "retention" | "statistics" | "statistics-watch" | "memory" | "duplicates-backfill";

/**
 * Periodic housekeeping (croner): last-used times, limiter memory, retention of events,
 * attempts and idempotency records, and planner statistics (the storage's: SQLite's PRAGMA
 * optimize, src/storage/sqlite/statistics.ts, a no-op unless a table has grown 25-fold or
 * was never analyzed; nothing on PostgreSQL), the tables that doubled since their
 * statistics every 5 s and right after bulk writes (src/jobs/statistics.ts), and the soft
 * memory target (src/jobs/memory.ts). The schedule runs on the wall
 * clock; what a job keeps or drops is judged by the service's clock (issue 11), and
 * `run` starts a job now, off its schedule.
 */
export function startJobs(deps: { db: Kysely<Database>; writes: UnitOfWork; keys: KeyStore; limiter: RateLimiter; log: Logger; clock: Clock; refreshStatistics(): Promise<void>; statistics: StatisticsWatch; changesRetentionDays?: number; eraseFromTrash?(projectId: string, contactNumber: number): Promise<void> }) {
  const tasks: Record<JobName, () => Promise<void> | void> = {
    "flush-last-used": () => deps.keys.flushLastUsed(),
    "limiter-sweep": () => deps.limiter.sweep(),
    retention: () =>
      applyRetention(deps.writes, deps.clock.now(), {
        changesRetentionDays: deps.changesRetentionDays,
        db: deps.db,
        eraseFromTrash: deps.eraseFromTrash,
      }),
    statistics: () => deps.refreshStatistics(),
    "statistics-watch": () => deps.statistics.check(),
    memory: memoryKeeper(runtime.collectGarbage),
    // Keys of contacts from before the upgrade to duplicates (docs/api.md §20.1): a chunk at a time until none is left.
    "duplicates-backfill": async () => {
      while (await backfillDuplicateKeys(deps.writes, () => new Date(deps.clock.now()).toISOString()));
    },
  };
  const guard = (name: JobName) => async () => {
    try {
      await tasks[name]();
    } catch (error) {
      deps.log.error("job failed", { job: name, error: String(error) });
    }
  };
  const jobs = [
    new Cron("*/5 * * * * *", { protect: true }, guard("flush-last-used")),
    new Cron("0 * * * * *", { protect: true }, guard("limiter-sweep")),
    new Cron("30 */10 * * * *", { protect: true }, guard("retention")),
    new Cron("0 5,15,25,35,45,55 * * * *", { protect: true }, guard("statistics")),
    new Cron("*/5 * * * * *", { protect: true }, guard("statistics-watch")),
    new Cron("* * * * * *", { protect: true }, guard("memory")),
    new Cron("*/10 * * * * *", { protect: true }, guard("duplicates-backfill")),
  ];
  return {
    /** Runs one job now; its failure is the caller's to see (no log line, no swallowing). */
    async run(name: JobName): Promise<void> {
      await tasks[name]();
    },
    async stop() {
      for (const job of jobs) job.stop();
      await deps.statistics.stop();
      await deps.keys.flushLastUsed();
    },
  };
}
