/**
 * Wrong passwords in a real browser (docs/admin.md §2): one is answered with an error on the
 * sign-in page and no session; the tenth for one email in 15 minutes locks it, so the
 * right password is refused too, with the lockout message. Its own server: the lock also
 * covers the address the browser signs in from, which every other test here shares.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createAdminAccount } from "../helpers/admin.ts";
import { launchBrowser, recordPage } from "../helpers/browser.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let browser: Browser;
const WAIT = 10_000;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer({ env: "sandbox" }), launchBrowser()]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
}, 60_000);

async function signIn(page: Page, email: string, password: string) {
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { level: 1 }).waitFor({ timeout: WAIT });
}

describe("signing in to the admin console in Chromium", () => {
  test("a wrong password shows an error and signs nobody in; ten lock the email, and then the right password is refused with the lockout message", async () => {
    const account = await createAdminAccount(server.env);
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const page = await context.newPage();
      const record = await recordPage(page, server.origin);
      await page.goto(`${server.origin}/admin/sign-in`);

      await signIn(page, account.email, "not the password at all");
      const alert = page.getByRole("alert");
      await alert.waitFor({ timeout: WAIT });
      expect(await alert.innerText()).toContain("The email or the password is wrong.");
      expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Sign in");
      expect(await page.getByLabel("Email", { exact: true }).inputValue()).toBe(account.email); // kept for the next try
      expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
      await page.goto(`${server.origin}/admin/projects`);
      expect(new URL(page.url()).pathname).toBe("/admin/sign-in");

      for (let i = 2; i <= 10; i++) {
        await signIn(page, account.email, `wrong password number ${i}`);
        await alert.waitFor({ timeout: WAIT });
      }
      expect(await alert.innerText()).toContain("The email or the password is wrong."); // the tenth is still just wrong

      await signIn(page, account.email, account.password);
      await alert.waitFor({ timeout: WAIT });
      expect(await alert.innerText()).toMatch(/Too many failed sign-ins\. Try again in 15 minutes\./);
      expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Sign in");
      await page.goto(`${server.origin}/admin/projects`);
      expect(new URL(page.url()).pathname).toBe("/admin/sign-in");

      expect(record.foreign).toEqual([]);
      expect(record.cspViolations).toEqual([]);
      expect(record.pageErrors).toEqual([]);
      // The browser logs each refused sign-in (a 401 or 429 page) as a failed load; nothing else is logged.
      const failedLoad = (status: string) => `Failed to load resource: the server responded with a status of ${status}`;
      expect(record.consoleErrors).toEqual([...Array(10).fill(failedLoad("401 (Unauthorized)")), failedLoad("429 (Too Many Requests)")]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
