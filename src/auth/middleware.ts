import { actingAs } from "../changes/actor.ts";
import type { MiddlewareHandler } from "hono";
import { ApiError, UNAUTHORIZED_MESSAGE } from "../errors.ts";
import type { AppEnv } from "../http/env.ts";
import { isWellFormedKey } from "./key-format.ts";
import { limitsCreates, routeLimitHeaders } from "./limits.ts";
import { rateLimitHeaders } from "./rate-limiter.ts";
import type { Scope } from "./scopes.ts";

/**
 * Verifies `Authorization: Bearer <key>` (docs/api.md §2). Every cause of failure gets the
 * same 401; past 30 failures a minute from one client address (docs/api.md §2.3; behind a
 * trusted proxy, the address it forwarded for, docs/operations.md §8), 429. Then takes a
 * token from the key's buckets (the hourly create bucket too when the route declares
 * `limitCreates()`, limits.ts), so a valid key's answers all carry the RateLimit headers.
 */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async function authenticate(c, next) {
    const deps = c.get("deps");
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
    const key = match?.[1] ?? "";
    const env = deps.config.CRM_ENV;
    const now = deps.clock.now();
    const caller = deps.keys.knows(key, now) || isWellFormedKey(key, env) ? await deps.keys.verify(key, now) : null;
    if (!caller) {
      if (!deps.limiter.failedAuth(c.get("clientAddress"))) {
        const retryAfter = deps.limiter.failedAuthRetryAfter(c.get("clientAddress"));
        throw new ApiError("ERR_RATE_LIMITED", "Too many failed authentications; retry later.", undefined, {
          ...failedAuthenticationHeaders(retryAfter),
          "Retry-After": String(retryAfter),
        });
      }
      throw new ApiError("ERR_UNAUTHORIZED", UNAUTHORIZED_MESSAGE);
    }
    c.set("caller", caller);
    const decision = await deps.limiter.decide(caller, limitsCreates(c));
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      throw new ApiError("ERR_RATE_LIMITED", "Rate limit exceeded; retry after the time in Retry-After.", undefined, {
        ...headers,
        "Retry-After": String(decision.retryAfterSeconds),
      });
    }
    // Every change this request makes names its key (docs/api.md §19.1).
    await actingAs({ actor: { type: "api_key", id: caller.keyId }, requestId: c.get("requestId") }, next);
    // A batch route's headers describe its items bucket instead (limits.ts `takeBatchItems`).
    for (const [name, value] of Object.entries(routeLimitHeaders(c) ?? headers)) c.res.headers.set(name, value);
  };
}

/** The failed-authentication limit per client address (docs/api.md §2.3; src/auth/rate-limiter.ts counts it). */
const FAILED_AUTHENTICATIONS_PER_MINUTE = 30;

/**
 * The RateLimit headers of a 429 of the failed-authentication limit (docs/api.md §2.3, §6):
 * the document lists them on every 429, so this one describes its own limit, spent.
 */
function failedAuthenticationHeaders(resetSeconds: number): Record<string, string> {
  return {
    "RateLimit-Limit": String(FAILED_AUTHENTICATIONS_PER_MINUTE),
    "RateLimit-Remaining": "0",
    "RateLimit-Reset": String(resetSeconds),
    "RateLimit-Policy": `"failed-authentications";q=${FAILED_AUTHENTICATIONS_PER_MINUTE};w=60`,
    RateLimit: `"failed-authentications";r=0;t=${resetSeconds}`,
  };
}

/** 403 naming the missing scope (docs/api.md §2). */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async function requireScope(c, next) {
    if (!c.get("caller").scopes.includes(scope)) {
      throw new ApiError("ERR_FORBIDDEN", `This API key lacks the scope ${scope}.`);
    }
    await next();
  };
}
