/**
 * PATCH and PUT take `application/merge-patch+json` (RFC 7396) as well as application/json;
 * POST only application/json (docs/api.md §3.1). The body gate (src/http/body.ts) and the
 * document's two content types (src/http/openapi.ts `mergePatchRequest`) agree.
 */
import { describe, expect, test } from "bun:test";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError, errorResponse } from "../../src/errors.ts";
import { jsonBody } from "../../src/http/body.ts";
import type { AppEnv } from "../../src/http/env.ts";
import { jsonRequest, mergePatchRequest } from "../../src/http/openapi.ts";

const Body = z.strictObject({ name: z.string().optional() });
const ok = { 200: { description: "ok" } };

function app() {
  const api = new OpenAPIHono<AppEnv>();
  for (const method of ["patch", "put"] as const) {
    api.openapi(createRoute({ method, path: "/x", middleware: [jsonBody()], request: { body: mergePatchRequest(Body) }, responses: ok }), (c) => c.json(c.req.valid("json"), 200));
  }
  api.openapi(createRoute({ method: "post", path: "/x", middleware: [jsonBody()], request: { body: jsonRequest(Body) }, responses: ok }), (c) => c.json(c.req.valid("json"), 200));
  api.onError((error, c) => (error instanceof ApiError ? errorResponse(c, error) : c.json({ status: 500, error: String(error) }, 500)));
  return api;
}

const send = (method: string, type: string) => app().request("/x", { method, headers: { "Content-Type": type }, body: '{"name":"Ada"}' });

describe("merge-patch+json (docs/api.md §3.1)", () => {
  test.each(["PATCH", "PUT"])("%s takes application/merge-patch+json and application/json", async (method) => {
    for (const type of ["application/merge-patch+json", "application/merge-patch+json; charset=utf-8", "application/json"]) {
      const res = await send(method, type);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ name: "Ada" });
    }
  });

  test("POST refuses application/merge-patch+json with 415", async () => {
    const res = await send("POST", "application/merge-patch+json");
    expect(res.status).toBe(415);
    expect((await res.json()).code).toBe("ERR_UNSUPPORTED_MEDIA_TYPE");
  });

  test("the document lists both types for PATCH", () => {
    const document = app().getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
    expect(Object.keys((document.paths!["/x"]!.patch!.requestBody as { content: object }).content)).toEqual(["application/json", "application/merge-patch+json"]);
  });
});
