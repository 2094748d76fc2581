/**
 * The reference page in a real browser (docs/api.md §16): headless Chromium opens /docs on
 * the real server, Scalar renders the service's own document, "Test request" reaches the
 * API from the page, every request goes to the server's origin (anything else is recorded
 * and aborted; the network is closed here anyway) and the strict CSP blocks nothing
 * Scalar needs. Screenshots at desktop and phone size land in /tmp for a person to look at.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, recordPage, type PageRecord } from "../helpers/browser.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let browser: Browser;

beforeAll(async () => {
  const started = performance.now();
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  console.log(`server and browser ready in ${Math.round(performance.now() - started)} ms`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
}, 60_000);

/**
 * The one violation the page may report: zod 4 (inside Scalar's bundle) probes once
 * whether eval is allowed (`try { new Function("") } catch {}`) to pick its faster
 * parser, and falls back when the CSP says no. Blocked, caught, nothing breaks; we keep
 * `script-src 'self'` rather than allow eval to silence it. Any other violation fails.
 */
const isZodEvalProbe = (violation: string) => /^script-src blocked eval at .*\/docs\/scalar\.js:\d+$/.test(violation);

/** The page asked for nothing outside the server, broke no CSP rule (but the probe) and threw nothing. */
function expectSelfContained(record: PageRecord) {
  expect(record.foreign).toEqual([]);
  expect(record.requests.filter((url) => new URL(url).origin !== server.origin)).toEqual([]);
  expect(record.cspViolations.filter((v) => !isZodEvalProbe(v))).toEqual([]);
  expect(record.pageErrors).toEqual([]);
  expect(record.consoleErrors).toEqual([]);
}

/** Opens /docs at the given size in a fresh context, waits for Scalar to render the document, then runs `use`. */
async function withDocs(viewport: { width: number; height: number }, use: (page: Page, record: PageRecord) => Promise<void>) {
  const phone = viewport.width < 600;
  const context = await browser.newContext({ viewport, isMobile: phone, hasTouch: phone });
  try {
    const page = await context.newPage();
    const record = await recordPage(page, server.origin);
    const started = performance.now();
    const response = await page.goto(`${server.origin}/docs`);
    expect(response?.status()).toBe(200);
    // Rendered: the document's title, and the operations of a tag further down the document.
    await page.getByRole("heading", { name: "CRM service" }).first().waitFor({ timeout: 30_000 });
    await page.getByText("/contacts/{contactId}/interactions").first().waitFor({ state: "attached", timeout: 30_000 });
    console.log(`${viewport.width}×${viewport.height}: rendered ${Math.round(performance.now() - started)} ms after navigation`);
    await use(page, record);
  } finally {
    await context.close();
  }
}

describe("GET /docs in Chromium", () => {
  test("desktop (1280×800): Scalar renders the document from the server's own assets; a tag opens on its operations", async () => {
    await withDocs({ width: 1280, height: 800 }, async (page, record) => {
      const paths = record.requests.map((url) => new URL(url).pathname);
      expect(paths).toEqual(["/docs", "/docs/scalar.js", "/docs/init.js", "/v1/openapi.json"]);
      // Every tag of the document is rendered (one read of the text: role queries over Scalar's large DOM are slow).
      const text = await page.locator("body").innerText();
      for (const tag of ["Service", "Reference data", "Contacts", "Interaction logs", "Webhooks", "Events", "Web forms"]) expect(text).toContain(tag);
      // Nothing that would hand the document to scalar.com is offered.
      expect(await page.getByText("Open API Client").count()).toBe(0);
      await page.getByRole("button", { name: /^Contacts\b/ }).first().click();
      await page.getByRole("heading", { name: "Create a contact" }).first().waitFor({ timeout: 10_000 });
      await page.screenshot({ path: "/tmp/docs-desktop.png" });
      expectSelfContained(record);
    });
  }, 60_000);

  test('desktop: "Test request" calls the API on this server, straight from the page (no proxy)', async () => {
    await withDocs({ width: 1280, height: 800 }, async (page, record) => {
      await page.getByRole("button", { name: /Test Request/ }).first().click();
      await page.getByPlaceholder("Token").first().fill(server.key);
      const answer = page.waitForResponse((res) => new URL(res.url()).pathname === "/v1/ping");
      await page.getByRole("button", { name: /^Send/ }).first().click();
      const response = await answer;
      expect(response.url()).toBe(`${server.origin}/v1/ping`);
      expect(response.status()).toBe(200);
      await page.getByText(server.projectId).first().waitFor({ timeout: 10_000 });
      expectSelfContained(record);
    });
  }, 60_000);

  test("phone (390×844): the same page, laid out for a small screen", async () => {
    await withDocs({ width: 390, height: 844 }, async (page, record) => {
      await page.screenshot({ path: "/tmp/docs-phone.png" });
      // No sideways scrolling on a phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expectSelfContained(record);
    });
  }, 60_000);
});
