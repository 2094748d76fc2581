/**
 * createApp as a whole, driven in-process with `app.request` (no server): the OpenAPI
 * document is built once (docs/api.md §16.1), and errors of every route, the web forms' too,
 * go through the one error handler (a browser's form post gets an HTML page even for an
 * unexpected failure, a JSON caller the envelope).
 */
// The generator @hono/zod-openapi builds documents with: counting its calls counts the builds.
import { OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import type { AppDeps } from "../../src/http/env.ts";
import { Metrics } from "../../src/metrics/registry.ts";

/** Just what requestContext and the routes under test touch; a database that fails every query. */
function deps(): AppDeps {
  const failing = () => {
    throw new Error("disk I/O error");
  };
  const log = { debug() {}, info() {}, warn() {}, error() {} };
  return {
    config: loadConfig({}),
    db: new Proxy({}, { get: () => failing }),
    metrics: new Metrics(),
    log,
  } as unknown as AppDeps;
}

describe("GET /v1/openapi.json", () => {
  test("the document is built once, not per request", async () => {
    const generate = OpenApiGeneratorV31.prototype.generateDocument;
    let builds = 0;
    OpenApiGeneratorV31.prototype.generateDocument = function (this: OpenApiGeneratorV31, ...args) {
      builds += 1;
      return generate.apply(this, args);
    };
    const answers: Response[] = [];
    try {
      const app = createApp(deps());
      for (let i = 0; i < 3; i++) answers.push(await app.request("/v1/openapi.json"));
    } finally {
      OpenApiGeneratorV31.prototype.generateDocument = generate;
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.every((a) => a.headers.get("content-type")?.startsWith("application/json"))).toBe(true);
    const texts = await Promise.all(answers.map((a) => a.text()));
    expect(new Set(texts).size).toBe(1);
    expect(JSON.parse(texts[0]!).openapi).toBe("3.1.0");
    expect(builds).toBe(1);
  });

  test("the web-form submission route is in the document, typed by content type, without a key", async () => {
    const doc = await (await createApp(deps()).request("/v1/openapi.json")).json();
    const post = doc.paths["/forms/{formId}/submissions"].post;
    expect(post.security).toEqual([]);
    expect(Object.keys(post.requestBody.content).sort()).toEqual(["application/json", "application/x-www-form-urlencoded"]);
    expect(Object.keys(doc.paths).some((p) => p.startsWith("/f/"))).toBe(false);
  });
});

describe("errors of the web-form routes go through the one error handler", () => {
  const submit = (contentType: string, body: string) =>
    createApp(deps()).request("/v1/forms/frm_any/submissions", { method: "POST", headers: { "Content-Type": contentType }, body });

  test("a browser post that fails unexpectedly gets an HTML page with status 500, and X-Request-Id", async () => {
    const res = await submit("application/x-www-form-urlencoded", "email=a%40example.com");
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const html = await res.text();
    expect(html).toContain("Something went wrong");
    expect(html).not.toContain("disk I/O error");
  });

  test("a JSON post that fails unexpectedly gets the 500 envelope, with no detail of the cause", async () => {
    const res = await submit("application/json", '{"email":"a@example.com"}');
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({ success: false, statusCode: 500, error: "Internal Server Error", code: "ERR_INTERNAL", message: "Internal server error." });
  });
});

describe("metrics", () => {
  test("routes answered ahead of authenticate are counted under their templates; unknown paths as unmatched", async () => {
    const seen: string[] = [];
    const app = createApp({ ...deps(), metrics: { observeRequest: (method: string, route: string) => seen.push(`${method} ${route}`) } } as unknown as AppDeps);
    await app.request("/v1/openapi.json");
    await app.request("/v1/forms/frm_any/submissions", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    await app.request("/f/frm_any");
    await app.request("/v1/no-such-thing");
    expect(seen).toEqual(["GET /v1/openapi.json", "POST /v1/forms/:formId/submissions", "GET /f/:formId", "GET unmatched"]);
  });
});
