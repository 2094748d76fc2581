import type { OpenAPIHono } from "@hono/zod-openapi";
import { ApiError, envelope } from "../errors.ts";
import type { AppEnv } from "./env.ts";
import { scopeRequiredBy } from "./openapi.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/**
 * The scope each operation requires (docs/api.md §2.2), read from the routes themselves:
 * the scope check among a route's middleware (src/http/openapi.ts `reading`, `writing`)
 * names it, so a route file states its scope once. Keyed `get /contacts/{contactId}`.
 */
function scopesOfRoutes(api: OpenAPIHono<AppEnv>): Map<string, string> {
  const scopes = new Map<string, string>();
  for (const route of api.routes) {
    const scope = scopeRequiredBy(route.handler);
    if (scope) scopes.set(`${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, "{$1}")}`, scope);
  }
  return scopes;
}

/**
 * Writes each operation's scope into the document (docs/api.md §16.1): its `security`
 * (`[{ bearerAuth: ["contacts:write"] }]`; OpenAPI 3.1 lets a non-OAuth scheme list role
 * names), an `x-required-scope` extension, a sentence of its description, and its 403's
 * description and example, which quote the server's own message.
 */
export function documentScopes(api: OpenAPIHono<AppEnv>, document: Json) {
  const scopes = scopesOfRoutes(api);
  for (const [path, item] of Object.entries(document.paths ?? {}) as [string, Json][]) {
    for (const [method, operation] of Object.entries(item) as [string, Json][]) {
      const scope = scopes.get(`${method} ${path}`);
      if (!scope) continue;
      operation.security = [{ bearerAuth: [scope] }];
      operation["x-required-scope"] = scope;
      operation.description = `${operation.description ?? ""} Requires the scope \`${scope}\`.`.trim();
      const forbidden = operation.responses?.[403];
      if (!forbidden) continue;
      const example = envelope(new ApiError("ERR_FORBIDDEN", `This API key lacks the scope ${scope}.`));
      operation.responses[403] = {
        ...forbidden,
        description: `The key lacks the scope ${scope}.`,
        content: { "application/json": { ...forbidden.content?.["application/json"], example } },
      };
    }
  }
}
