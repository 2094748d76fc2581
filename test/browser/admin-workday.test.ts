/**
 * An operator's working day in the console, in a real browser (docs/admin.md §3–§4): sign in,
 * the projects, a project's Home (totals, charts drawn as SVG with a text alternative), the contacts list (total, sort, next and previous pages, two selected and
 * tagged, one deleted after a confirmation), a contact's page (an interaction of a type
 * other than note added and shown on the timeline; the contact deleted and restored),
 * reference data (a tag renamed), webhooks (a subscription's URL edited; attempts naming
 * their events), API keys (a key shown once with a copy button, gone on reload, revoked
 * after a confirmation) and an import (a HubSpot-style CSV uploaded, previewed, started,
 * summed up). Found by accessible names only; each step checked through the API where it
 * matters. Each step is a test of its own, from the project's Home, so one broken page
 * does not hide the others.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { AdminClient, createAdminAccount } from "../helpers/admin.ts";
import { launchBrowser, recordPage, type PageRecord } from "../helpers/browser.ts";
import { seedConsole, type ConsoleSeed } from "../helpers/console-seed.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let browser: Browser;
let seed: ConsoleSeed;
let account: { email: string; password: string };
let context: BrowserContext;
let page: Page;
let record: PageRecord;

const WAIT = 10_000;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1h", CRM_OUTBOX_POLL_MS: "50" } }),
    launchBrowser(),
  ]);
  account = await createAdminAccount(server.env);
  const admin = new AdminClient(server.origin);
  await admin.signIn(account.email, account.password);
  seed = await seedConsole(server, admin, { name: "Acme Sales" });
  // Enough contacts for more than one page of the list.
  const items = Array.from({ length: 60 }, (_, i) => ({ firstName: `Lead ${String(i).padStart(2, "0")}`, lastName: "Batch", email: `lead${i}.batch@example.org` }));
  const batch = await seed.project.api("POST", "/contacts/batch", { body: { operation: "create", items } });
  if (batch.status !== 200) throw new Error(`batch: ${batch.status} ${batch.text.slice(0, 300)}`);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ["clipboard-read", "clipboard-write"] });
  page = await context.newPage();
  record = await recordPage(page, server.origin);
}, 240_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  for (const r of seed?.receivers ?? []) await r.stop();
  await server?.stop();
}, 60_000);

const api = (method: string, path: string, body?: unknown) => seed.project.api(method, path, { body });
const h1 = (name: string | RegExp) => page.getByRole("heading", { level: 1, name, exact: typeof name === "string" }).waitFor({ timeout: WAIT });
const button = (name: string | RegExp, scope: Page | Locator = page) => scope.getByRole("button", { name, exact: typeof name === "string" });
const link = (name: string | RegExp, scope: Page | Locator = page) => scope.getByRole("link", { name, exact: typeof name === "string" });
/** A link of the project's navigation (on a wide screen, its row of links). */
const nav = (name: string) => page.getByRole("navigation").getByRole("link", { name, exact: true }).first();
/** The project's Home, as an operator opens it from the projects. */
async function home() {
  await page.goto(`${server.origin}/admin/projects`);
  await h1("Projects");
  await link(seed.project.name).first().click();
  await h1(seed.project.name);
}
async function section(name: string, heading: string | RegExp = name) {
  await home();
  await nav(name).click();
  await h1(heading);
}
/** A contact's tag names, as the API answers them. */
const tagNames = (contact: { tags: Array<{ name: string } | string> }) => contact.tags.map((t) => (typeof t === "string" ? t : t.name));

describe("an operator's day in the console (Chromium, 1280 px)", () => {
  test("seeding made everything the day needs", () => {
    expect(seed.problems).toEqual([]);
  });

  test("signs in and lands on the projects, each linking to its Home", async () => {
    await page.goto(`${server.origin}/admin`);
    await h1("Sign in");
    await page.getByLabel("Email", { exact: true }).fill(account.email);
    await page.getByLabel("Password", { exact: true }).fill(account.password);
    await button("Sign in").click();
    await h1("Projects");
    await link(seed.project.name).first().click();
    await h1(seed.project.name);
    expect(new URL(page.url()).pathname).toBe(`/admin/projects/${seed.project.id}`);
  });

  test("Home shows the totals, charts drawn as SVG with a text alternative, webhook health and the latest changes", async () => {
    await home();
    const main = page.getByRole("main");
    // Totals: the project's live contacts (the seeding's and the batch's; the merged-away and the deleted one left out).
    const totals = page.getByRole("region", { name: "Contact totals" });
    expect((await totals.innerText()).replace(/\s+/g, " ")).toContain(`All ${seed.liveContacts + 60}`);
    // Charts: SVG drawn by the server (no script), each an image named by its title and a sentence, with the figures as a table too.
    for (const heading of ["New contacts per day", "New interactions per day"]) {
      const chart = page.getByRole("img", { name: new RegExp(`^${heading}, .* in the last 30 days`) });
      expect(await chart.evaluate((e) => e.tagName.toLowerCase())).toBe("svg");
      expect(await chart.isVisible()).toBe(true);
      expect((await chart.boundingBox())!.width).toBeGreaterThan(200);
      expect(await chart.locator("rect[height]:not([fill=transparent])").count()).toBeGreaterThan(0); // today's bar
      expect(await page.getByRole("table", { name: `${heading}: per day`, includeHidden: true }).getByRole("row", { includeHidden: true }).count()).toBe(31);
    }
    // Webhook health: both subscriptions, each with its own chart.
    const health = page.getByRole("region", { name: /Webhook health/ });
    for (const hook of [seed.webhooks.failing, seed.webhooks.succeeding]) await link(hook.description, health).waitFor({ timeout: WAIT });
    expect(await health.locator("svg[role=img]").count()).toBeGreaterThanOrEqual(2);
    // The latest changes: the batch's contacts, each linking to its contact.
    const changes = page.getByRole("region", { name: "Latest changes" });
    expect(await changes.getByRole("link", { name: /^Lead \d\d Batch$/ }).count()).toBe(20);
    expect(await main.locator("script").count()).toBe(0);
  });

  test("the contacts list shows the total, sorts by name, pages forward and back, tags two selected contacts and deletes one after a confirmation", async () => {
    await section("Contacts");
    const main = page.getByRole("main");
    await main.getByText(`${seed.liveContacts + 60} contacts`, { exact: true }).waitFor({ timeout: WAIT });

    // Sort by name (last name first): Frances Allen leads.
    await page.getByLabel("Sort by", { exact: true }).selectOption({ label: "Name (A–Z)" });
    await button("Search").click();
    await h1("Contacts");
    expect(page.url()).toMatch(/sort=name/);
    const table = page.getByRole("region", { name: "Contacts" });
    const firstRow = () => table.getByRole("row").nth(1).innerText();
    expect(await firstRow()).toContain("Frances Allen");

    // Next page and back.
    await link("Next page").click();
    await h1("Contacts");
    expect(await firstRow()).not.toContain("Frances Allen");
    await link("Previous page").click();
    await h1("Contacts");
    expect(await firstRow()).toContain("Frances Allen");

    // Names link to the contacts' pages.
    expect(await link("Frances Allen", table).getAttribute("href")).toMatch(/\/contacts\/CR-\d+$/);

    // Select two contacts and add a tag to both.
    const boxes = table.getByRole("checkbox", { name: /^Select / });
    const ids: string[] = [];
    for (const box of [boxes.nth(0), boxes.nth(1)]) {
      await box.check();
      ids.push((await box.getAttribute("value"))!);
    }
    expect(ids.every((id) => /^CR-\d+$/.test(id))).toBe(true);
    await page.getByLabel("Tag to add or remove", { exact: true }).fill("spring-campaign");
    await button("Add tag").click();
    await h1("Contacts");
    for (const id of ids) expect(tagNames((await api("GET", `/contacts/${id}`)).json)).toContain("spring-campaign");

    // Delete one selected contact: a confirmation first; the contact is gone from the API after it.
    const doomedBox = table.getByRole("checkbox", { name: /^Select / }).nth(2);
    const doomed = (await doomedBox.getAttribute("value"))!;
    await doomedBox.check();
    await button("Delete selected").click();
    await h1("Delete 1 contact?");
    expect((await api("GET", `/contacts/${doomed}`)).status).toBe(200); // not yet: asked first
    await button("Delete contacts").click();
    await h1("Contacts");
    expect((await api("GET", `/contacts/${doomed}`)).status).toBe(404);
  });

  test("a contact's page adds a call with its fields to the timeline, then deletes the contact after a confirmation and restores it", async () => {
    await section("Contacts");
    await page.getByLabel("Search", { exact: true }).fill("Katherine");
    await button("Search").click();
    const name = "Katherine Johnson";
    await link(name).first().click();
    await h1(name);
    const contactId = /\/contacts\/(CR-\d+)/.exec(page.url())![1]!;

    await page.getByText("Log a call, meeting or other interaction", { exact: true }).click();
    const form = page.getByRole("form", { name: "Add interaction" });
    await form.getByLabel("Type", { exact: true }).selectOption({ label: "Call" });
    await form.getByLabel("Notes", { exact: true }).fill("Renewal call: they will add 12 seats in May.");
    await form.getByLabel("Fields", { exact: true }).fill("outcome: renewing\nduration: 15 min");
    await button("Add interaction", form).click();
    await h1(name);
    const timeline = page.getByRole("region", { name: "Timeline" });
    await timeline.getByText("Renewal call: they will add 12 seats in May.").first().waitFor({ timeout: WAIT });
    const entry = await timeline.getByRole("listitem").filter({ hasText: "Renewal call" }).first().innerText();
    expect(entry).toContain("Call");
    expect(entry).toContain("renewing");
    const logs = (await api("GET", `/contacts/${contactId}/interactions`)).json.data;
    expect(logs[0]).toMatchObject({ note: "Renewal call: they will add 12 seats in May.", fields: { outcome: "renewing", duration: "15 min" } });

    // Delete (asked first), then Restore.
    await button("Delete", page.getByRole("form", { name: "Delete contact" })).click();
    await h1(`Delete ${name}?`);
    expect((await api("GET", `/contacts/${contactId}`)).status).toBe(200);
    await button("Delete contact").click();
    await h1(/^Katherine Johnson\s+In the trash$/);
    expect((await api("GET", `/contacts/${contactId}`)).status).toBe(404);
    await button("Restore").click();
    await h1(name);
    expect((await api("GET", `/contacts/${contactId}`)).status).toBe(200);
  });

  test("reference data renames a tag; contacts carry the new name", async () => {
    await section("Reference data");
    await link("Edit vip").click();
    await page.getByRole("heading", { level: 1 }).waitFor({ timeout: WAIT });
    await page.getByLabel("Name", { exact: true }).fill("very-important");
    await button("Rename tag").click();
    await page.getByRole("heading", { level: 1 }).waitFor({ timeout: WAIT });
    const tags = (await api("GET", "/tags")).json.data.map((t: { name: string }) => t.name);
    expect(tags).toContain("very-important");
    expect(tags).not.toContain("vip");
    expect(tagNames((await api("GET", `/contacts/${seed.longContact}`)).json)).toContain("very-important");
  });

  test("a subscription's page lists attempts by event name, marks the failures, and its URL can be edited", async () => {
    await section("Webhooks");
    await link(seed.webhooks.failing.description).click();
    await h1(seed.webhooks.failing.description);
    const attempts = page.getByRole("region", { name: "Attempts, newest first" });
    await attempts.waitFor({ timeout: WAIT });
    const failed = attempts.getByRole("row").filter({ hasText: "contact.created" }).first();
    const text = await failed.innerText();
    expect(text).toContain("Failed");
    expect(text).toContain("500");

    const newUrl = `${seed.receivers[1]!.url}?moved=1`;
    await page.locator("summary", { hasText: /^Edit subscription$/ }).click(); // folded away under the summary and the actions
    const edit = page.getByRole("form", { name: "Edit subscription" });
    await edit.getByLabel("URL", { exact: true }).fill(newUrl);
    await button("Save changes", edit).click();
    await h1(seed.webhooks.failing.description);
    expect((await api("GET", `/webhooks/${seed.webhooks.failing.id}`)).json.url).toBe(newUrl);
  });

  test("a new key is shown once with a copy button, is gone on reload, and Revoke asks for a confirmation", async () => {
    await section("API keys");
    const rows = page.getByRole("region", { name: "API keys of this project" }).getByRole("row");
    const mine = rows.filter({ hasText: "Workday integration" });
    const before = await rows.count();
    await page.getByLabel("Name", { exact: true }).fill("Workday integration");
    await page.getByLabel("contacts:read", { exact: true }).check();
    await button("Create key").click();
    const shown = page.getByRole("textbox", { name: "New API key" });
    await shown.waitFor({ timeout: WAIT });
    const key = (await shown.inputValue()).trim();
    expect((await server.api("GET", "/ping", { key })).status).toBe(200);
    const copy = button("Copy new API key");
    expect(await copy.isVisible()).toBe(true);
    await copy.click();
    expect((await page.evaluate(() => navigator.clipboard.readText())).trim()).toBe(key);

    await page.reload();
    await h1("API keys");
    expect(await shown.count()).toBe(0);
    expect(await mine.count()).toBe(1);
    expect(await rows.count()).toBe(before + 1);

    await button("Revoke", mine).click();
    await page.getByRole("heading", { level: 1 }).waitFor({ timeout: WAIT });
    expect((await server.api("GET", "/ping", { key })).status).toBe(200); // asked first
    await button("Revoke key").click();
    await h1("API keys");
    expect((await server.api("GET", "/ping", { key })).status).toBe(401);
  });

  test("an import: a HubSpot-style CSV uploaded, its columns and values checked in the preview, started, summed up, its rejected row downloadable", async () => {
    await section("Import");
    const csv = [
      "First Name,Last Name,Email,Phone Number,Company Name,Website URL,Street Address,City,State/Region,Lifecycle Stage",
      "Mae,Jemison,mae.jemison@example.org,+1 312 555 0142,Jemison Group,https://jemison.example,5 Space Way,Chicago,IL,Lead",
      "Evelyn,Boyd Granville,evelyn.granville@example.org,,,,,Los Angeles,CA,Customer",
      ",,,,,,,,,",
      "Mary,Jackson,mary.jackson(at)example.org,,,,,Hampton,VA,Lead",
    ].join("\n");
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name: "hubspot-export.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await button("Upload").click();
    await h1("Check the columns of hubspot-export.csv");
    // HubSpot's usual headers need no choice; the lifecycle column is offered as the contact type by name.
    const columns = await page.getByRole("region", { name: "Columns" }).innerText();
    for (const [header, field] of [["Website URL", "website"], ["Street Address", "address.line1"], ["State/Region", "address.state"]]) {
      expect(columns).toContain(header);
      expect(columns).toContain(field);
    }
    const lifecycle = page.getByLabel("Field for column Lifecycle Stage", { exact: true });
    expect(await lifecycle.evaluate((s) => (s as HTMLSelectElement).selectedOptions[0]?.textContent ?? "")).toMatch(/contact ?type/i);
    // The values are checked before the start: 2 would be created, 1 rejected (its email), the blank row skipped.
    const values = (await page.getByRole("region", { name: "Values" }).innerText()).replace(/\s+/g, " ");
    expect(values).toContain("2 would be created and 1 would be rejected; 1 blank row would be skipped");
    expect(await page.getByRole("region", { name: "Rows that would be rejected" }).innerText()).toContain("email");
    expect((await seed.project.api("GET", "/contacts", { query: { email: "mae.jemison@example.org" } })).json.data).toEqual([]); // nothing written yet

    await button("Start import").click();
    await h1("Import of hubspot-export.csv");
    for (let i = 0; i < 60 && (await page.locator('meta[http-equiv="refresh"]').count()) > 0; i++) {
      await page.waitForTimeout(500);
      await page.reload();
    }
    expect((await page.locator("dl[aria-label=Summary]").innerText()).replace(/\s+/g, " ")).toMatch(/Rows 4 Created 2 Skipped 1 Blank rows skipped 1/);
    const found = await seed.project.api("GET", "/contacts", { query: { email: "mae.jemison@example.org" } });
    expect(found.json.data[0]).toMatchObject({ firstName: "Mae", website: "https://jemison.example", source: "import", contactType: { name: "Lead" } });
    expect(found.json.data[0].address).toMatchObject({ line1: "5 Space Way", city: "Chicago", state: "IL" });

    // The rejected row, downloadable as a CSV that re-imports once fixed (the "error" column is skipped).
    const download = link("Download rejected rows (CSV)");
    const rejected = await context.request.get(new URL((await download.getAttribute("href"))!, server.origin).href);
    expect(rejected.status()).toBe(200);
    const text = await rejected.text();
    expect(text.split(/\r?\n/)[0]).toContain("Lifecycle Stage");
    expect(text).toContain("mary.jackson(at)example.org");
    expect(text.split(/\r?\n/)[0]).toMatch(/error/i);
  });

  test("no page of the day asked for anything outside the server, broke a CSP rule or logged an error", () => {
    expect(record.foreign).toEqual([]);
    expect(record.cspViolations).toEqual([]);
    expect(record.pageErrors).toEqual([]);
    expect(record.consoleErrors).toEqual([]);
  });
});
