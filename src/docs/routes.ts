import { Hono, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/env.ts";
import { scalarBundleFor, scalarBundleVersion } from "./bundle.ts";
import { docsPage, INIT_SCRIPT } from "./page.ts";

/**
 * What the reference page may load: scripts only from this server (no inline script),
 * the document and "Test request" only to this server, no frame around it. Scalar injects
 * its styles as `<style>` elements and sets `style` attributes from Vue, hence
 * `style-src 'unsafe-inline'`; its icons and generated images are `data:` URLs. No eval:
 * the one eval the bundle tries is zod's probe for its faster parser (`new Function("")`
 * in a try), which is refused (one `securitypolicyviolation` report) and falls back. No
 * worker or `blob:` script is started. The same policy, in spirit, as the admin
 * console's (docs/admin.md §3).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

/** A day: the page names the bundle by its hash (`?v=`), so an upgrade is fetched at once anyway. */
const BUNDLE_MAX_AGE = 86_400;

function docsHeaders(): MiddlewareHandler<AppEnv> {
  return async function docsHeaders(c, next) {
    await next();
    c.header("Content-Security-Policy", DOCS_CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
  };
}

/** If-None-Match against the current ETag (weak comparison, RFC 9110 §13.1.2). */
function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t.replace(/^W\//, "") === etag;
  });
}

/**
 * `GET /docs` (no key): Scalar's interactive reference of `GET /v1/openapi.json`, every
 * asset served by this process, so it works offline and from the compiled binary
 * (docs/api.md §16). Mounted outside /v1, ahead of nothing that authenticates.
 */
export function docsPages(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", docsHeaders());

  app.get("/", async (c) => {
    c.header("Cache-Control", "no-cache");
    return c.html(docsPage(await scalarBundleVersion()));
  });

  app.get("/init.js", (c) =>
    c.body(INIT_SCRIPT, 200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache" }),
  );

  app.get("/scalar.js", async (c) => {
    const variant = await scalarBundleFor(c.req.header("accept-encoding"));
    const headers: Record<string, string> = {
      ETag: variant.etag,
      "Cache-Control": `public, max-age=${BUNDLE_MAX_AGE}`,
      Vary: "Accept-Encoding",
    };
    if (notModified(c.req.header("if-none-match"), variant.etag)) return c.body(null, 304, headers);
    headers["Content-Type"] = "text/javascript; charset=utf-8";
    if (variant.encoding) headers["Content-Encoding"] = variant.encoding;
    return c.body(variant.body, 200, headers);
  });

  return app;
}
