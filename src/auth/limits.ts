import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../http/env.ts";
import { rateLimitHeaders } from "./rate-limiter.ts";

/** The middleware `limitCreates()` returns: what a route's declaration is recognised by. */
const createLimited = new WeakSet<Function>();

/**
 * Declares on a route that each request to it also takes a token from the key's hourly
 * create bucket (docs/api.md §6: the project's contactCreatesPerHour, its default in
 * src/projects/limits.ts). The token is taken by `authenticate`, in the same decision as
 * the minute bucket's, so a refused request consumes neither; this middleware itself only
 * marks the route.
 */
export function limitCreates(): MiddlewareHandler {
  const declared: MiddlewareHandler = async function limitCreates(_c, next) {
    await next();
  };
  createLimited.add(declared);
  return declared;
}

/** Whether the route this request matched declared `limitCreates()`. */
export function limitsCreates(c: Context): boolean {
  return matchedRoutes(c).some((route) => createLimited.has(route.handler));
}

/** The RateLimit headers a route's handler chose over the minute bucket's (docs/api.md §18.4). */
const routeHeaders = new WeakMap<Context, Record<string, string>>();

/**
 * Takes one token per item of a batch (`count`: the validated body's items) from the key's
 * hourly batch-items bucket (docs/api.md §18.4, §6): the project's batchItemsPerHour, one
 * bucket for both batch routes; batch creates take nothing of the create bucket. Called
 * by a batch handler after its body is validated and before it writes anything.
 *
 * Not enough tokens: throws 429 ERR_RATE_LIMITED with Retry-After (seconds until `count`
 * tokens are back; for a batch larger than the bucket, which can never pass, seconds until
 * it is full), having taken nothing. Either way the answer's RateLimit headers describe
 * this bucket, not the minute bucket (`authenticate` reads them with `routeLimitHeaders`).
 */
export async function takeBatchItems(c: Context<AppEnv>, count: number): Promise<void> {
  const decision = await c.get("deps").limiter.takeItems(c.get("caller"), count);
  const headers = rateLimitHeaders(decision);
  routeHeaders.set(c, headers);
  if (decision.allowed) return;
  const message =
    count > decision.limit
      ? `This batch has ${count} items and the key's batch-items bucket holds ${decision.limit} an hour; split it into smaller batches.`
      : `Batch item limit exceeded: this batch has ${count} items and ${decision.remaining} are left; retry after the time in Retry-After.`;
  throw new ApiError("ERR_RATE_LIMITED", message, undefined, { ...headers, "Retry-After": String(decision.retryAfterSeconds) });
}

/** The RateLimit headers the matched route chose (a batch's items bucket), if any; else `authenticate` sends the minute bucket's. */
export function routeLimitHeaders(c: Context): Record<string, string> | undefined {
  return routeHeaders.get(c);
}

/**
 * Takes a token of the key's create bucket for a write that is about to create a contact
 * without having declared `limitCreates()` (PUT /contacts, docs/api.md §18.2); 429 with
 * Retry-After when it is empty.
 */
export async function takeContactCreate(c: Context<AppEnv>): Promise<void> {
  const decision = await c.get("deps").limiter.takeCreate(c.get("caller"));
  if (decision.allowed) return;
  throw new ApiError("ERR_RATE_LIMITED", "Contact create limit exceeded; retry after the time in Retry-After.", undefined, {
    ...rateLimitHeaders(decision),
    "Retry-After": String(decision.retryAfterSeconds),
  });
}

/**
 * A batch's items take their tokens (docs/api.md §18.4) before its transaction opens, as
 * every bucket is taken outside one; a body that does not validate takes none (the route's
 * validation answers it). An Idempotency-Key replay never gets here: it takes nothing.
 */
export function takeItemsOfBatch(schema: { safeParse(value: unknown): { success: boolean; data?: { items: unknown[] } } }) {
  return async (c: Context<AppEnv>) => {
    let body: unknown;
    try {
      body = JSON.parse(c.get("rawBody") ?? "");
    } catch {
      return;
    }
    const parsed = schema.safeParse(body);
    if (parsed.success) await takeBatchItems(c, parsed.data!.items.length);
  };
}
