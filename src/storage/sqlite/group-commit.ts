import { sql, type Kysely, type Transaction } from "kysely";
import { setImmediate } from "node:timers";
import { runsBatchDirectly } from "./direct.ts";
import type { Database } from "../schema.ts";

export type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Job {
  work: Work<unknown>;
  owner: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  /** Most requests sharing one transaction. */
  maxJobs?: number;
  /** A batch stops taking new requests after this long, so no answer waits much on others. */
  maxMs?: number;
  /** Most requests waiting in all; past it a request is refused at once (WriteQueueFull). */
  maxQueued?: number;
  /** Most requests of one owner (project) waiting, so one tenant cannot fill the queue. */
  maxQueuedPerOwner?: number;
}

/** How write requests get their transaction: group commit on SQLite, one pooled transaction each on PostgreSQL. */
export interface WriteQueue {
  run<T>(work: Work<T>, owner?: string): Promise<T>;
  /** Transactions committed and the requests they held (/metrics: crm_write_batch*_total). */
  readonly stats: { batches: number; jobs: number };
}

/** The write queue is full (in all, or for this owner): answered 429 with Retry-After. */
export class WriteQueueFull extends Error {}

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
   * The queue is bounded (decisions §16): in all, and per `owner`, so a tenant flooding
   * writes is refused before it can make everyone else wait.
   */
  run<T>(work: Work<T>, owner = ""): Promise<T> {
    const queued = this.queuedBy.get(owner) ?? 0;
    if (this.queue.length >= this.maxQueued || queued >= this.maxQueuedPerOwner) return Promise.reject(new WriteQueueFull());
    this.queuedBy.set(owner, queued + 1);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, owner, resolve: resolve as Job["resolve"], reject });
      if (!this.draining) void this.drain();
    });
  }

  /** The next waiting job, no longer counted as queued. */
  private take(): Job | undefined {
    const job = this.queue.shift();
    if (!job) return undefined;
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
        while (taken.length < this.maxJobs && performance.now() - started < this.maxMs) {
          let job = this.take();
          if (!job) {
            // Requests already received may be one event-loop turn from here: let them in.
            await nextTurn();
            job = this.take();
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
      if (taken.length === 0) for (let job = this.take(); job; job = this.take()) job.reject(error);
      return;
    }
    this.stats.batches += 1;
    this.stats.jobs += taken.length;
    for (const entry of taken) (entry.ok ? entry.job.resolve : entry.job.reject)(entry.value);
  }
}
