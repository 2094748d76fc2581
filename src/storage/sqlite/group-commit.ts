import type { Kysely } from "kysely";
import { setImmediate } from "node:timers";
import { runsBatchDirectly } from "./direct.ts";
import type { Database } from "../schema.ts";
import { inSavepoint, WriteQueueFull, type Owner, type QueueBounds, type RunOptions, type Trx, type WriteQueue } from "../unit-of-work.ts";

export { WriteQueueFull, type WriteQueue };

interface Job {
  work: (trx: Trx) => Promise<unknown>;
  owner: Owner;
  /** RunOptions.alone: the batch's only job, run in the transaction itself, no savepoint around it. */
  alone: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions extends QueueBounds {
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
export class GroupCommit implements WriteQueue {
  private readonly queue: Job[] = [];
  private readonly queuedBy = new Map<string, number>();
  private draining = false;
  private readonly maxJobs: number;
  private readonly maxMs: number;
  private readonly maxQueued: number;
  private readonly maxQueuedPerOwner: number;
  /** Batches committed and the requests they held (/metrics: crm_write_batch*_total). */
  readonly stats = { batches: 0, jobs: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    options: GroupCommitOptions = {},
  ) {
    this.maxJobs = options.maxJobs ?? 32;
    this.maxMs = options.maxMs ?? 20;
    this.maxQueued = options.maxQueued ?? 1024;
    this.maxQueuedPerOwner = options.maxQueuedPerOwner ?? 256;
  }

  /**
   * Runs `work` in a savepoint of the current batch; settles once the batch has committed.
   * The queue is bounded (docs/operations.md §3.1): in all, and per `owner`, so a tenant flooding
   * writes is refused before it can make everyone else wait; the service's own (owner
   * null) never are.
   */
  run<T>(work: (trx: Trx) => Promise<T>, owner: Owner = "", options: RunOptions = {}): Promise<T> {
    if (owner !== null) {
      const queued = this.queuedBy.get(owner) ?? 0;
      if (this.queue.length >= this.maxQueued || queued >= this.maxQueuedPerOwner) return Promise.reject(new WriteQueueFull());
      this.queuedBy.set(owner, queued + 1);
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, owner, alone: options.alone === true, resolve: resolve as Job["resolve"], reject });
      if (!this.draining) void this.drain();
    });
  }

  /** The next waiting job, no longer counted as queued. */
  private take(): Job | undefined {
    const job = this.queue.shift();
    if (!job || job.owner === null) return job;
    const left = (this.queuedBy.get(job.owner) ?? 1) - 1;
    if (left <= 0) this.queuedBy.delete(job.owner);
    else this.queuedBy.set(job.owner, left);
    return job;
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
        runsBatchDirectly(trx, this.db);
        // The first request is always taken: a BEGIN slower than maxMs (a busy wait, a slow
        // machine) would otherwise commit an empty batch and start the next one the same way.
        while (taken.length === 0 || (taken.length < this.maxJobs && performance.now() - started < this.maxMs)) {
          if (!this.queue[0]) await nextTurn(); // Requests already received may be one event-loop turn from here: let them in.
          // A job that wants the transaction alone waits for the next one, or has this one.
          if (!this.queue[0] || (this.queue[0].alone && taken.length > 0)) break;
          const job = this.take()!;
          const entry = { job, ok: false, value: undefined as unknown };
          taken.push(entry);
          if (job.alone) {
            // Its failure rolls the transaction back, which holds nothing else.
            [entry.ok, entry.value] = [true, await job.work(trx)];
            break;
          }
          // A ROLLBACK TO that fails (SQLite rolled the whole transaction back) fails the batch.
          const done = await inSavepoint(trx, `request_${taken.length}`, () => entry.job.work(trx));
          [entry.ok, entry.value] = done.ok ? [true, done.value] : [false, done.error];
        }
      });
    } catch (error) {
      for (const entry of taken) entry.job.reject(entry.ok ? error : (entry.value ?? error));
      // No transaction could be begun (SQLITE_BUSY past busy_timeout while the CLI holds the
      // write lock): every waiting request would meet the same, so all fail now, not retry forever.
      if (taken.length === 0) for (let job = this.take(); job; job = this.take()) job.reject(error);
      return;
    }
    this.stats.batches += 1;
    this.stats.jobs += taken.length;
    for (const entry of taken) (entry.ok ? entry.job.resolve : entry.job.reject)(entry.value);
  }
}
