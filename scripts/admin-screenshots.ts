/**
 * Screenshots of every kind of page of the admin console (docs/admin.md §3), for a person to
 * review, at 1280 px and at 390 px (a phone):
 *
 *   bun scripts/admin-screenshots.ts [outDir]      (npm run admin:screenshots; default /tmp/admin-screens)
 *
 * Starts a server on a fresh SQLite database (sandbox, so webhooks may go to loopback
 * receivers), shoots the setup and sign-in pages, fills a project as an operator's would be
 * (test/helpers/console-seed.ts, the browser tests' seeding), then crawls the console from
 * /admin/projects as test/browser/admin-phone.test.ts does and writes a full-page PNG of
 * each kind of page as `<page>-1280.png` and `<page>-390.png`. Then the states no link leads
 * to: forms refused, a key shown once, confirmation pages, an import's preview. For each shot
 * it notes, in summary.json and on stdout, what a machine can see: sideways scrolling, the
 * phone's navigation rows, controls without a name, not exactly one h1, requests leaving the
 * server, CSP violations, console and page errors.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { AdminClient, createAdminAccount } from "../test/helpers/admin.ts";
import { launchBrowser, recordPage, type PageRecord } from "../test/helpers/browser.ts";
import { seedConsole, type ConsoleSeed } from "../test/helpers/console-seed.ts";
import { consolePattern, crawlConsole, linksOf, navRows, sidewaysScroll, signInPage } from "../test/helpers/console-pages.ts";
import { startServer, type ServerHandle } from "../test/helpers/server.ts";
import { HUBSPOT_CSV, IMPORT_CSV } from "./admin-screenshots-data.ts";

const outDir = process.argv[2] ?? "/tmp/admin-screens";
const WAIT = 15_000;

interface Viewer {
  width: 1280 | 390;
  context: BrowserContext;
  page: Page;
  record: PageRecord;
  /** How much of `record` earlier shots accounted for. */
  seen: number[];
}
interface Shot {
  file: string;
  url: string;
  status: number | null;
  problems: string[];
}

const shots: Shot[] = [];
const failures: string[] = [];
const names = new Set<string>();
let server!: ServerHandle;
let browser!: Browser;
let seed: ConsoleSeed | undefined;

/** A file name for a kind of page: `/admin/projects/:id/contacts/:contact?sort` → `project-contacts-contact-sort`. */
function pageName(kind: string): string {
  const [path, query] = kind.split("?");
  const parts = path!.replace(/^\/admin\/?/, "").replace(/^projects\/:id/, "project").split("/").filter(Boolean).map((s) => s.replace(/^:/, ""));
  if (parts.length === 1 && parts[0] === "project") parts.push("home");
  return [...parts, ...(query ? query.split("&") : [])].join("-").replace(/[^A-Za-z0-9-]+/g, "-") || "admin";
}
const unique = (name: string) => {
  let n = name;
  for (let i = 2; names.has(n); i++) n = `${name}-${i}`;
  names.add(n);
  return n;
};

const mark = (r: PageRecord) => [r.requests.length, r.cspViolations.length, r.consoleErrors.length, r.pageErrors.length];

/** What the page shows that a machine can judge. */
async function audit(v: Viewer): Promise<string[]> {
  const problems = await sidewaysScroll(v.page);
  if (v.width === 390 && (await navRows(v.page)) > 2) problems.push(`the project's navigation takes ${await navRows(v.page)} rows`);
  const facts = await v.page.evaluate(() => {
    const controls = Array.from(document.querySelectorAll("input, select, textarea, button")).filter((c) => (c as HTMLInputElement).type !== "hidden");
    const unnamed = controls
      .filter((c) => {
        if (c.getAttribute("aria-label") || c.getAttribute("aria-labelledby")) return false;
        if (c.tagName === "BUTTON") return (c.textContent ?? "").trim() === "";
        const labels = (c as HTMLInputElement).labels;
        return !labels || labels.length === 0;
      })
      .map((c) => `${c.tagName.toLowerCase()}[name=${c.getAttribute("name")}]`);
    return { h1: document.querySelectorAll("h1").length, unnamed };
  });
  if (facts.h1 !== 1) problems.push(`${facts.h1} h1 elements`);
  if (facts.unnamed.length) problems.push(`controls without a name: ${facts.unnamed.join(", ")}`);
  const r = v.record;
  const [requests, csp, consoleErrors, pageErrors] = v.seen;
  const foreign = r.requests.slice(requests).filter((u) => !u.startsWith("data:") && new URL(u).origin !== server.origin);
  if (foreign.length) problems.push(`requests leaving the server: ${foreign.join(", ")}`);
  for (const c of r.cspViolations.slice(csp)) problems.push(`CSP: ${c}`);
  // A page answering 4xx (a refused form, a page not found) logs its status: expected of those states.
  for (const c of r.consoleErrors.slice(consoleErrors)) if (!/status of 4\d\d/.test(c)) problems.push(`console: ${c}`);
  for (const c of r.pageErrors.slice(pageErrors)) problems.push(`page error: ${c}`);
  v.seen = mark(r);
  return problems;
}

/** Screenshots what `v` shows now as `<name>-<width>.png`. */
async function shoot(v: Viewer, name: string, status: number | null) {
  await v.page.waitForLoadState("load");
  const file = `${name}-${v.width}.png`;
  const problems = await audit(v);
  await v.page.screenshot({ path: join(outDir, file), fullPage: true });
  shots.push({ file, url: v.page.url(), status, problems });
  console.log(`${file}${problems.length ? `\n  ! ${problems.join("\n  ! ")}` : ""}`);
}

/** One page or state at both widths: `act` brings each viewer there (a goto, or filling and sending a form). */
async function state(viewers: Viewer[], name: string, act: (page: Page) => Promise<unknown>) {
  const n = unique(name);
  for (const v of viewers) {
    try {
      const res = await act(v.page);
      const status = res && typeof res === "object" && "status" in res ? (res as { status(): number }).status() : null;
      await shoot(v, n, status);
    } catch (error) {
      failures.push(`${n} (${v.width}): ${String(error).split("\n")[0]}`);
      console.log(`!! ${n} (${v.width}) failed: ${String(error).split("\n")[0]}`);
    }
  }
}

const go = (path: string) => (page: Page) => page.goto(path.startsWith("http") ? path : server.origin + path);
const h1 = (page: Page) => page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: WAIT });
const click = async (page: Page, name: string | RegExp, role: "button" | "link" = "button") => {
  await page.getByRole(role, { name, exact: typeof name === "string" }).first().click();
  await h1(page);
};
const upload = async (page: Page, base: string, name: string, csv: string) => {
  await page.goto(`${server.origin}${base}/import`);
  await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name, mimeType: "text/csv", buffer: Buffer.from(csv) });
  await click(page, "Upload");
};

async function main() {
  mkdirSync(outDir, { recursive: true });
  [server, browser] = await Promise.all([
    startServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1h", CRM_OUTBOX_POLL_MS: "50" } }),
    launchBrowser(),
  ]);
  const viewers: Viewer[] = [];
  for (const width of [1280, 390] as const) {
    const context = await browser.newContext(width === 390 ? { viewport: { width, height: 844 }, isMobile: true, hasTouch: true } : { viewport: { width, height: 800 } });
    context.setDefaultTimeout(WAIT);
    const page = await context.newPage();
    const record = await recordPage(page, server.origin);
    viewers.push({ width, context, page, record, seen: mark(record) });
  }
  const [desktop] = viewers as [Viewer, Viewer];

  // Before any admin exists: the setup page and the sign-in page's hint.
  const setup = /\/admin\/setup\?token=\S+/.exec(server.stdout())?.[0];
  if (setup) await state(viewers, "setup", async (page) => (await go(setup)(page), h1(page)));
  await state(viewers, "sign-in-before-setup", go("/admin/sign-in"));
  const account = await createAdminAccount(server.env, { email: "ops.lead@acme-sales.example" });
  await state(viewers, "sign-in", go("/admin/projects"));
  await state(viewers, "sign-in-wrong-password", async (page) => {
    await page.getByLabel("Email", { exact: true }).fill(account.email);
    await page.getByLabel("Password", { exact: true }).fill("not my password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("alert").waitFor({ timeout: WAIT });
  });

  const admin = new AdminClient(server.origin);
  await admin.signIn(account.email, account.password);
  seed = await seedConsole(server, admin);
  failures.push(...seed.problems.map((p) => `seeding: ${p}`));
  for (const v of viewers) await signInPage(v.page, server.origin, account);
  const base = `/admin/projects/${seed.project.id}`;

  // Every kind of page a link leads to, once (twice for a contact: a busy one and a long one).
  const start = [
    "/admin/projects",
    base,
    `${base}/contacts/${seed.busyContact}`,
    `${base}/contacts/${seed.longContact}`,
    `${base}/contacts/${seed.deletedContact}`,
    `${base}/duplicates/compare?ids=${seed.duplicatePair.join(",")}`,
    `${base}/webhooks/${seed.webhooks.failing.id}`,
    ...(seed.importPath ? [seed.importPath] : []),
  ].map((p) => server.origin + p);
  const kinds = await crawlConsole({
    origin: server.origin,
    start,
    max: 80,
    perKind: 1,
    probe: (url) => desktop.context.request.get(url),
    visit: async (url) => {
      await state(viewers, pageName(consolePattern(url)), go(url));
      return linksOf(desktop.page);
    },
  });
  for (const [name, path] of [
    ["project-contacts-contact-long", `${base}/contacts/${seed.longContact}`],
    ["project-contacts-contact-deleted", `${base}/contacts/${seed.deletedContact}`],
    ["project-contacts-contact-merged-away", `${base}/contacts/${seed.merged.mergedAway}`],
    ["public-form", `/f/${seed.formId}`],
    ["not-found", "/admin/no-such-page"],
    ["no-such-contact", `${base}/contacts/CR-999999`],
  ] as const) await state(viewers, name, go(path));

  // States no link leads to.
  await state(viewers, "projects-error", async (page) => {
    await go("/admin/projects")(page);
    await page.getByLabel("Name", { exact: true }).fill("   ");
    await click(page, "Create project");
  });
  await state(viewers, "project-keys-created", async (page) => {
    await go(`${base}/keys`)(page);
    await page.getByLabel("Name", { exact: true }).fill(`Zapier (${page.viewportSize()!.width} px)`);
    await page.getByLabel("contacts:read", { exact: true }).check();
    await click(page, "Create key");
  });
  await state(viewers, "project-keys-revoke-confirm", async (page) => {
    await go(`${base}/keys`)(page);
    await page.getByRole("row", { name: /Zapier/ }).first().getByRole("button", { name: "Revoke" }).click();
    await h1(page);
  });
  await state(viewers, "project-contacts-new-error", async (page) => {
    await go(`${base}/contacts/new`)(page);
    await page.getByLabel("Email", { exact: true }).fill("not-an-email");
    await click(page, "Save");
  });
  await state(viewers, "project-contacts-contact-delete-confirm", async (page) => {
    await go(`${base}/contacts/${seed!.busyContact}`)(page);
    await click(page, /^Delete/);
  });
  await state(viewers, "project-contacts-bulk-delete-confirm", async (page) => {
    await go(`${base}/contacts`)(page);
    const boxes = page.getByRole("region", { name: "Contacts" }).getByRole("checkbox", { name: /^Select / });
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await click(page, /^Delete/);
  });
  await state(viewers, "project-duplicates-merge-confirm", async (page) => {
    await go(`${base}/duplicates/compare?ids=${seed!.duplicatePair.join(",")}`)(page);
    await click(page, "Merge");
  });
  await state(viewers, "project-webhooks-rotate-confirm", async (page) => {
    await go(`${base}/webhooks/${seed!.webhooks.succeeding.id}`)(page);
    await click(page, "Rotate secret");
  });
  await state(viewers, "project-webhooks-secret-rotated", (page) => click(page, "Rotate secret"));
  await state(viewers, "project-webhooks-delete-confirm", async (page) => {
    await go(`${base}/webhooks/${seed!.webhooks.succeeding.id}`)(page);
    await click(page, /^Delete/);
  });
  await state(viewers, "project-import-preview-hubspot", (page) => upload(page, base, "hubspot-contacts.csv", HUBSPOT_CSV));
  await state(viewers, "project-import-preview-bad-values", (page) => upload(page, base, "trade-show-leads-2024.csv", IMPORT_CSV));
  await state(viewers, "project-import-error", (page) => upload(page, base, "empty.csv", ""));

  writeFileSync(join(outDir, "summary.json"), JSON.stringify({ kinds: [...kinds.keys()], shots, failures }, null, 2));
  const flagged = shots.filter((s) => s.problems.length);
  console.log(`\n${shots.length} screenshots of ${kinds.size} kinds of page in ${outDir}; ${flagged.length} with problems a machine can see; ${failures.length} steps failed.`);
  for (const f of failures) console.log(`  failed: ${f}`);
}

try {
  await main();
} finally {
  await browser?.close();
  for (const r of seed?.receivers ?? []) await r.stop();
  await server?.stop();
}
