/**
 * The reference page over HTTP (docs/api.md §16.2): `GET /docs` needs no key, loads only
 * assets of the server itself (no CDN, no absolute URL, no inline script) under a strict
 * CSP, and the 3.5 MB Scalar bundle is served with a strong ETag (304 on revalidation),
 * a cache lifetime, and compressed copies for clients that accept them. The browser side
 * (Scalar really renders, nothing leaves the origin) is test/browser/docs-page.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { REPO_ROOT, startServer, type ServerHandle } from "../helpers/server.ts";

const BUNDLE = readFileSync(join(REPO_ROOT, "node_modules/@scalar/api-reference/dist/browser/standalone.js"));

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

/** A request with no key and, unless given, no content coding; the body as bytes, not decoded. */
async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.origin}${path}`, { headers: { "Accept-Encoding": "identity", ...headers }, decompress: false });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** Every URL an HTML text points at (src, href, action) and every absolute http(s) URL anywhere in it. */
function urlsIn(html: string) {
  return {
    attributes: [...html.matchAll(/\b(?:src|href|action)\s*=\s*["']?([^"'\s>]+)/gi)].map((m) => m[1]!),
    absolute: [...html.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi)].map((m) => m[0]),
  };
}

const CSP = {
  "default-src": "'none'",
  "script-src": "'self'",
  "style-src": "'self' 'unsafe-inline'",
  "img-src": "'self' data:",
  "font-src": "'self' data:",
  "connect-src": "'self'",
  "frame-ancestors": "'none'",
  "base-uri": "'none'",
  "form-action": "'self'",
};

/** The policy as a directive → sources map. */
const parseCsp = (header: string | null) =>
  Object.fromEntries((header ?? "").split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...v]) => [name, v.join(" ")]));

describe("GET /docs", () => {
  test("answers the page with no API key: HTML, the strict CSP, nosniff, revalidated every time", async () => {
    const res = await get("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8$/i);
    expect(parseCsp(res.headers.get("content-security-policy"))).toEqual(CSP);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.body.toString()).toContain('<div id="app"></div>');
  });

  test("points only at the server's own assets: root-relative URLs, no CDN, no absolute URL, no inline script or handler", async () => {
    const html = (await get("/docs")).body.toString();
    const { attributes, absolute } = urlsIn(html);
    expect(absolute).toEqual([]);
    expect(attributes.length).toBeGreaterThan(0);
    for (const url of attributes) expect(url).toMatch(/^(\/(?!\/)|data:)/);
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts.map((s) => s[1]!.match(/src="([^"?]+)/)?.[1])).toEqual(["/docs/scalar.js", "/docs/init.js"]);
    for (const script of scripts) expect(script[2]).toBe(""); // no inline code
    expect(html).not.toMatch(/\son[a-z]+\s*=/i); // no inline event handler
    expect(html).not.toMatch(/\bstyle\s*=/i);
  });

  test("the bundle's URL carries its version (the hash its ETag is made of), so an upgrade is fetched at once", async () => {
    const html = (await get("/docs")).body.toString();
    const version = html.match(/\/docs\/scalar\.js\?v=([0-9a-f]+)"/)?.[1];
    expect(version).toMatch(/^[0-9a-f]{12}$/);
    const bundle = await get(`/docs/scalar.js?v=${version}`);
    expect(bundle.headers.get("etag")).toStartWith(`"${version}`);
  });

  test("is not part of the API: no /docs path in the OpenAPI document, and /v1/docs is not a page", async () => {
    const document = await (await fetch(`${server.origin}/v1/openapi.json`)).json();
    expect(Object.keys(document.paths).filter((p) => p.includes("docs"))).toEqual([]);
    expect((await get("/v1/docs")).status).toBe(401);
  });

  test("/docs/ with a trailing slash redirects to /docs", async () => {
    const res = await fetch(`${server.origin}/docs/`, { redirect: "manual" });
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe("/docs");
  });
});

describe("GET /docs/init.js", () => {
  test("starts Scalar on the service's document with every outside call turned off, and names no outside URL", async () => {
    const res = await get("/docs/init.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(parseCsp(res.headers.get("content-security-policy"))).toEqual(CSP);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const script = res.body.toString();
    expect(urlsIn(script).absolute).toEqual([]);
    expect(script).not.toMatch(/https?:/);
    expect(script).toContain('Scalar.createApiReference("#app"');
    expect(script).toContain('url: "/v1/openapi.json"');
    for (const option of ["withDefaultFonts: false", 'showDeveloperTools: "never"', "agent: { disabled: true }", "hideClientButton: true", "telemetry: false"]) {
      expect(script).toContain(option);
    }
    expect(script).not.toContain("proxyUrl"); // unset: "Test request" goes straight to this server
  });
});

describe("GET /docs/scalar.js", () => {
  test("several first requests at once for a compressed copy all get the same bytes (compressed once)", async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => get("/docs/scalar.js", { "Accept-Encoding": "gzip" })));
    for (const a of answers) expect(a.status).toBe(200);
    expect(new Set(answers.map((a) => a.headers.get("etag"))).size).toBe(1);
    for (const a of answers) expect(a.body.equals(answers[0]!.body)).toBe(true);
  });

  test("the bundle as shipped in the package: JavaScript, a strong ETag, cacheable for a day", async () => {
    const started = performance.now();
    const res = await get("/docs/scalar.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.body.equals(BUNDLE)).toBe(true);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{24}"$/); // strong: no W/
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    console.log(`scalar.js: ${res.body.length} bytes raw in ${Math.round(performance.now() - started)} ms`);
  });

  test("If-None-Match with its ETag is 304 with no body; a stale or foreign ETag gets the bundle again", async () => {
    const etag = (await get("/docs/scalar.js")).headers.get("etag")!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await get("/docs/scalar.js", { "If-None-Match": ifNoneMatch });
      expect({ ifNoneMatch, status: res.status, bytes: res.body.length }).toEqual({ ifNoneMatch, status: 304, bytes: 0 });
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
    }
    for (const ifNoneMatch of ['"0123456789abcdef01234567"', etag.slice(0, -1) + '-gzip"']) {
      const res = await get("/docs/scalar.js", { "If-None-Match": ifNoneMatch });
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(BUNDLE.length);
    }
  });

  test.each([
    { acceptEncoding: "gzip, deflate, br, zstd", coding: "br", decode: brotliDecompressSync },
    { acceptEncoding: "gzip", coding: "gzip", decode: gunzipSync },
    { acceptEncoding: "br;q=0, gzip;q=0.8", coding: "gzip", decode: gunzipSync },
  ])("Accept-Encoding: $acceptEncoding → a $coding copy of the same bytes, under its own strong ETag, 304 on it", async ({ acceptEncoding, coding, decode }) => {
    const plain = await get("/docs/scalar.js");
    const res = await get("/docs/scalar.js", { "Accept-Encoding": acceptEncoding });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBe(coding);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
    expect(Buffer.from(decode(res.body)).equals(BUNDLE)).toBe(true);
    const etag = res.headers.get("etag")!;
    expect(etag).toBe(`${plain.headers.get("etag")!.slice(0, -1)}-${coding}"`);
    expect(res.body.length).toBeLessThan(BUNDLE.length / 3);
    console.log(`scalar.js: ${res.body.length} bytes as ${coding}`);
    const again = await get("/docs/scalar.js", { "Accept-Encoding": acceptEncoding, "If-None-Match": etag });
    expect(again.status).toBe(304);
  });

  test("Accept-Encoding that refuses every coding gets the plain bundle", async () => {
    const res = await get("/docs/scalar.js", { "Accept-Encoding": "br;q=0, gzip;q=0, deflate" });
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.body.equals(BUNDLE)).toBe(true);
  });
});
