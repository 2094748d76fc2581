import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { clientAddress } from "./client-address.ts";
import type { AppDeps, AppEnv } from "./env.ts";

/**
 * First middleware of every request: a unique X-Request-Id on every answer, the deps on the
 * context, the client address the per-address limits count (decisions §16:
 * `CRM_TRUST_PROXY`), and one JSON log line per request with ids only, never a key
 * (decisions §11).
 */
export function requestContext(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async function requestContext(c, next) {
    const started = performance.now();
    const requestId = `req_${crypto.randomUUID().replaceAll("-", "")}`;
    c.set("requestId", requestId);
    c.set("deps", deps);
    c.set("db", deps.db);
    c.set("clientAddress", clientAddress(c.env?.ip ?? "unknown", c.req.header("x-forwarded-for"), deps.config.CRM_TRUST_PROXY ?? []));
    await next();
    c.res.headers.set("X-Request-Id", requestId);
    const seconds = (performance.now() - started) / 1000;
    // Route templates only, so metrics stay bounded whatever the paths asked for.
    // The last route registered for a method (not a `use` middleware): also the routes answered
    // before authenticate (`/v1/openapi.json`, web-form submissions) get their template.
    const matched = matchedRoutes(c).findLast((r) => r.method !== "ALL")?.path;
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
