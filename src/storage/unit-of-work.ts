import { AsyncLocalStorage } from "node:async_hooks";
import { sql, type Kysely, type Transaction } from "kysely";
import type { Logger } from "../lib/log.ts";
import type { Database, Db } from "./schema.ts";
import { dialectOf } from "./query.ts";
import { currentActing } from "../changes/actor.ts";
import { writeChanges, type StagedChange } from "../changes/record.ts";

/** A unit's transaction: its own, or its savepoint of a batch it shares (group commit). */
export type Trx = Transaction<Database>;

/**
 * What a committed unit tells the rest of the service, by name; the service says who
 * listens (server.ts). "deliveries-due": webhook deliveries were queued or became due
 * again (src/events/outbox.ts), so the dispatcher is woken at once rather than at its
 * next poll (docs/webhooks.md §2).
 */
export type CommitSignal = "deliveries-due";

/** Something to do once a unit's writes are committed, outside the database: a function, or a signal to the service's listeners. */
export type CommitHook = (() => void) | CommitSignal;

/** What a unit's work gets besides its transaction. */
export interface Unit {
  /** Runs `hook` once after this unit's COMMIT; never when the unit (or the batch it shares) rolls back. */
  afterCommit(hook: CommitHook): void;
  /** Keeps `change` to be written at the end of the unit's work, in its transaction (src/changes/record.ts); dropped with a savepoint rolled back. */
  stageChange(change: StagedChange): void;
}

export type Work<T> = (trx: Trx, unit: Unit) => Promise<T>;

/**
 * Who a unit writes for, for the write queue's bounds (docs/operations.md §3.1): a project id (an
 * API request, a console action, an import), or null for the service's own writes (the
 * dispatcher's outcomes, the jobs, sign-in counting, the CLI), which are never refused.
 */
export type Owner = string | null;

/** How units get their transaction: group commit on SQLite (src/storage/sqlite/group-commit.ts), one pooled transaction each on PostgreSQL (src/storage/postgres/writes.ts). */
export interface WriteQueue {
  /** Runs `work` in a transaction (or a savepoint of one) of its own; settles once that has committed or rolled back. */
  run<T>(work: (trx: Trx) => Promise<T>, owner: Owner, options?: RunOptions): Promise<T>;
  /** Transactions committed and the units they held (/metrics: crm_write_batch*_total). */
  readonly stats: { batches: number; jobs: number };
}

/** How a unit wants its transaction. */
export interface RunOptions {
  /**
   * A transaction of its own, shared with no other unit: for a unit that opens savepoints of
   * its own by the hundred (a batch's items, docs/api.md §18.4). On SQLite a savepoint nested
   * in another keeps every page it touches in the outer one's journal, so a batch of 1,000
   * items inside a group commit's savepoint costs several times the same batch alone.
   */
  alone?: boolean;
}

/** The bounds of a write queue (docs/operations.md §3.1). */
export interface QueueBounds {
  /** Most units waiting in all; past it a unit is refused at once (WriteQueueFull). */
  maxQueued?: number;
  /** Most units of one owner (project) waiting, so one tenant cannot fill the queue. */
  maxQueuedPerOwner?: number;
}

/** The write queue is full (in all, or for this owner): answered 429 with Retry-After. */
export class WriteQueueFull extends Error {}

/** The hooks and staged changes of the unit (or of the savepoint inside it) whose work is running now. */
class Hooks implements Unit {
  private hooks: Set<CommitHook> | null = new Set();
  staged: StagedChange[] = [];

  afterCommit(hook: CommitHook): void {
    this.hooks?.add(hook);
  }

  stageChange(change: StagedChange): void {
    this.staged.push(change);
  }

  /** The staged changes, taken: the unit's end writes them. */
  takeStaged(): StagedChange[] {
    const staged = this.staged;
    this.staged = [];
    return staged;
  }

  /** Ends the scope: its hooks, which it takes no more. */
  close(): CommitHook[] {
    const hooks = [...(this.hooks ?? [])];
    this.hooks = null;
    return hooks;
  }
}

const running = new AsyncLocalStorage<Hooks>();

/**
 * Registers `hook` on the unit whose work is running (docs/webhooks.md §2: the outbox's wake), for
 * code that is handed `db | trx` only, as repositories are. Outside a unit (a test writing
 * through a bare transaction) there is no commit to wait for: nothing is registered.
 */
export function afterCommit(hook: CommitHook): void {
  running.getStore()?.afterCommit(hook);
}

/** The unit whose work is running now, if any (src/changes/record.ts stages its changes on it). */
export const runningUnit = (): Unit | undefined => running.getStore();

/** The outcome of work run under a savepoint: its value, or the error it was undone for. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `work` under SAVEPOINT `name` of `trx` (standard SQL, both backends): if it throws,
 * it alone is undone and the rest of the transaction goes on. The one savepoint loop of
 * the service: a request in its group-commit batch, an outcome in the dispatcher's batch,
 * a row in an import's chunk. Inside a unit, the hooks `work` registers are kept when the
 * savepoint is released and dropped when it is rolled back. A ROLLBACK TO that fails
 * (SQLite has already rolled the whole transaction back) is thrown: the transaction fails.
 */
export async function inSavepoint<T>(trx: Db, name: string, work: () => Promise<T>): Promise<Attempt<T>> {
  const unit = running.getStore();
  const scope = unit && new Hooks();
  await savepointStatement(trx, `savepoint ${name}`);
  try {
    const value = scope ? await running.run(scope, work) : await work();
    await savepointStatement(trx, `release ${name}`);
    for (const hook of scope?.close() ?? []) unit!.afterCommit(hook);
    for (const change of scope?.takeStaged() ?? []) unit!.stageChange(change);
    return { ok: true, value };
  } catch (error) {
    scope?.close();
    await savepointStatement(trx, `rollback to ${name}`);
    await savepointStatement(trx, `release ${name}`);
    return { ok: false, error };
  }
}

/**
 * A savepoint statement, run on the connection at once where the backend can (SQLite in a
 * group commit: a batch of 1,000 items takes 2,000 of them, and Kysely's executor cost
 * more than SQLite's work), else through Kysely.
 */
async function savepointStatement(trx: Db, text: string): Promise<void> {
  const compiled = sql.raw(text).compile(trx);
  if (dialectOf(trx).runDirectly(trx, compiled, [])) return;
  await trx.executeQuery(compiled);
}

/**
 * The one way the service writes (docs/operations.md §3.1): `run(owner, work)` gives `work` one
 * transaction, or its savepoint of a group commit on SQLite, through the service's write
 * queue, and settles once that has committed. The API's requests, the console's actions,
 * the CLI, imports, forms, the dispatcher's outcomes and the jobs all write here. After
 * the COMMIT it runs the unit's afterCommit hooks, once; a unit that rolls back (its
 * savepoint, or the whole batch) runs none. The change records its work staged
 * (src/changes/record.ts) are written at its end, in its transaction.
 */
export class UnitOfWork {
  private readonly listeners = new Map<CommitSignal, Array<() => void>>();

  constructor(
    private readonly queue: WriteQueue,
    private readonly log?: Logger,
  ) {}

  /** Transactions committed and the units they held (/metrics). */
  get stats(): WriteQueue["stats"] {
    return this.queue.stats;
  }

  /** `listener` runs after each commit of a unit that signalled `signal` (server.ts: the dispatcher's wake). */
  on(signal: CommitSignal, listener: () => void): this {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
    return this;
  }

  /**
   * Runs `work` as one unit. With `patienceMs`, a unit refused for room (WriteQueueFull: it
   * did not run) is tried again, backing off, for up to that long: a background writer
   * sharing the queue with requests (the console's import) waits rather than fails.
   */
  async run<T>(owner: Owner, work: Work<T>, options: { patienceMs?: number } & RunOptions = {}): Promise<T> {
    if (options.patienceMs === undefined) return this.once(owner, work, options);
    const deadline = performance.now() + options.patienceMs;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
      try {
        return await this.once(owner, work, options);
      } catch (error) {
        if (!(error instanceof WriteQueueFull) || performance.now() > deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async once<T>(owner: Owner, work: Work<T>, options: RunOptions): Promise<T> {
    const unit = new Hooks();
    // Who acts is read here: the queue may run the work from another request's context.
    const acting = currentActing();
    let value: T;
    try {
      // The queue's machinery runs outside any unit, even when a unit's work started the caller.
      // The changes the work staged are written last, in its transaction (docs/api.md §19.1).
      const whole = (trx: Trx) =>
        running.run(unit, async () => {
          const result = await work(trx, unit);
          await writeChanges(trx, unit.takeStaged(), acting);
          return result;
        });
      value = await running.exit(() => this.queue.run(whole, owner, options));
    } catch (error) {
      unit.close();
      throw error;
    }
    for (const hook of unit.close()) {
      for (const run of typeof hook === "string" ? (this.listeners.get(hook) ?? []) : [hook]) {
        // The unit is committed and its answer stands, whatever a hook does.
        try {
          run();
        } catch (error) {
          this.log?.error("after-commit hook failed", { error: String((error as Error)?.message ?? error) });
        }
      }
    }
    return value;
  }
}

/** Each unit its own transaction on `db`, unbounded: for a database opened without a service's write queue (a test, a one-off tool). */
class OwnTransactions implements WriteQueue {
  readonly stats = { batches: 0, jobs: 0 };
  constructor(private readonly db: Kysely<Database>) {}
  async run<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    const value = await this.db.transaction().execute(work);
    this.stats.batches += 1;
    this.stats.jobs += 1;
    return value;
  }
}

/** The unit of work to write through: the service's, or over a bare database's own transactions (tests call the repositories so). */
export const unitsFor = (writes: UnitOfWork | Kysely<Database>): UnitOfWork =>
  writes instanceof UnitOfWork ? writes : new UnitOfWork(new OwnTransactions(writes));
