import type { MiddlewareHandler } from "hono";
import { ApiError, UNAUTHORIZED_MESSAGE } from "../errors.ts";
import type { AppEnv } from "../http/env.ts";
import { isWellFormedKey } from "./key-format.ts";
import { limitsCreates } from "./limits.ts";
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
        const retryAfter = String(deps.limiter.failedAuthRetryAfter(c.get("clientAddress")));
        throw new ApiError("ERR_RATE_LIMITED", "Too many failed authentications; retry later.", undefined, {
          "Retry-After": retryAfter,
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
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
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
