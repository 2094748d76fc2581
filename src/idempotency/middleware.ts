import type { Context, MiddlewareHandler, Next } from "hono";
import { createHash } from "node:crypto";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../http/env.ts";
import { lockUntilCommit } from "../storage/query.ts";
import type { Db } from "../storage/schema.ts";
import { findIdempotencyRecord, saveIdempotencyRecord, type StoredAnswer } from "./repository.ts";

/**
 * Runs a write request's handler in its unit of work (src/http/transaction.ts). `first`
 * runs before the handler in the unit: when it finds a stored answer, the handler does not
 * run and that answer is returned (to be replayed). `beforeCommit` runs after a successful
 * handler, in the same unit.
 */
export type Runner = (
  c: Context<AppEnv>,
  next: Next,
  first?: (trx: Db) => Promise<StoredAnswer | null>,
  beforeCommit?: (trx: Db) => Promise<void>,
) => Promise<StoredAnswer | null | void>;

/** Answer headers worth replaying besides the body. */
const REPLAYED_HEADERS = ["content-type", "location", "etag", "upsert-result"];

/** Idempotency-Key values that are being answered right now, per owner (docs/api.md §8: 409). */
const inFlight = new Set<string>();

/**
 * Idempotency-Key on a POST or PUT (docs/api.md §8): the answer is stored in the request's own unit
 * of work, so it commits with the request's writes or not at all, and a repeat within 24 h
 * is answered from it (Idempotent-Replayed: true). The same key with another request is
 * refused (422), one still being answered is 409 with Retry-After. `ownerOf` says whose
 * keys these are: the API key's, or a web form's (src/forms/routes.ts). Without the header,
 * the request just runs.
 */
export function idempotencyKey(run: Runner, ownerOf: (c: Context<AppEnv>) => string): MiddlewareHandler<AppEnv> {
  return async function idempotencyKey(c, next) {
    // POST and PUT (docs/api.md §18.2): the writes that are not idempotent by themselves.
    const idempotencyKey = c.req.method === "POST" || c.req.method === "PUT" ? c.req.header("idempotency-key") : undefined;
    if (idempotencyKey === undefined) return void (await run(c, next));
    if (!/^[\x20-\x7e]{1,255}$/.test(idempotencyKey)) {
      throw new ApiError("ERR_FORM_VALIDATION", "Idempotency-Key must be 1–255 printable characters.", "Idempotency-Key");
    }
    const keyId = ownerOf(c);
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
        // The query too: a PUT's matchOn, update and tags are part of the request.
        path: c.req.path + new URL(c.req.url).search,
        // Routes that take no body (test ping, rotate-secret) still fingerprint what was sent:
        // the same key with another body is refused everywhere (docs/api.md §11).
        bodyHash: createHash("sha256").update(c.get("rawBody") ?? (await c.req.text())).digest("hex"),
      };
      const { db, secrets, clock } = c.get("deps");
      // Both ends of the 24 h window come from the service's clock (docs/api.md §11, issue 11).
      const stored = await findIdempotencyRecord(db, keyId, idempotencyKey, clock.now());
      if (stored) return replay(c, { ...stored, body: secrets.open(stored.body) }, request);
      // Another node may be answering the same key right now (docs/scaling.md §6): the first
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
        // Sealed like webhook secrets: a POST /webhooks answer carries one (docs/api.md §11).
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
