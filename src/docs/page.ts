/**
 * The reference page's two small texts (docs/api.md §16): the HTML shell and the script that
 * starts Scalar on it. No inline script or handler, so the page runs under
 * `script-src 'self'` (see routes.ts), and no absolute URL: every asset and the document
 * come from this server.
 */

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

/**
 * The page: an empty mount point, the bundle (its URL carries the bundle's hash, so an
 * upgrade is fetched at once despite the cache) and the start script. The `data:` icon
 * keeps the browser from asking for /favicon.ico.
 */
export function docsPage(bundleVersion: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>CRM service API reference</title>
<link rel="icon" href="data:,">
<script src="/docs/scalar.js?v=${escape(bundleVersion)}" defer></script>
<script src="/docs/init.js" defer></script>
</head>
<body>
<noscript><p>This reference needs JavaScript. The OpenAPI document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></noscript>
<div id="app"></div>
</body>
</html>
`;
}

/**
 * Starts Scalar on the page with every option that would reach outside the origin turned
 * off (read from the 1.46.4 bundle's configuration schema):
 * - `withDefaultFonts: false`: no Inter from fonts.scalar.com; the system's sans-serif.
 * - `showDeveloperTools: "never"`: no toolbar; it is on by default on localhost and its
 *   "share" uploads the document to api.scalar.com / registry.scalar.com.
 * - `agent.disabled`: no "Ask AI" chat (api.scalar.com), also on by default on localhost.
 * - `hideClientButton`: no "Open API Client" link, which hands the document's URL to
 *   client.scalar.com; "Test request" stays, in the page.
 * - `telemetry: false`.
 * - `proxyUrl` left unset: "Test request" goes straight to this server (proxy.scalar.com
 *   is used only when it is set).
 */
export const INIT_SCRIPT = `"use strict";
// The API reference of this service (docs/api.md §16); nothing here leaves this server.
Scalar.createApiReference("#app", {
  url: "/v1/openapi.json",
  withDefaultFonts: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  hideClientButton: true,
  telemetry: false,
  documentDownloadType: "json",
});
`;
