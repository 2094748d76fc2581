import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { adminApp, adminErrorPages } from "./admin/app.tsx";
import { consoleHosts } from "./admin/hosts.ts";
import { authenticate } from "./auth/middleware.ts";
import { contactBatchRoutes } from "./contacts/batch-routes.ts";
import { contactRoutes } from "./contacts/routes.ts";
import { trashRoutes } from "./contacts/trash-routes.ts";
import { changeRoutes } from "./changes/routes.ts";
import { duplicateRoutes } from "./duplicates/routes.ts";
import { mergeRoutes } from "./merges/routes.ts";
import { isConnectionError } from "./storage/query.ts";
import { mergedAnswer } from "./merges/redirect.ts";
import { WriteQueueFull } from "./storage/unit-of-work.ts";
import { docsPages } from "./docs/routes.ts";
import { ApiError, CONTACT_NOT_FOUND, errorResponse } from "./errors.ts";
import type { AppDeps, AppEnv } from "./http/env.ts";
import { openApiDocument } from "./http/document.ts";
import { commonErrors, json, reading, security } from "./http/openapi.ts";
import { describeQueries } from "./http/strict-query.ts";
import { requestContext } from "./http/request-context.ts";
import { validationFailure } from "./http/validation.ts";
import { interactionRoutes } from "./interactions/routes.ts";
import { referenceRoutes } from "./reference/routes.ts";
import { eventRoutes } from "./events/routes.ts";
import { formErrorPages, formPages, formRoutes } from "./forms/routes.ts";
import { limitBodies } from "./http/body-limit.ts";
import { webhookRoutes } from "./webhooks/routes.ts";

/**
 * The zod hook of every route (@hono/zod-validator): on a failure `data` is the input as
 * received (the body, the query), which tells a missing field from a wrong type (docs/api.md §16).
 */
const defaultHook = (result: { success: boolean; error?: unknown; data?: unknown; target?: string }) => {
  if (!result.success) throw validationFailure(result.error as z.ZodError, { input: result.data, target: result.target });
};

const PingSchema = z
  .object({
    projectId: z.string(),
    keyId: z.string(),
    scopes: z.array(z.string()),
    environment: z.enum(["production", "sandbox"]),
  })
  .openapi("Ping");

/** The versioned API (docs/api.md §3), mounted under /v1; also the source of the OpenAPI document. */
export function createApi() {
  const api = new OpenAPIHono<AppEnv>({ defaultHook });
  // Every operation's query parameters, for the strict-query check of its route (docs/api.md §3.3).
  api.use("*", describeQueries(api));
  // Web-form submissions take no key (docs/api.md §15): mounted ahead of authenticate, their handler answers first.
  api.route("/", formRoutes());
  api.use("*", authenticate());
  api.openapi(
    createRoute({
      method: "get",
      path: "/ping",
      operationId: "ping",
      summary: "Verify a key",
      description: "Answers the calling key's project, key id, scopes and environment. Needs no scope: check a key with it before storing it.",
      tags: ["Service"],
      security,
      middleware: reading(),
      responses: { 200: json(PingSchema, "The key's project and scopes."), 401: commonErrors[401], 429: commonErrors[429] },
    }),
    (c) => {
      const { projectId, keyId, scopes } = c.get("caller");
      return c.json({ projectId, keyId, scopes, environment: c.get("deps").config.CRM_ENV }, 200);
    },
  );
  api.route("/", referenceRoutes);
  api.route("/", contactBatchRoutes);
  api.route("/", contactRoutes);
  api.route("/", trashRoutes);
  api.route("/", changeRoutes);
  api.route("/", duplicateRoutes);
  api.route("/", mergeRoutes);
  api.route("/", interactionRoutes);
  api.route("/", webhookRoutes);
  api.route("/", eventRoutes);
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer" });
  return api;
}

/** Path templates of the API, for telling 405 from 404. */
function routeMatchers(api: OpenAPIHono<AppEnv>) {
  return api.openAPIRegistry.definitions
    .filter((d) => d.type === "route")
    .map((d) => {
      const { method, path } = (d as unknown as { route: { method: string; path: string } }).route;
      const pattern = new RegExp(`^/v1${path.replace(/\{[^/]+\}/g, "[^/]+")}/?$`);
      return { method: method.toUpperCase(), pattern };
    });
}

/** Builds the whole HTTP surface from its dependencies (style: createApp(deps)). */
export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook });
  const api = createApi();
  const matchers = routeMatchers(api);
  // Built on the first request and kept (docs/api.md §7): ~70 ms that start-up does not wait for.
  let document: string | undefined;

  app.use("*", requestContext(deps));
  // Before anything reads a body (docs/security.md §2, §5): the console refuses other hosts
  // (421) and answers errors as pages, then holds every body to its limit before its session
  // or CSRF check; a browser's form post answers errors as pages too. The API's write routes
  // judge their bodies right after the key and the scope (src/http/openapi.ts `writing`),
  // so a 413 carries the key's RateLimit headers (docs/api.md §3); web forms, in their gate.
  app.use("/admin/*", consoleHosts());
  app.use("/admin/*", adminErrorPages() as unknown as MiddlewareHandler<AppEnv>);
  app.use("/admin/*", limitBodies());
  app.use("/v1/forms/:formId/submissions", formErrorPages() as unknown as MiddlewareHandler<AppEnv>);
  // `/` leads to the console (docs/admin.md §1); the console sends a browser without a session to sign in.
  app.get("/", (c) => c.redirect("/admin", 302));
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => ((await deps.isReady()) ? c.json({ status: "ready" }) : c.json({ status: "not ready" }, 503)));
  app.get("/metrics", async (c) =>
    c.text(deps.metrics.render({ outboxPending: await deps.outboxPending(), writeBatches: deps.writes.stats }), 200, {
      "Content-Type": "text/plain; version=0.0.4; charset=utf-8",
    }),
  );
  app.get("/v1/openapi.json", (c) => c.body((document ??= openApiDocument(api)), 200, { "Content-Type": "application/json" }));
  app.route("/", formPages());
  app.route("/docs", docsPages());
  app.get("/docs/", (c) => c.redirect("/docs", 301));
  app.route("/admin", adminApp() as unknown as OpenAPIHono<AppEnv>);
  app.route("/v1", api);

  app.notFound((c) => {
    const allowed = matchers.filter((m) => m.pattern.test(c.req.path)).map((m) => m.method);
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return errorResponse(c, new ApiError("ERR_METHOD_NOT_ALLOWED", `${c.req.method} is not allowed here.`));
    }
    return errorResponse(c, new ApiError("ERR_NOT_FOUND", "No such resource."));
  });

  // The one error handler: the envelope, or the page of a route that answers in HTML (a web form's).
  app.onError(async (error, c) => {
    let apiError = asApiError(error, c, deps);
    // A merged-away contactId (docs/api.md §20.3): looked up only once the route found no contact.
    if (apiError.code === "ERR_NOT_FOUND" && apiError.message === CONTACT_NOT_FOUND) {
      const merged = await mergedAnswer(c, deps);
      if (merged instanceof Response) return merged;
      if (merged) apiError = merged;
    }
    return c.get("renderError")?.(apiError) ?? errorResponse(c, apiError);
  });
  return app;
}

/** Any error as the ApiError it is answered with; an unexpected one is logged with the request id and is a plain 500. */
function asApiError(error: Error, c: Context<AppEnv>, deps: AppDeps): ApiError {
  if (error instanceof ApiError) return error;
  // The write queue is full (docs/api.md §7): the server is saturated, the client retries later.
  if (error instanceof WriteQueueFull) {
    return new ApiError("ERR_RATE_LIMITED", "Too many writes are waiting; retry after the time in Retry-After.", undefined, { "Retry-After": "1" });
  }
  if (isConnectionError(error)) {
    deps.log.error("database unreachable", { requestId: c.get("requestId"), error: String(error?.message ?? error) });
    return new ApiError("ERR_INTERNAL", "The database cannot be reached; retry later.", undefined, { "Retry-After": "1" });
  }
  if (error instanceof HTTPException) {
    if (error.status === 415) return new ApiError("ERR_UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
    if (error.status === 400 && error.message.startsWith("Malformed FormData")) {
      return new ApiError("ERR_FORM_VALIDATION", "The body is not valid form data.", "body");
    }
    if (error.status === 400) return new ApiError("ERR_INVALID_JSON", "The body is not valid JSON.", "body");
  }
  deps.log.error("unhandled error", { requestId: c.get("requestId"), error: String(error?.stack ?? error) });
  return new ApiError("ERR_INTERNAL", "Internal server error.");
}
