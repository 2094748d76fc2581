import { sql, type Kysely, type Transaction } from "kysely";
import { setImmediate } from "node:timers";
import type { Database } from "./schema.ts";

export type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Job {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  /** Most requests sharing one transaction. */
  maxJobs?: number;
  /** A batch stops taking new requests after this long, so no answer waits much on others. */
  maxMs?: number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Group commit for write requests (docs/decisions.md): requests that arrive while one is
 * being written share its transaction, each in its own SAVEPOINT, and all are answered
 * after the one COMMIT. A request that fails rolls back to its savepoint only, so each is
 * still all-or-nothing; if the COMMIT itself fails, every request of the batch fails and
 * none was acknowledged. On SQLite a commit (WAL frames, and the checkpoints they lead to)
 * costs more than the rows it writes, so sharing it is most of the write throughput.
 */
export class GroupCommit {
  private readonly queue: Job[] = [];
  private draining = false;
  private readonly maxJobs: number;
  private readonly maxMs: number;
  /** Batches committed and the requests they held (/metrics: crm_write_batch*_total). */
  readonly stats = { batches: 0, jobs: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    options: GroupCommitOptions = {},
  ) {
    this.maxJobs = options.maxJobs ?? 32;
    this.maxMs = options.maxMs ?? 20;
  }

  /** Runs `work` in a savepoint of the current batch; settles once the batch has committed. */
  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as Job["resolve"], reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) await this.batch();
    } finally {
      this.draining = false;
    }
  }

  private async batch(): Promise<void> {
    const taken: Array<{ job: Job; ok: boolean; value: unknown }> = [];
    const started = performance.now();
    try {
      await this.db.transaction().execute(async (trx) => {
        while (taken.length < this.maxJobs && performance.now() - started < this.maxMs) {
          let job = this.queue.shift();
          if (!job) {
            // Requests already received may be one event-loop turn from here: let them in.
            await nextTurn();
            job = this.queue.shift();
            if (!job) break;
          }
          const entry = { job, ok: false, value: undefined as unknown };
          taken.push(entry);
          const savepoint = sql.raw(`request_${taken.length}`);
          await sql`savepoint ${savepoint}`.execute(trx);
          try {
            entry.value = await job.work(trx);
            entry.ok = true;
            await sql`release ${savepoint}`.execute(trx);
          } catch (error) {
            entry.value = error;
            // Fails when SQLite has already rolled the whole transaction back: the batch fails.
            await sql`rollback to ${savepoint}`.execute(trx);
            await sql`release ${savepoint}`.execute(trx);
          }
        }
      });
    } catch (error) {
      for (const entry of taken) entry.job.reject(entry.ok ? error : (entry.value ?? error));
      // No transaction could be begun (SQLITE_BUSY past busy_timeout while the CLI holds the
      // write lock): every waiting request would meet the same, so all fail now, not retry forever.
      if (taken.length === 0) for (const job of this.queue.splice(0)) job.reject(error);
      return;
    }
    this.stats.batches += 1;
    this.stats.jobs += taken.length;
    for (const entry of taken) (entry.ok ? entry.job.resolve : entry.job.reject)(entry.value);
  }
}
