import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

/** Where createApp mounts the API (docs/api.md §1.2): the routes' own paths are relative to it. */
const API_BASE = "/v1";

/** Each operation's query parameters, by `METHOD /v1/path/:param` (Hono's form of the route's path). */
export type QueryNames = ReadonlyMap<string, readonly string[]>;

// deno-lint-ignore no-explicit-any
type RouteDefinition = { route: { method: string; path: string; request?: { query?: any } } };

/**
 * The query parameters of every operation, read from the route definitions that also make
 * the OpenAPI document (the registry of @hono/zod-openapi): one source of truth, no list
 * written by hand. An operation without a query schema takes none.
 */
export function queryNamesOf(api: OpenAPIHono<AppEnv>): QueryNames {
  const names = new Map<string, string[]>();
  for (const definition of api.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    const { method, path, request } = (definition as unknown as RouteDefinition).route;
    const shape = request?.query?.shape ?? request?.query?._zod?.def?.in?.shape ?? {};
    names.set(`${method.toUpperCase()} ${API_BASE}${path.replace(/\{([^}]+)\}/g, ":$1")}`, Object.keys(shape));
  }
  return names;
}

/**
 * Mounted first on the API (src/app.ts): puts the operations' query parameters on the
 * context for `strictQuery`, reading the registry once, at the first request, when every
 * route is registered.
 */
export function describeQueries(api: OpenAPIHono<AppEnv>): MiddlewareHandler<AppEnv> {
  let names: QueryNames | undefined;
  return async function describeQueries(c, next) {
    c.set("queryNames", (names ??= queryNamesOf(api)));
    await next();
  };
}

/**
 * Strict queries (docs/api.md §3.3): a query parameter the operation does not define is
 * 422 ERR_FORM_VALIDATION naming it and the ones it takes. Runs among the route's own
 * middleware (src/http/openapi.ts `reading`, `writing`), after the key, the rate limit,
 * the scope and the body gates, just before the schema (docs/api.md §3.2). A repeated
 * parameter is the query schema's to refuse ("must be given once").
 */
export function strictQuery(): MiddlewareHandler<AppEnv> {
  return async function strictQuery(c, next) {
    const query = c.req.url.indexOf("?");
    if (query >= 0) {
      const allowed = c.get("queryNames")?.get(`${c.req.method === "HEAD" ? "GET" : c.req.method} ${c.req.routePath}`);
      const unknown = allowed ? [...new URLSearchParams(c.req.url.slice(query + 1)).keys()].find((name) => !allowed.includes(name)) : undefined;
      if (unknown !== undefined) throw unknownParameter(unknown, allowed!);
    }
    await next();
  };
}

function unknownParameter(name: string, allowed: readonly string[]): ApiError {
  const takes = allowed.length > 0 ? `this operation takes ${allowed.join(", ")}` : "this operation takes no query parameters";
  return new ApiError("ERR_FORM_VALIDATION", `Unknown query parameter ${name}; ${takes}.`, name);
}
