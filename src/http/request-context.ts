import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { clientAddress, type TrustedProxies } from "./client-address.ts";
import type { AppDeps, AppEnv } from "./env.ts";

/**
 * First middleware of every request: a unique X-Request-Id on every answer, the deps on the
 * context, the client address the per-address limits count (docs/operations.md §8:
 * `CRM_TRUST_PROXY`), and one JSON log line per request with ids only, never a key
 * (docs/operations.md §3).
 */
export function requestContext(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const trusted = deps.config.CRM_TRUST_PROXY ?? [];
  const logsRequests = deps.log.wants?.("info") ?? true;
  return async function requestContext(c, next) {
    const started = performance.now();
    const requestId = `req_${crypto.randomUUID().replaceAll("-", "")}`;
    c.set("requestId", requestId);
    c.set("deps", deps);
    c.set("db", deps.db);
    c.set("clientAddress", addressOf(c.env?.ip ?? "unknown", c.req.header("x-forwarded-for"), trusted));
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
    if (!logsRequests) return;
    const caller = c.get("caller");
    deps.log.info("request", {
      requestId,
      method: c.req.method,
      route,
      status: c.res.status,
      durationMs: Math.round(seconds * 100_000) / 100,
      keyId: caller?.keyId ?? null,
      projectId: caller?.projectId ?? null,
    });
  };
}

/**
 * The socket's address, normalised (ipaddr.js parses it: ~1 µs): when no proxy is trusted
 * the answer depends on the socket address alone, so the last one is remembered (one
 * client on a keep-alive connection sends many requests in a row).
 */
let lastSocket = "";
let lastAddress = "";
function addressOf(socket: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  if (trusted.length > 0) return clientAddress(socket, forwardedFor, trusted);
  if (socket !== lastSocket) {
    lastAddress = clientAddress(socket, undefined, trusted);
    lastSocket = socket;
  }
  return lastAddress;
}
