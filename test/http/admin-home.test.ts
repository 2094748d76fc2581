/**
 * A project's home page in the console (docs/admin.md §3, Home): contacts in all and by
 * category, new contacts and interactions per UTC day over 30 days (server-drawn SVG with
 * the figures as text), each subscription's webhook health over 24 hours with disabled
 * ones first, and the 20 latest changes. The real service runs in the test process with a
 * ManualClock, so contacts land on days the test chooses and retries wait for the test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AdminClient, createAdminAccount, pageText, tableRows } from "../helpers/admin.ts";
import { DAY, HOUR, ManualClock } from "../helpers/clock.ts";
import { startInProcess, type InProcessProject, type InProcessServer } from "../helpers/in-process.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

// 10:00 UTC, a few days ahead: every test's writes stay clear of a day's edges.
const clock = new ManualClock(Math.floor(Date.now() / DAY) * DAY + 3 * DAY + 10 * HOUR);
let srv: InProcessServer;
let admin: AdminClient;
let account: { email: string; password: string };
const receivers: Receiver[] = [];

beforeAll(async () => {
  srv = await startInProcess({
    overrides: { clock },
    // Sandbox: loopback receivers are allowed; one retry a second after the first attempt (by the service's clock).
    env: { CRM_ENV: "sandbox", CRM_WEBHOOK_RETRY_SCHEDULE: "1s", CRM_OUTBOX_POLL_MS: "50" },
  });
  account = await createAdminAccount(srv.env);
  admin = new AdminClient(srv.origin);
  await admin.signIn(account.email, account.password);
}, 60_000);
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.stop();
});
afterAll(() => srv?.stop(), 60_000);

const day = (offset = 0) => new Date(clock.now() + offset * DAY).toISOString().slice(0, 10);
const home = (p: { id: string }) => admin.get(`/admin/projects/${p.id}`);

/** The figure under `dt` in the definition list that follows `marker` on the page. */
function figure(html: string, marker: string, dt: string): string | undefined {
  const part = html.slice(html.indexOf(marker));
  return new RegExp(`<dt>(?:<a [^>]*>)?${dt}(?:</a>)?</dt><dd>([^<]*)</dd>`).exec(part)?.[1];
}

/** The rows of the "Per day" table of the chart whose heading is `heading`: [day, count]. */
function perDay(html: string, heading: string): Array<[string, number]> {
  const start = html.indexOf(`aria-label="${heading}: per day"`);
  expect(start).toBeGreaterThan(0);
  const body = html.slice(start, html.indexOf("</table>", start));
  return [...body.matchAll(/<th scope="row">([^<]+)<\/th><td class="num">([^<]+)<\/td>/g)].map((m) => [m[1]!, Number(m[2]!.replace(/,/g, ""))]);
}

async function contact(p: InProcessProject, body: Record<string, unknown>) {
  const res = await p.api("POST", "/contacts", { body });
  expect(res.status, res.text).toBe(201);
  return res.json.contactId as string;
}

describe("the home page", () => {
  test("counts contacts in all and by category, those without a type too, deleted ones left out", async () => {
    const p = await srv.newProject({ name: "home-totals" });
    const types = (await p.api("GET", "/contact-types")).json.data as Array<{ id: string; name: string }>;
    const typeId = (name: string) => types.find((t) => t.name === name)!.id;
    const partner = await srv.cli(["contact-type", "create", "--project", p.id, "--category", "Customer", "--name", "Partner"]);
    for (const name of ["Lea", "Leo"]) await contact(p, { firstName: name, contactTypeId: typeId("Lead") });
    for (const name of ["Cara", "Cato", "Cleo"]) await contact(p, { firstName: name }); // the default type: Customer
    await contact(p, { firstName: "Pat", contactTypeId: partner.id }); // another Customer type
    await contact(p, { firstName: "Perry", contactTypeId: typeId("Personnel") });
    await contact(p, { firstName: "Nobody", contactTypeId: null });
    const gone = await contact(p, { firstName: "Gone" });
    expect((await p.api("DELETE", `/contacts/${gone}`)).status).toBe(204);

    const page = await home(p);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<a href="/admin/projects/${p.id}" aria-current="page">Home</a>`);
    const totals = Object.fromEntries(["All", "Lead", "Customer", "Personnel", "Other", "No contact type"].map((dt) => [dt, figure(page.text, 'id="totals-h"', dt)]));
    expect(totals).toEqual({ All: "8", Lead: "2", Customer: "4", Personnel: "1", Other: "0", "No contact type": "1" });
    // Each category leads to the contacts list filtered by it; the settings are a link away.
    expect(page.text).toContain(`<a href="/admin/projects/${p.id}/contacts?contactTypeCategory=Lead">Lead</a>`);
    expect(page.text).toContain(`<a href="/admin/projects/${p.id}/settings">Name, quota and limits</a>`);
  });

  test("charts new contacts and new interactions per UTC day over 30 days, today last, empty days shown as zero", async () => {
    const p = await srv.newProject({ name: "home-charts" });
    const first = [await contact(p, { firstName: "Day0a" }), await contact(p, { firstName: "Day0b" })];
    clock.advance(DAY);
    await contact(p, { firstName: "Day1" });
    expect((await p.api("POST", `/contacts/${first[0]}/interactions`, { body: { type: "note", note: "day 1" } })).status).toBe(201);
    clock.advance(DAY);
    for (const name of ["Day2a", "Day2b", "Day2c"]) await contact(p, { firstName: name });
    for (const note of ["a", "b"]) expect((await p.api("POST", `/contacts/${first[1]}/interactions`, { body: { type: "note", note } })).status).toBe(201);
    // A deleted contact was still new on its day.
    expect((await p.api("DELETE", `/contacts/${first[1]}`)).status).toBe(204);

    await admin.signIn(account.email, account.password); // two days passed: the session idled out
    const page = await home(p);
    const contacts = perDay(page.text, "New contacts per day");
    const interactions = perDay(page.text, "New interactions per day");
    expect(contacts).toHaveLength(30);
    expect(contacts[0]![0]).toBe(day(-29));
    expect(contacts.slice(-3)).toEqual([[day(-2), 2], [day(-1), 1], [day(0), 3]]);
    expect(contacts.slice(0, -3).every(([, n]) => n === 0)).toBe(true);
    expect(interactions.slice(-3)).toEqual([[day(-2), 0], [day(-1), 1], [day(0), 2]]);
    expect(interactions.reduce((s, [, n]) => s + n, 0)).toBe(3);
    const text = pageText(page.text);
    expect(text).toContain(`6 new contacts in the last 30 days; the busiest day was ${day(0)}, with 3.`);
    expect(text).toContain(`3 new interactions in the last 30 days; the busiest day was ${day(0)}, with 2.`);

    // Server-drawn SVG: named, described, as wide as its box; no inline style anywhere (the CSP forbids it).
    const svg = /<svg class="chart" role="img" aria-labelledby="new-contacts-title new-contacts-desc" viewBox="0 0 300 60" width="100%"[^>]*>([\s\S]*?)<\/svg>/.exec(page.text);
    expect(svg).not.toBeNull();
    expect(svg![1]).toContain(`<title id="new-contacts-title">New contacts per day, ${day(-29)} to ${day(0)} (UTC)</title>`);
    expect(svg![1]).toContain(`<title>${day(-1)}: 1 new contacts</title>`);
    expect(page.text).not.toMatch(/\sstyle=/);

    // 28 days on, the first day has left the window.
    clock.advance(28 * DAY);
    await admin.signIn(account.email, account.password);
    const later = await home(p);
    const moved = perDay(later.text, "New contacts per day");
    expect(moved[0]).toEqual([day(-29), 1]);
    expect(moved.reduce((s, [, n]) => s + n, 0)).toBe(4);
  });

  test("shows each subscription's last 24 hours: delivered, failed, pending, per hour; disabled ones first, then failing ones, then the others oldest first, each linking to its page", async () => {
    const p = await srv.newProject({ name: "home-webhooks" });
    const good = await startReceiver({ status: 200 });
    const bad = await startReceiver({ status: 500 });
    receivers.push(good, bad);
    const make = async (url: string, description: string) => {
      const res = await p.api("POST", "/webhooks", { body: { url, events: ["contact.created"], description } });
      expect(res.status, res.text).toBe(201);
      return res.json.id as string;
    };
    const goodId = await make(good.url, "Good receiver");
    clock.advance(1_000); // creation order decides only between subscriptions in the same state
    const badId = await make(bad.url, "Failing receiver");
    clock.advance(1_000);
    const laterId = await make(good.url, "Later receiver");
    for (const name of ["Hook1", "Hook2"]) await contact(p, { firstName: name });
    await good.waitFor(4);
    await bad.waitFor(2);

    /** The health card of subscription `id`: its link, status and the three counts. */
    const card = (html: string, id: string) => {
      const start = html.indexOf(`<a href="/admin/projects/${p.id}/webhooks/${id}">`);
      expect(start).toBeGreaterThan(0);
      const ends = [html.indexOf('<li class="card', start), html.indexOf("</section>", start)].filter((i) => i > 0);
      const text = pageText(html.slice(start, Math.min(...ends)));
      return { at: start, text, counts: /Delivered (\d+) Failed (\d+) Pending (\d+)/.exec(text)?.slice(1).map(Number) };
    };
    // The first attempts failed at the failing receiver; their retry waits for the service's clock.
    let page = await until(
      async () => {
        const r = await home(p);
        return card(r.text, badId).counts?.[1] === 2 && card(r.text, goodId).counts?.[0] === 2 ? r : false;
      },
      { what: "the first attempts on the home page" },
    );
    expect(card(page.text, goodId).counts).toEqual([2, 0, 0]);
    expect(card(page.text, badId).counts).toEqual([0, 2, 2]);
    // docs/admin.md §3.1: the failing one first, then the others oldest first (not by creation alone).
    expect(card(page.text, badId).at).toBeLessThan(card(page.text, goodId).at);
    expect(card(page.text, goodId).at).toBeLessThan(card(page.text, laterId).at);
    expect(card(page.text, badId).text).toContain("Failing receiver Failing");
    expect(card(page.text, goodId).text).toContain("In the last 24 hours: 2 delivered, 0 failed attempts; 0 pending now.");
    const hour = `${new Date(clock.now()).toISOString().slice(0, 13).replace("T", " ")}:00`;
    expect(card(page.text, badId).text).toContain(`Per hour Hour (UTC) Delivered Failed ${hour} 0 2`);

    // The retry fails too: the deliveries are exhausted and the subscription disabled (docs/webhooks.md §4).
    clock.advance(2_000);
    await bad.waitFor(4);
    await until(async () => (await p.api("GET", `/webhooks/${badId}`)).json.status === "disabled", { what: "the failing subscription disabled" });
    page = await until(
      async () => {
        const r = await home(p);
        return card(r.text, badId).counts?.[1] === 4 ? r : false;
      },
      { what: "the retries on the home page" },
    );
    expect(card(page.text, badId).counts).toEqual([0, 4, 0]);
    expect(card(page.text, badId).text).toContain("Failing receiver Disabled");
    expect(card(page.text, badId).text).toMatch(/Last failure: delivery dlv_\w+ failed 2 attempts; last: HTTP 500/);
    expect(card(page.text, badId).at).toBeLessThan(card(page.text, goodId).at); // disabled first
    expect(page.text).toContain(`<svg class="chart" role="img" aria-labelledby="health-${badId}-title health-${badId}-desc" viewBox="0 0 240 40"`);
    // Fills mark delivered and failed; the legend names them in words.
    expect(card(page.text, goodId).text).toContain("delivered failed");

    // A day later the window is empty again; pending stays what waits now.
    clock.advance(DAY);
    await admin.signIn(account.email, account.password);
    page = await home(p);
    expect(card(page.text, goodId).counts).toEqual([0, 0, 0]);
    expect(card(page.text, goodId).text).toContain("No attempts in the last 24 hours.");
  });

  test("lists the 20 latest changes, newest first, with the contact linked, the change and who made it", async () => {
    const p = await srv.newProject({ name: "home-changes" });
    const ids: string[] = [];
    for (let i = 1; i <= 21; i++) ids.push(await contact(p, { firstName: `Person${i}`, lastName: "Latest" }));
    expect((await p.api("PATCH", `/contacts/${ids[0]}`, { body: { email: "first@example.com", phone: "+14155550100" } })).status).toBe(200);
    expect((await p.api("POST", `/contacts/${ids[1]}/interactions`, { body: { type: "note", note: "hello" } })).status).toBe(201);
    expect((await p.api("DELETE", `/contacts/${ids[2]}`)).status).toBe(204);

    const page = await home(p);
    const rows = tableRows(page.text, "Latest changes");
    expect(rows).toHaveLength(20);
    const keyName = (await p.api("GET", "/ping")).json.keyId as string;
    expect(rows[0]!.slice(1)).toEqual([`Person3 Latest ${ids[2]} (deleted)`, "Contact deleted", expect.stringContaining("API key")]);
    expect(rows[1]!.slice(1)).toEqual([`Person2 Latest ${ids[1]}`, "Interaction logged: Note", expect.stringContaining("API key")]);
    expect(rows[2]!.slice(1, 3)).toEqual([`Person1 Latest ${ids[0]}`, "Updated email, phone"]);
    expect(rows[3]!.slice(1, 3)).toEqual([`Person21 Latest ${ids[20]}`, "Contact created"]);
    expect(rows[19]!.slice(1, 3)).toEqual([`Person5 Latest ${ids[4]}`, "Contact created"]);
    expect(rows[0]![3]).toContain(keyName);
    expect(rows[0]![0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(page.text).toContain(`<a href="/admin/projects/${p.id}/contacts/${ids[1]}">Person2 Latest</a>`);
    // Cells name their column, so the table reads as cards on a phone.
    expect(page.text).toContain('<td data-label="Change">Contact deleted</td>');
  });

  test("a project without contacts, changes or subscriptions says so", async () => {
    const p = await srv.newProject({ name: "home-empty" });
    const text = pageText((await home(p)).text);
    expect(text).toContain("No new contacts in the last 30 days.");
    expect(text).toContain("No webhook subscriptions.");
    expect(text).toContain("No changes yet.");
  });
});
