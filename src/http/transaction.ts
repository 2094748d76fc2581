import type { Context, MiddlewareHandler, Next } from "hono";
import { createHash } from "node:crypto";
import { ApiError } from "../errors.ts";
import { findIdempotencyRecord, saveIdempotencyRecord, type StoredAnswer } from "../idempotency/repository.ts";
import { lockUntilCommit } from "../storage/query.ts";
import type { Db } from "../storage/schema.ts";
import { queuedDeliveries } from "../webhooks/outbox.ts";
import type { AppEnv } from "./env.ts";

class Rollback extends Error {}

/**
 * Work a write route must do before its transaction opens: network I/O such as a webhook
 * URL's DNS check (decisions §16), so no request holds the shared writer while it waits.
 */
export type Prepare = (c: Context<AppEnv>) => Promise<void>;

/** Answer headers worth replaying besides the body. */
const REPLAYED_HEADERS = ["content-type", "location"];

/** Idempotency-Key values that are being answered right now, per API key (decisions §5: 409). */
const inFlight = new Set<string>();

/**
 * One transaction per write request: the handler runs on `c.get("db")` = the transaction
 * (a savepoint of a group commit, src/storage/sqlite/group-commit.ts), which commits only when the
 * answer is a success, and the answer leaves only after the commit; any error rolls the
 * request back, so a request that fails writes nothing. With an `Idempotency-Key`
 * (decisions §5) the answer is stored in that same transaction, and a repeat is answered
 * from it.
 */
/**
 * Who a request writes for: the project (its write queue, decisions §16) and the owner of
 * its Idempotency-Keys. An API request's is its key; a web-form submission, which takes
 * no key, has its form (src/forms/routes.ts).
 */
export type WriterOf = (c: Context<AppEnv>) => { projectId: string; owner: string };
const byApiKey: WriterOf = (c) => ({ projectId: c.get("caller").projectId, owner: c.get("caller").keyId });

export function transactional(options: { transaction: boolean; prepare?: Prepare; writer?: WriterOf }): MiddlewareHandler<AppEnv> {
  const writerOf = options.writer ?? byApiKey;
  const execute: Runner = options.transaction ? runInTransaction(writerOf) : runOutsideTransaction;
  const run: Runner = options.prepare
    ? async (c, next, first, beforeCommit) => {
        await options.prepare!(c);
        return execute(c, next, first, beforeCommit);
      }
    : execute;
  return async function transactional(c, next) {
    const idempotencyKey = c.req.method === "POST" ? c.req.header("idempotency-key") : undefined;
    if (idempotencyKey === undefined) return void (await run(c, next));
    if (!/^[\x20-\x7e]{1,255}$/.test(idempotencyKey)) {
      throw new ApiError("ERR_FORM_VALIDATION", "Idempotency-Key must be 1–255 printable characters.", "Idempotency-Key");
    }
    const keyId = writerOf(c).owner;
    const token = `${keyId}\n${idempotencyKey}`;
    if (inFlight.has(token)) {
      // Retry-After: the first request is running, a retry in a moment gets its stored answer.
      throw new ApiError("ERR_CONFLICT", "A request with this Idempotency-Key is still being processed; retry after the time in Retry-After.", undefined, {
        "Retry-After": "1",
      });
    }
    inFlight.add(token);
    try {
      const request = {
        method: c.req.method,
        path: c.req.path,
        // Routes that take no body (test ping, rotate-secret) still fingerprint what was sent:
        // the same key with another body is refused everywhere (decisions §5).
        bodyHash: createHash("sha256").update(c.get("rawBody") ?? (await c.req.text())).digest("hex"),
      };
      const { db, secrets, clock } = c.get("deps");
      // Both ends of the 24 h window come from the service's clock (decisions §5, issue 11).
      const stored = await findIdempotencyRecord(db, keyId, idempotencyKey, clock.now());
      if (stored) return replay(c, { ...stored, body: secrets.open(stored.body) }, request);
      // Another node may be answering the same key right now (decisions §13): the first
      // thing in the transaction is a lock on the key, then a second look, so a concurrent
      // first call waits for the other's commit and replays its answer instead of writing.
      const first = async (trx: Db) => {
        await lockUntilCommit(trx, `idempotency\n${token}`);
        return findIdempotencyRecord(trx, keyId, idempotencyKey, clock.now());
      };
      const answered = await run(c, next, first, async (trx) => {
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = c.res.headers.get(name);
          if (value !== null) headers[name] = value;
        }
        // Sealed like webhook secrets: a POST /webhooks answer carries one (decisions §5).
        const answer = { ...request, status: c.res.status, body: secrets.seal(await c.res.clone().text()), headers };
        await saveIdempotencyRecord(trx, keyId, idempotencyKey, answer, clock.now());
      });
      if (answered) return replay(c, { ...answered, body: secrets.open(answered.body) }, request);
    } finally {
      inFlight.delete(token);
    }
  };
}

function replay(c: Context<AppEnv>, stored: StoredAnswer, request: Pick<StoredAnswer, "method" | "path" | "bodyHash">) {
  if (stored.method !== request.method || stored.path !== request.path || stored.bodyHash !== request.bodyHash) {
    throw new ApiError(
      "ERR_IDEMPOTENCY_KEY_REUSED",
      "This Idempotency-Key was used with another request; use a new key for a new request.",
      "Idempotency-Key",
    );
  }
  return c.body(stored.body, stored.status as 200, { ...stored.headers, "Idempotent-Replayed": "true" });
}

/**
 * Runs the handler. `first` runs before it in the transaction: when it finds a stored
 * answer, the handler does not run and that answer is returned (to be replayed).
 */
type Runner = (
  c: Context<AppEnv>,
  next: Next,
  first?: (trx: Db) => Promise<StoredAnswer | null>,
  beforeCommit?: (trx: Db) => Promise<void>,
) => Promise<StoredAnswer | null | void>;

/** For a handler that writes nothing itself: only the Idempotency-Key record is written. */
const runOutsideTransaction: Runner = async (c, next, _first, beforeCommit) => {
  await next();
  if (c.error || c.res.status >= 400 || !beforeCommit) return;
  await c.get("deps").db.transaction().execute(beforeCommit);
};

class Answered extends Error {
  constructor(readonly answer: StoredAnswer) {
    super("answered by a concurrent request");
  }
}

const runInTransaction = (writerOf: WriterOf): Runner => async (c, next, first, beforeCommit) => {
  const deps = c.get("deps");
  try {
    // Group commit: concurrent write requests share one transaction, one savepoint each;
    // the queue is bounded in all and per project (decisions §16).
    let queued = false;
    await deps.writes.run(async (trx) => {
      const answer = await first?.(trx);
      if (answer) throw new Answered(answer);
      c.set("db", trx);
      await next();
      if (c.error || c.res.status >= 400) throw new Rollback();
      await beforeCommit?.(trx);
      queued = queuedDeliveries(trx);
    }, writerOf(c).projectId);
    // A write that queued no delivery (no subscription wants it) spares the dispatcher a look.
    if (queued) deps.onEventsCommitted();
  } catch (error) {
    if (error instanceof Answered) return error.answer;
    if (!(error instanceof Rollback)) throw error;
  } finally {
    c.set("db", deps.db);
  }
};
