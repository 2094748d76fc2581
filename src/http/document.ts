import type { OpenAPIHono } from "@hono/zod-openapi";
import pkg from "../../package.json" with { type: "json" };
import type { AppEnv } from "./env.ts";

/**
 * The OpenAPI 3.1 document of the API (decisions §15), serialised once: the routes never
 * change after start, so every GET /v1/openapi.json answers the same bytes (decisions §16).
 */
export function openApiDocument(api: OpenAPIHono<AppEnv>): string {
  return JSON.stringify(
    api.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "CRM service", version: pkg.version, description: "Contacts, interaction logs and webhooks." },
      servers: [{ url: "/v1" }],
    }),
  );
}
