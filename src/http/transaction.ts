import type { Context, MiddlewareHandler } from "hono";
import { idempotencyKey, type Runner } from "../idempotency/middleware.ts";
import type { StoredAnswer } from "../idempotency/repository.ts";
import type { RunOptions } from "../storage/unit-of-work.ts";
import type { AppEnv } from "./env.ts";

class Rollback extends Error {}

class Answered extends Error {
  constructor(readonly answer: StoredAnswer) {
    super("answered by a concurrent request");
  }
}

/**
 * Work a write route must do before its transaction opens: network I/O such as a webhook
 * URL's DNS check (docs/api.md §13.3), so no request holds the shared writer while it waits.
 */
export type Prepare = (c: Context<AppEnv>) => Promise<void>;

/**
 * Who a request writes for: the project (its share of the write queue, docs/api.md §7) and
 * the owner of its Idempotency-Keys. An API request's is its key; a web-form submission,
 * which takes no key, has its form (src/forms/routes.ts).
 */
export type WriterOf = (c: Context<AppEnv>) => { projectId: string; owner: string };
const byApiKey: WriterOf = (c) => ({ projectId: c.get("caller").projectId, owner: c.get("caller").keyId });

/**
 * One unit of work per write request (src/storage/unit-of-work.ts): the handler runs on
 * `c.get("db")` = the unit's transaction (a savepoint of a group commit on SQLite), which
 * commits only when the answer is a success, and the answer leaves only after the commit
 * and its hooks (the dispatcher's wake); any error rolls the request back, so a request
 * that fails writes nothing. With an `Idempotency-Key` (docs/api.md §8) the answer is stored
 * in the same unit (src/idempotency/middleware.ts).
 */
export function transactional(options: { transaction: boolean; prepare?: Prepare; writer?: WriterOf } & RunOptions): MiddlewareHandler<AppEnv> {
  const writerOf = options.writer ?? byApiKey;
  const execute: Runner = options.transaction ? runInUnit(writerOf, { alone: options.alone }) : runOutsideUnit;
  const run: Runner = options.prepare
    ? async (c, next, first, beforeCommit) => {
        await options.prepare!(c);
        return execute(c, next, first, beforeCommit);
      }
    : execute;
  return idempotencyKey(run, (c) => writerOf(c).owner);
}

/** For a handler that writes nothing itself: only the Idempotency-Key record is written, in a unit of its own. */
const runOutsideUnit: Runner = async (c, next, _first, beforeCommit) => {
  await next();
  if (c.error || c.res.status >= 400 || !beforeCommit) return;
  // The answer is given already (a test ping was sent): its record is never refused for room.
  await c.get("deps").writes.run(null, beforeCommit);
};

const runInUnit = (writerOf: WriterOf, runOptions: RunOptions): Runner => async (c, next, first, beforeCommit) => {
  const deps = c.get("deps");
  try {
    // Concurrent write requests share one transaction on SQLite, one savepoint each; the
    // queue is bounded in all and per project (docs/api.md §7).
    await deps.writes.run(writerOf(c).projectId, async (trx) => {
      const answer = await first?.(trx);
      if (answer) throw new Answered(answer);
      c.set("db", trx);
      await next();
      if (c.error || c.res.status >= 400) throw new Rollback();
      await beforeCommit?.(trx);
    }, runOptions);
  } catch (error) {
    if (error instanceof Answered) return error.answer;
    if (!(error instanceof Rollback)) throw error;
  } finally {
    c.set("db", deps.db);
  }
};
