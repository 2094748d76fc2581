import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AppDeps, AppEnv } from "./env.ts";

/**
 * First middleware of every request: a unique X-Request-Id on every answer, the deps on the
 * context, and one JSON log line per request with ids only, never a key (decisions §11).
 */
export function requestContext(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async function requestContext(c, next) {
    const started = performance.now();
    const requestId = `req_${crypto.randomUUID().replaceAll("-", "")}`;
    c.set("requestId", requestId);
    c.set("deps", deps);
    c.set("db", deps.db);
    await next();
    c.res.headers.set("X-Request-Id", requestId);
    const seconds = (performance.now() - started) / 1000;
    // Route templates only, so metrics stay bounded whatever the paths asked for.
    const matched = routePath(c, -1);
    const route = matched && matched !== "*" && !matched.endsWith("/*") ? matched : "unmatched";
    deps.metrics.observeRequest(c.req.method, route, c.res.status, seconds);
    if (c.res.status === 429) deps.metrics.rateLimited += 1;
    deps.log.info("request", {
      requestId,
      method: c.req.method,
      route,
      status: c.res.status,
      durationMs: Math.round(seconds * 100_000) / 100,
      keyId: c.var.caller?.keyId ?? null,
      projectId: c.var.caller?.projectId ?? null,
    });
  };
}
