/**
 * Every console page at 390 px and at 1280 px (docs/admin.md: "usable on a phone"; §3: nothing
 * scrolls sideways at 390 px, tables included). A project is filled as an operator's would be
 * (test/helpers/console-seed.ts), then headless Chromium crawls the console from
 * /admin/projects, following every same-origin link under /admin (GET only; no sign-out, no
 * downloads), each kind of page (its address with ids replaced) once or twice. At both widths
 * each page answers 200, does not scroll sideways (neither the page nor anything inside it,
 * its disclosures opened; nothing cut off either),
 * asks for nothing outside the server, breaks no CSP rule and logs or throws no error; at
 * 390 px the project's navigation takes at most two rows. The assertion lists every page
 * that fails, with why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { AdminClient, createAdminAccount } from "../helpers/admin.ts";
import { launchBrowser, recordPage, type PageRecord } from "../helpers/browser.ts";
import { seedConsole, uploadCsv, type ConsoleSeed } from "../helpers/console-seed.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { crawlConsole, linksOf, navRows, openDisclosures, sidewaysScroll, signInPage } from "../helpers/console-pages.ts";

let server: ServerHandle;
let browser: Browser;
let seed: ConsoleSeed;
let account: { email: string; password: string };
/** An upload not started: its preview, with the columns, the values checked and the rows that would be rejected. */
let previewPath: string;

/** At most this many pages, and each kind of page at most twice. */
const MAX_PAGES = 80;
const PER_KIND = 2;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1h", CRM_OUTBOX_POLL_MS: "50" } }),
    launchBrowser(),
  ]);
  account = await createAdminAccount(server.env);
  const admin = new AdminClient(server.origin);
  await admin.signIn(account.email, account.password);
  seed = await seedConsole(server, admin);
  const csv = [
    "First Name,Last Name,Email,Phone Number,Company Name,Website URL,Street Address,State/Region,Lifecycle Stage",
    "Mae,Jemison,mae.jemison@example.org,+1 312 555 0142,Jemison Group,https://jemison.example,5 Space Way,IL,Lead",
    ",,,,,,,,",
    "Mary,Jackson,mary.jackson(at)example.org,,,,,VA,Customer",
    "Oluwaseun,Adeyemi-Bankole,oluwaseun.adeyemi-bankole@long-company-domain-name.example.com,,Adeyemi-Bankole Renewable Energy Cooperative,,,,Prospect",
  ].join("\n");
  previewPath = await uploadCsv(admin, server.origin, seed.project.id, csv, "hubspot-export-with-a-rather-long-file-name.csv");
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const r of seed?.receivers ?? []) await r.stop();
  await server?.stop();
}, 60_000);

interface Viewer {
  width: number;
  context: BrowserContext;
  page: Page;
  record: PageRecord;
}

/** What the page did since `mark` (the record's lengths then). */
function since(record: PageRecord, mark: number[], origin: string): string[] {
  const [requests, foreign, csp, consoleErrors, pageErrors] = mark;
  const out: string[] = [];
  const outside = [...record.foreign.slice(foreign), ...record.requests.slice(requests).filter((u) => !u.startsWith("data:") && new URL(u).origin !== origin)];
  if (outside.length) out.push(`requests outside the server: ${[...new Set(outside)].join(", ")}`);
  for (const c of record.cspViolations.slice(csp)) out.push(`CSP violation: ${c}`);
  for (const c of record.consoleErrors.slice(consoleErrors)) out.push(`console error: ${c}`);
  for (const c of record.pageErrors.slice(pageErrors)) out.push(`page error: ${c}`);
  return out;
}
const markOf = (r: PageRecord) => [r.requests.length, r.foreign.length, r.cspViolations.length, r.consoleErrors.length, r.pageErrors.length];

describe("every console page at 390 px and 1280 px", () => {
  test("the seeding made everything the crawl needs", () => {
    expect(seed.problems).toEqual([]);
  });

  test("every page answers 200, scrolls sideways at neither width (nor anything inside it), stays on the server, breaks no CSP rule and logs no error; at 390 px the project's navigation takes at most two rows", async () => {
    const viewers: Viewer[] = [];
    for (const width of [1280, 390]) {
      const context = await browser.newContext(width === 390 ? { viewport: { width, height: 844 }, isMobile: true, hasTouch: true } : { viewport: { width, height: 800 } });
      const page = await context.newPage();
      viewers.push({ width, context, page, record: await recordPage(page, server.origin) });
    }
    try {
      for (const v of viewers) await signInPage(v.page, server.origin, account);
      const base = `/admin/projects/${seed.project.id}`;
      // Pages no link may lead to from the first pages, and the values the seeding made long or busy.
      const start: string[] = [
        "/admin/projects",
        base,
        `${base}/contacts/${seed.longContact}`,
        `${base}/contacts/${seed.busyContact}`,
        `${base}/contacts/${seed.merged.survivor}`,
        `${base}/contacts/${seed.deletedContact}`,
        `${base}/contacts?sort=name&limit=10`,
        `${base}/duplicates/compare?ids=${seed.duplicatePair.join(",")}`,
        `${base}/webhooks/${seed.webhooks.failing.id}`,
        `${base}/webhooks/${seed.webhooks.succeeding.id}`,
        ...(seed.importPath ? [seed.importPath] : []),
        previewPath,
      ].map((p) => server.origin + p);
      const failures: string[] = [];
      const [desktop, phone] = viewers as [Viewer, Viewer];
      const kinds = await crawlConsole({
        origin: server.origin,
        start,
        max: MAX_PAGES,
        perKind: PER_KIND,
        probe: (url) => desktop.context.request.get(url),
        visit: async (url) => {
          const path = new URL(url).pathname + new URL(url).search;
          for (const v of [desktop, phone]) {
            const mark = markOf(v.record);
            const problems: string[] = [];
            try {
              const res = await v.page.goto(url, { waitUntil: "load" });
              if (res?.status() !== 200) problems.push(`answered ${res?.status()}`);
              if (v.width === 390) {
                const rows = await navRows(v.page);
                if (rows > 2) problems.push(`the project's navigation takes ${rows} rows`);
              }
              await openDisclosures(v.page);
              problems.push(...(await sidewaysScroll(v.page)));
            } catch (error) {
              problems.push(`did not load: ${String(error).split("\n")[0]}`);
            }
            problems.push(...since(v.record, mark, server.origin));
            if (problems.length) failures.push(`${path} at ${v.width} px: ${problems.join("; ")}`);
          }
          // Links of the wide page (the phone's menu holds the same ones).
          return linksOf(desktop.page);
        },
      });
      const visited = [...kinds.values()].flat();
      console.log(`crawled ${visited.length} pages of ${kinds.size} kinds:\n  ${[...kinds.keys()].join("\n  ")}`);
      expect(failures, `pages that fail:\n${failures.join("\n")}`).toEqual([]);
      expect(visited).toContain(server.origin + previewPath); // the preview of an upload not started
      // The crawl reached the console's sections (a broken navigation would show as a short crawl).
      expect(kinds.size).toBeGreaterThanOrEqual(20);
    } finally {
      for (const v of viewers) await v.context.close();
    }
  }, 420_000);
});
