/**
 * A real browser for the tests of the server's pages (docs/admin.md §3, docs/api.md §16): headless
 * Chromium from `@sparticuz/chromium` (the build ships inside the npm package, so `npm ci`
 * is the whole install and it starts offline), driven by `playwright-core`. Plus a
 * recorder of what a page did: every request, CSP violation, console error and uncaught
 * error, so a test can assert that nothing left the server's origin.
 */
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser, type Page } from "playwright-core";
import { rmSync } from "node:fs";

/**
 * Flags of `chromium.args` that weaken the page's security (meant for scraping on Lambda):
 * dropped, so the browser enforces the same-origin policy and mixed-content rules as a
 * user's would, and a test sees what a user's browser would block.
 */
const WEAKENING = new Set(["--disable-web-security", "--allow-running-insecure-content", "--disable-site-isolation-trials"]);

/**
 * `--single-process` (needed on Lambda only) ends the whole browser when a context
 * closes, so one browser could not serve several tests; here the renderer runs in its own
 * process as in a user's browser.
 */
const LAMBDA_ONLY = new Set(["--single-process"]);

/**
 * Nothing but the page's own traffic: no update checks, sync, component downloads or QUIC
 * probes, which would only wait on a network that is closed here. We run as root, hence
 * no sandbox; /dev/shm may be small in a container.
 */
const OFFLINE = [
  "--no-sandbox",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--disable-default-apps",
  "--disable-extensions",
  "--metrics-recording-only",
];

/**
 * Starts headless Chromium. The first call on a machine inflates the browser from the
 * package into the temporary folder (a few seconds), later ones reuse it; a copy left
 * broken by an interrupted inflate is removed and inflated again once. The caller closes
 * the browser (afterAll), whatever happened.
 */
export async function launchBrowser(): Promise<Browser> {
  chromium.setGraphicsMode = false; // no WebGL needed: skips inflating SwiftShader
  const launch = async () =>
    playwright.launch({
      executablePath: await chromium.executablePath(),
      args: [...chromium.args.filter((arg) => !WEAKENING.has(arg) && !LAMBDA_ONLY.has(arg)), ...OFFLINE],
      headless: true,
      timeout: 60_000,
    });
  try {
    return await launch();
  } catch (error) {
    const path = await chromium.executablePath();
    console.warn(`launching ${path} failed (${String(error).split("\n")[0]}); inflating it again`);
    rmSync(path, { force: true });
    return launch();
  }
}

/** What one page did, as recorded by {@link recordPage}. */
export interface PageRecord {
  /** Every URL the page asked for (documents, scripts, fetches, images, …), in order. */
  requests: string[];
  /** Requests, WebSockets and workers whose origin is not the server's (aborted, not sent). */
  foreign: string[];
  /** `securitypolicyviolation` events, as `DIRECTIVE blocked URI at FILE:LINE`, and the console's CSP messages. */
  cspViolations: string[];
  /** console.error messages (CSP messages included). */
  consoleErrors: string[];
  /** Uncaught exceptions of the page. */
  pageErrors: string[];
}

/**
 * Records what `page` does and aborts every request that would leave `origin` (it is
 * recorded in `foreign` first), so a test can assert the page needs nothing from outside.
 * Call before the first `goto`.
 */
export async function recordPage(page: Page, origin: string): Promise<PageRecord> {
  const record: PageRecord = { requests: [], foreign: [], cspViolations: [], consoleErrors: [], pageErrors: [] };
  const sameOrigin = (url: string) => url.startsWith("data:") || new URL(url).origin === origin;
  page.on("request", (request) => record.requests.push(request.url()));
  page.on("websocket", (socket) => {
    if (!sameOrigin(socket.url().replace(/^ws/, "http"))) record.foreign.push(socket.url());
  });
  page.on("worker", (worker) => {
    if (!sameOrigin(worker.url())) record.foreign.push(worker.url()); // a blob: URL carries its creator's origin
  });
  page.on("console", (message) => {
    const text = message.text();
    if (message.type() === "error") record.consoleErrors.push(text);
    if (/Content Security Policy/i.test(text)) record.cspViolations.push(text);
  });
  page.on("pageerror", (error) => record.pageErrors.push(String(error)));
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (sameOrigin(url)) return route.continue();
    record.foreign.push(url);
    return route.abort("blockedbyclient");
  });
  await page.exposeFunction("__recordCspViolation", (text: string) => record.cspViolations.push(text));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      const report = (window as unknown as { __recordCspViolation: (text: string) => void }).__recordCspViolation;
      report(`${event.effectiveDirective} blocked ${event.blockedURI || "(inline)"} at ${event.sourceFile}:${event.lineNumber}`);
    });
  });
  return record;
}
