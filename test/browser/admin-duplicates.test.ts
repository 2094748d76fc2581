/**
 * Duplicates and merge in the console, in a real browser (docs/api.md §20: "Console: a
 * Duplicates page (the groups), a side-by-side comparison with a choice per field, Merge,
 * and Undo from the survivor's timeline"). Headless Chromium signs in, finds two contacts
 * made through the API on the Duplicates page, compares them, changes one field's choice,
 * merges after the confirmation, sees the survivor with the value chosen (and the
 * merged-away contact's page leading to it), undoes the merge from the timeline and sees
 * both contacts back. What the console did is checked through the API. At phone width
 * (390 px) the pages do not scroll sideways; no page breaks a CSP rule or asks for
 * anything outside the server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createAdminAccount } from "../helpers/admin.ts";
import { launchBrowser, recordPage, type PageRecord } from "../helpers/browser.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let browser: Browser;
let project: ProjectInfo;

const WAIT = 10_000;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer({ env: "sandbox" }), launchBrowser()]);
  project = await server.newProject({ name: "Duplicates in Chromium" });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
}, 60_000);

function expectSelfContained(record: PageRecord) {
  expect(record.foreign).toEqual([]);
  expect(record.requests.filter((url) => new URL(url).origin !== server.origin)).toEqual([]);
  expect(record.cspViolations).toEqual([]);
  expect(record.pageErrors).toEqual([]);
  expect(record.consoleErrors).toEqual([]);
}

const h1 = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name, exact: typeof name === "string" }).waitFor({ timeout: WAIT });
const nav = (page: Page, name: string) => page.getByRole("navigation").getByRole("link", { name, exact: true });
/** The page is no wider than a 390 px phone (it does not scroll sideways). */
const fits = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= 390);

describe("duplicates and merge in Chromium", () => {
  test("an admin finds two contacts on Duplicates, compares them, chooses a field, merges after confirming, sees the survivor, undoes the merge from its timeline and has both back; the pages fit a phone", async () => {
    // Two contacts sharing an email (case aside), made through the API; the second has a note on its timeline.
    const ada = await project.api("POST", "/contacts", {
      body: { firstName: "Ada", lastName: "Lovelace", email: "ada@analytical-engines.example", phone: "+44 20 7946 0958", tags: ["vip"] },
    });
    expect(ada.status).toBe(201);
    const king = await project.api("POST", "/contacts", {
      body: { firstName: "Ada", lastName: "King", email: "ADA@analytical-engines.example", businessName: "Analytical Engines Ltd", notes: "Prefers email.", tags: ["newsletter"] },
    });
    expect(king.status).toBe(201);
    expect((await project.api("POST", `/contacts/${king.json.contactId}/interactions`, { body: { type: "note", note: "Asked for the price list." } })).status).toBe(201);
    const [first, second] = [ada.json.contactId as string, king.json.contactId as string];

    const account = await createAdminAccount(server.env);
    const desktop = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    let phone: BrowserContext | undefined;
    try {
      const page = await desktop.newPage();
      const record = await recordPage(page, server.origin);
      const visited: string[] = [];
      const landed = async (name: string | RegExp) => {
        await h1(page, name);
        visited.push(page.url());
      };

      await page.goto(`${server.origin}/admin/projects/${project.id}`);
      await h1(page, "Sign in");
      await page.getByLabel("Email", { exact: true }).fill(account.email);
      await page.getByLabel("Password", { exact: true }).fill(account.password);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await h1(page, project.name);

      // The Duplicates page: the group, why, and the contacts' names and emails.
      await nav(page, "Duplicates").click();
      await landed("Duplicates");
      const group = page.getByRole("region", { name: `Possible duplicates: ${second}, ${first}` });
      await group.waitFor({ timeout: WAIT });
      const groupText = await group.innerText();
      expect(groupText).toContain("same email");
      expect(groupText).toContain("Ada Lovelace");
      expect(groupText).toContain("Ada King");
      expect(groupText).toContain("ADA@analytical-engines.example");

      // The comparison: the oldest is kept unless chosen; each field starts at the merge's default rule.
      await group.getByRole("link", { name: "Compare and merge", exact: true }).click();
      await landed("Compare 2 contacts");
      expect(await page.getByRole("group", { name: "Contact to keep" }).getByRole("radio", { name: new RegExp(`^Ada Lovelace \\(${first}\\)`) }).isChecked()).toBe(true);
      const lastName = page.getByRole("group", { name: "Last name", exact: true });
      expect(await lastName.getByRole("radio", { name: `Lovelace from ${first}` }).isChecked()).toBe(true);
      const business = page.getByRole("group", { name: "Business name", exact: true });
      expect(await business.getByRole("radio", { name: `Analytical Engines Ltd from ${second}` }).isChecked()).toBe(true); // the survivor has none
      expect(await page.getByRole("group", { name: "Tags", exact: true }).getByRole("radio", { name: /from all of them$/ }).isChecked()).toBe(true);
      await lastName.getByRole("radio", { name: `King from ${second}` }).check();

      // Merge asks first, saying what happens and that it can be undone.
      await page.getByRole("button", { name: "Merge", exact: true }).click();
      await landed(`Merge 1 contact into ${first}`);
      expect(await page.locator("main").innerText()).toContain("Undo is possible for 30 days");
      await page.getByRole("button", { name: "Confirm merge", exact: true }).click();
      await landed("Ada King");
      expect(new URL(page.url()).pathname).toBe(`/admin/projects/${project.id}/contacts/${first}`);
      await page.getByRole("status").getByText("Contacts merged into this one").waitFor({ timeout: WAIT });

      const merged = await project.api("GET", `/contacts/${first}`);
      expect(merged.json).toMatchObject({ firstName: "Ada", lastName: "King", businessName: "Analytical Engines Ltd", phone: "+44 20 7946 0958", notes: "Prefers email." });
      expect(merged.json.tags.map((t: { name: string }) => t.name).sort()).toEqual(["newsletter", "vip"]);
      expect((await project.api("GET", `/contacts/${second}`)).status).toBe(308);
      const logs = await project.api("GET", `/contacts/${first}/interactions`);
      expect(logs.json.data.map((l: { note: string }) => l.note)).toEqual(["Asked for the price list."]);

      // The merged-away contact's page leads to the survivor's.
      await page.goto(`${server.origin}/admin/projects/${project.id}/contacts/${second}`);
      await landed("Ada King");
      expect(new URL(page.url()).pathname).toBe(`/admin/projects/${project.id}/contacts/${first}`);
      await page.getByRole("status").getByText(`${second} was merged into this contact.`).waitFor({ timeout: WAIT });

      // Undo from the survivor's timeline, after its confirmation.
      const timeline = page.getByRole("list", { name: "Timeline, newest first" });
      await timeline.getByText(`${second} was merged into this contact.`).waitFor({ timeout: WAIT });
      await timeline.getByRole("link", { name: "Undo merge", exact: true }).click();
      await landed(`Undo merge into ${first}`);
      await page.getByRole("button", { name: "Confirm undo", exact: true }).click();
      await landed("Ada Lovelace");
      await page.getByRole("status").getByText("Merge undone").waitFor({ timeout: WAIT });
      await timeline.getByText(/^Undone/).waitFor({ timeout: WAIT });
      expect(await timeline.getByRole("link", { name: "Undo merge" }).count()).toBe(0);

      const [back1, back2] = await Promise.all([project.api("GET", `/contacts/${first}`), project.api("GET", `/contacts/${second}`)]);
      expect(back1.status).toBe(200);
      expect(back1.json).toMatchObject({ lastName: "Lovelace", businessName: null, notes: null });
      expect(back1.json.tags.map((t: { name: string }) => t.name)).toEqual(["vip"]);
      expect(back2.status).toBe(200);
      expect(back2.json).toMatchObject({ lastName: "King", businessName: "Analytical Engines Ltd" });
      await page.goto(`${server.origin}/admin/projects/${project.id}/contacts/${second}`);
      await landed("Ada King");
      expect(new URL(page.url()).pathname).toBe(`/admin/projects/${project.id}/contacts/${second}`);
      await page.getByText("Asked for the price list.").waitFor({ timeout: WAIT });

      // Both are on Duplicates again.
      await nav(page, "Duplicates").click();
      await landed("Duplicates");
      await page.getByRole("region", { name: new RegExp(`^Possible duplicates: .*${first}`) }).waitFor({ timeout: WAIT });

      // The same pages at phone width: nothing scrolls sideways, the comparison included.
      phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, storageState: await desktop.storageState() });
      const small = await phone.newPage();
      const smallRecord = await recordPage(small, server.origin);
      const wide: string[] = [];
      for (const url of new Set(visited)) {
        const res = await small.goto(url);
        expect(res?.status()).toBe(200);
        await small.getByRole("heading", { level: 1 }).waitFor({ timeout: WAIT });
        if (!(await fits(small))) wide.push(new URL(url).pathname + new URL(url).search);
      }
      expect(wide).toEqual([]);
      expect(visited.some((u) => u.includes("/duplicates/compare"))).toBe(true);
      expectSelfContained(smallRecord);
      expectSelfContained(record);
    } finally {
      await phone?.close();
      await desktop.close();
    }
  }, 120_000);
});
