/**
 * The admin console in a real browser (docs/admin.md §4): headless Chromium signs in, creates
 * a project, a key, a contact with a note, follows a webhook subscription from a failed
 * attempt to a delivered one, sends a test ping, revokes the key (after its confirmation) and signs out, finding
 * everything by the accessible names docs/admin.md §4 lists (and nothing else). Every page it sees asks
 * for nothing outside the server, breaks no CSP rule and logs no error; at phone width
 * (390 px) none of them scrolls sideways. What the console did is checked through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createAdminAccount } from "../helpers/admin.ts";
import { launchBrowser, recordPage, type PageRecord } from "../helpers/browser.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

let server: ServerHandle;
let browser: Browser;
let receiver: Receiver;

/** Longest wait for one page or element; webhook retries get their own, longer bound. */
const WAIT = 10_000;
const DELIVERY_WAIT = 20_000;

beforeAll(async () => {
  [server, browser, receiver] = await Promise.all([
    // A retry 2 s after a failure, and an outbox read every 50 ms: the recovery is seen within seconds.
    startServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "2s,2s,2s", CRM_OUTBOX_POLL_MS: "50" } }),
    launchBrowser(),
    startReceiver(),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await server?.stop();
}, 60_000);

/** The pages asked for nothing outside the server, broke no CSP rule and logged or threw no error. */
function expectSelfContained(record: PageRecord) {
  expect(record.foreign).toEqual([]);
  expect(record.requests.filter((url) => new URL(url).origin !== server.origin)).toEqual([]);
  expect(record.cspViolations).toEqual([]);
  expect(record.pageErrors).toEqual([]);
  expect(record.consoleErrors).toEqual([]);
}

/** The page's one h1, by its exact text (the page has landed once it shows). */
const h1 = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name, exact: typeof name === "string" }).waitFor({ timeout: WAIT });

/** An action docs/admin.md §4 names: a button, or a link made to look like one. */
const action = (page: Page, name: string) => page.getByRole("button", { name, exact: true }).or(page.getByRole("link", { name, exact: true }));

/** A link of the project's navigation. */
const nav = (page: Page, name: string) => page.getByRole("navigation").getByRole("link", { name, exact: true });

/** How far the page is wider than its window (0: no sideways scrolling). */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const el = document.scrollingElement!;
    return el.scrollWidth - el.clientWidth;
  });

const ping = (key: string) => server.api("GET", "/ping", { key });

/** Reloads `page` until `probe()` holds, within `timeoutMs` (the page has no script: a person reloads too). */
async function reloadUntil(page: Page, probe: () => Promise<boolean>, what: string, timeoutMs = DELIVERY_WAIT) {
  await until(
    async () => {
      if (await probe()) return true;
      await page.reload();
      return false;
    },
    { timeoutMs, intervalMs: 250, what },
  );
}

describe("the admin console in Chromium", () => {
  test("an admin signs in, creates a project, a key, a contact with a note and a webhook that recovers, pings it, revokes the key and signs out; every page is self-contained and fits a phone", async () => {
    const account = await createAdminAccount(server.env);
    const desktop = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    let phone: BrowserContext | undefined;
    try {
      const page = await desktop.newPage();
      const record = await recordPage(page, server.origin);
      /** Every GET page the flow saw, for the phone pass. */
      const visited = new Set<string>();
      const landed = async (name: string | RegExp) => {
        await h1(page, name);
        visited.add(page.url());
      };

      // Sign in.
      await page.goto(`${server.origin}/admin`);
      await h1(page, "Sign in");
      await page.getByLabel("Email", { exact: true }).fill(account.email);
      await page.getByLabel("Password", { exact: true }).fill(account.password);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await landed("Projects");

      // Create a project; the browser lands on its settings.
      const projectName = `Browser ${Date.now().toString(36)}`;
      await page.getByLabel("Name", { exact: true }).fill(projectName);
      await page.getByRole("button", { name: "Create project", exact: true }).click();
      await landed(projectName);
      const projectId = /\/admin\/projects\/([^/?]+)/.exec(page.url())![1]!;

      // A key with three of the four scopes, shown once; the API sees exactly those.
      await nav(page, "API keys").click();
      await landed("API keys");
      const keyName = "Browser test integration";
      await page.getByLabel("Name", { exact: true }).fill(keyName);
      for (const scope of ["contacts:read", "contacts:write", "webhooks:manage"]) await page.getByLabel(scope, { exact: true }).check();
      await page.getByRole("button", { name: "Create key", exact: true }).click();
      const shown = page.getByRole("textbox", { name: "New API key", exact: true });
      await shown.waitFor({ timeout: WAIT });
      const key = (await shown.inputValue()).trim();
      expect(key).toMatch(/^crm_test_/);
      expect(page.url()).not.toContain(key); // never in a URL
      expect(new URL(page.url()).pathname).toBe(`/admin/projects/${projectId}/keys`); // the form redirected to a GET
      const pinged = await ping(key);
      expect(pinged.status).toBe(200);
      expect(pinged.json.projectId).toBe(projectId);
      expect([...pinged.json.scopes].sort()).toEqual(["contacts:read", "contacts:write", "webhooks:manage"]);
      const keysBefore = await page.getByRole("region", { name: "API keys of this project" }).getByRole("row").count();
      await page.reload(); // the same address, as a GET: the key is not shown again, and no second key is made
      await landed("API keys");
      expect(await shown.count()).toBe(0);
      expect(await page.getByRole("region", { name: "API keys of this project" }).getByRole("row").count()).toBe(keysBefore);

      // A contact entered by hand, and a note on its timeline.
      const email = `ada.${Date.now().toString(36)}@example.com`;
      await nav(page, "Contacts").click();
      await landed("Contacts");
      await action(page, "New contact").click();
      await landed("New contact");
      await page.getByLabel("First name", { exact: true }).fill("Ada");
      await page.getByLabel("Last name", { exact: true }).fill("Lovelace");
      await page.getByLabel("Email", { exact: true }).fill(email);
      await page.getByLabel("Phone", { exact: true }).fill("+44 20 7946 0958");
      await page.getByRole("button", { name: "Save", exact: true }).click();
      await landed("Ada Lovelace");
      const note = "Called about the renewal; sending a quote.";
      await page.getByLabel("Note", { exact: true }).fill(note);
      await page.getByRole("button", { name: "Add note", exact: true }).click();
      await page.getByText(note).first().waitFor({ timeout: WAIT });
      await landed("Ada Lovelace");

      const found = await server.api("GET", "/contacts", { key, query: { email } });
      expect(found.status).toBe(200);
      expect(found.json.data).toHaveLength(1);
      const contact = found.json.data[0];
      expect(contact).toMatchObject({ firstName: "Ada", lastName: "Lovelace", email, source: "manual" });
      expect(contact.phone).toBe("+44 20 7946 0958"); // kept as entered, as the API keeps it
      expect(page.url()).toContain(`/contacts/${contact.contactId}`);
      const timeline = await server.api("GET", `/contacts/${contact.contactId}/interactions`, { key });
      expect(timeline.status).toBe(200);
      expect(timeline.json.data.map((log: { note: string }) => log.note)).toEqual([note]);

      // The event log shows what the console did.
      await nav(page, "Events").click();
      await landed("Events");
      const events = page.getByRole("list", { name: "Events, newest first" });
      await events.getByText("contact.created", { exact: true }).first().waitFor({ timeout: WAIT });
      await events.getByText("interaction_log.created", { exact: true }).first().waitFor({ timeout: WAIT });

      // A subscription made in the console to a receiver that fails once, then accepts; a contact
      // created through the API is delivered to it, and its page shows both attempts.
      await receiver.script([{ status: 500, body: "down for maintenance" }], { status: 200, body: "ok" });
      const description = "Billing sync (browser test)";
      await nav(page, "Webhooks").click();
      await landed("Webhooks");
      await page.getByLabel("URL", { exact: true }).fill(receiver.url);
      await page.getByLabel("contact.created", { exact: true }).check();
      await page.getByLabel("Description", { exact: true }).fill(description);
      await page.getByRole("button", { name: "Create subscription", exact: true }).click();
      await h1(page, description);
      expect((await page.getByRole("textbox", { name: "Signing secret" }).inputValue()).trim()).toMatch(/^whsec_/);
      const hooks = await server.api("GET", "/webhooks", { key });
      expect(hooks.json.data).toEqual([expect.objectContaining({ url: receiver.url, events: ["contact.created"], description, status: "active" })]);
      const second = await server.api("POST", "/contacts", { key, body: { firstName: "Grace", lastName: "Hopper" } });
      expect(second.status).toBe(201);
      await nav(page, "Webhooks").click();
      await landed("Webhooks");
      await page.getByRole("link", { name: description, exact: true }).click();
      await landed(description);
      const attempts = page.getByRole("region", { name: /attempts/i }).getByRole("cell");
      await reloadUntil(page, async () => (await attempts.filter({ hasText: /^\s*500\s*$/ }).count()) > 0, "the failed attempt (500) on the page");
      await reloadUntil(page, async () => (await attempts.filter({ hasText: /^\s*2\d\d\s*$/ }).count()) > 0, "the delivered attempt (2xx) on the page");
      visited.add(page.url());
      expect(receiver.requests.filter((r) => r.headers["x-service-event"] === "contact.created")).toHaveLength(2);

      // A test ping reaches the receiver at once.
      await page.getByRole("button", { name: "Send test ping", exact: true }).click();
      await receiver.waitUntil((reqs) => reqs.some((r) => r.headers["x-service-event"] === "ping"), WAIT, "the test ping");
      await h1(page, description); // the page that answers the form (not a GET address)
      await page.getByText("Test ping delivered").waitFor({ timeout: WAIT });

      // The key, revoked in the console, is refused by the API.
      await nav(page, "API keys").click();
      await landed("API keys");
      await page.getByRole("row", { name: new RegExp(keyName) }).getByRole("button", { name: "Revoke", exact: true }).click();
      // Revoke asks first: until the confirmation, the key still works.
      await h1(page, `Revoke the key "${keyName}"?`);
      expect((await ping(key)).status).toBe(200);
      await page.getByRole("button", { name: "Revoke key", exact: true }).click();
      await landed("API keys");
      await page.getByRole("status").waitFor({ timeout: WAIT });
      expect((await ping(key)).status).toBe(401);

      // The same pages at phone width (the same session): none scrolls sideways.
      phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, storageState: await desktop.storageState() });
      const small = await phone.newPage();
      const smallRecord = await recordPage(small, server.origin);
      const wide: string[] = [];
      for (const url of visited) {
        const res = await small.goto(url);
        expect(`${res?.status()} ${url}`).toBe(`200 ${url}`);
        await small.getByRole("heading", { level: 1 }).waitFor({ timeout: WAIT });
        const excess = await overflow(small);
        if (excess > 1) wide.push(`${new URL(url).pathname}: ${excess} px too wide`);
      }
      expect(wide).toEqual([]);
      expect(visited.size).toBeGreaterThanOrEqual(10);
      expectSelfContained(smallRecord);

      // Sign out: back at sign-in, and the console asks to sign in again.
      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      await h1(page, "Sign in");
      await page.goto(`${server.origin}/admin/projects`);
      await h1(page, "Sign in");
      expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
      expect(await small.getByRole("button", { name: "Sign out" }).count()).toBe(1); // the phone's page is stale…
      await small.goto(`${server.origin}/admin/projects`); // …and its session ended with the same sign-out
      expect(new URL(small.url()).pathname).toBe("/admin/sign-in");
      expect(await overflow(small)).toBeLessThanOrEqual(1);

      expectSelfContained(record);
    } finally {
      await phone?.close();
      await desktop.close();
    }
  }, 120_000);
});
