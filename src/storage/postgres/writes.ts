import type { Kysely } from "kysely";
import { WriteQueueFull, type Owner, type QueueBounds, type Trx, type WriteQueue } from "../unit-of-work.ts";
import type { Database } from "../schema.ts";

/**
 * Write requests on PostgreSQL (docs/scaling.md §6): each its own transaction on a pooled
 * connection (CRM_DB_POOL_SIZE); the server takes row locks, so concurrent requests only
 * wait for those touching the same rows. Group commit stays a SQLite concern. The same
 * bounds as the group commit's queue (docs/operations.md §3.1): requests waiting or running in all
 * and per project, past which a request is refused at once (429) rather than queued
 * behind a tenant that floods writes; the service's own writes (owner null) never are.
 */
export class PooledWrites implements WriteQueue {
  private pending = 0;
  private readonly pendingBy = new Map<string, number>();
  readonly stats = { batches: 0, jobs: 0 };
  private readonly maxQueued: number;
  private readonly maxQueuedPerOwner: number;

  constructor(
    private readonly db: Kysely<Database>,
    options: QueueBounds = {},
  ) {
    this.maxQueued = options.maxQueued ?? 1024;
    this.maxQueuedPerOwner = options.maxQueuedPerOwner ?? 256;
  }

  async run<T>(work: (trx: Trx) => Promise<T>, owner: Owner = ""): Promise<T> {
    if (owner === null) return this.counted(work);
    const mine = this.pendingBy.get(owner) ?? 0;
    if (this.pending >= this.maxQueued || mine >= this.maxQueuedPerOwner) throw new WriteQueueFull();
    this.pending += 1;
    this.pendingBy.set(owner, mine + 1);
    try {
      return await this.counted(work);
    } finally {
      this.pending -= 1;
      const left = (this.pendingBy.get(owner) ?? 1) - 1;
      if (left <= 0) this.pendingBy.delete(owner);
      else this.pendingBy.set(owner, left);
    }
  }

  /** One transaction on a pooled connection, counted once committed. */
  private async counted<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    const value = await this.db.transaction().execute(work);
    this.stats.batches += 1;
    this.stats.jobs += 1;
    return value;
  }
}
