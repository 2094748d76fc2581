/**
 * A contact's page in the console (docs/admin.md §3): fields and timeline side by
 * side on a wide screen; the timeline holds interactions of every type, the change history,
 * form submissions and merges, newest first, each saying its kind; an interaction of any type
 * is added from the page through the API's own service and rules; Delete asks first and moves
 * the contact to the trash, whose page offers Restore; Merge leads to the comparison. Checked
 * through the API, in process with a clock the test moves (entries a minute apart).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AdminClient, createAdminAccount, pageText, type AdminPage } from "../helpers/admin.ts";
import { ManualClock } from "../helpers/clock.ts";
import { startInProcess, type InProcessProject, type InProcessServer } from "../helpers/in-process.ts";

setDefaultTimeout(60_000);

const MINUTE = 60_000;
const clock = new ManualClock(Date.parse("2026-03-02T10:00:00.000Z"));
let srv: InProcessServer;
let admin: AdminClient;
let p: InProcessProject;
let base: string;
/** A project's own interaction type, and a form. */
let visit: { id: string; name: string };
let form: { id: string; name: string };

beforeAll(async () => {
  srv = await startInProcess({ overrides: { clock } });
  const account = await createAdminAccount(srv.env);
  admin = new AdminClient(srv.origin);
  await admin.signIn(account.email, account.password);
  p = await srv.newProject({ name: "console-contact-page" });
  base = `/admin/projects/${p.id}/contacts`;
  visit = await srv.cli(["interaction-type", "create", "--project", p.id, "--name", "Site visit", "--json"]);
  form = await srv.cli(["form", "create", "--project", p.id, "--name", "Newsletter", "--fields", "email,firstName", "--json"]);
}, 60_000);
afterAll(() => srv?.stop(), 60_000);

const api = async (method: string, path: string, body?: unknown, key?: string | null) => {
  const res = await p.api(method, path, { body, key });
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 500)}`).toBeLessThan(300);
  return res.json;
};
const later = () => clock.advance(MINUTE);

/** The timeline's entries: each `<li>`'s text and its first line without the time. */
function timeline(page: AdminPage): Array<{ text: string; meta: string; cls: string }> {
  const start = page.text.indexOf('aria-label="Timeline, newest first"');
  if (start < 0) return [];
  const list = page.text.slice(start, page.text.indexOf("</ol>", start));
  return [...list.matchAll(/<li class="([^"]*)">([\s\S]*?)(?=<li class=|$)/g)].map(([, cls, html]) => ({
    cls: cls!,
    text: pageText(html!),
    meta: pageText(/<p class="meta">([\s\S]*?)<\/p>/.exec(html!)?.[1] ?? "").replace(/^\S+ \S+ UTC · /, ""),
  }));
}

async function newContact(body: Record<string, unknown>): Promise<string> {
  later();
  return (await api("POST", "/contacts", body)).contactId as string;
}

describe("a contact's timeline", () => {
  test("a form submission, a call of the project's own type, a note, a PATCH and a merge show newest first, each saying what kind it is", async () => {
    later();
    expect((await p.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email: "grace@timeline.example", firstName: "Grace" } })).status).toBe(201);
    const id = (await api("GET", "/contacts", undefined)).data.find((c: { email: string }) => c.email === "grace@timeline.example").contactId as string;
    later();
    await api("POST", `/contacts/${id}/interactions`, { interactionTypeId: visit.id, note: "Walked the plant.", fields: { outcome: "quote requested" } });
    later();
    await api("POST", `/contacts/${id}/interactions`, { type: "note", note: "Prefers mornings." });
    later();
    await api("PATCH", `/contacts/${id}`, { lastName: "Hopper" });
    const other = await newContact({ firstName: "G.", lastName: "Hopper", phone: "+1 202 555 0143" });
    later();
    await api("POST", `/contacts/${id}/merge`, { contactIds: [other] });

    const page = await admin.get(`${base}/${id}`);
    expect(page.status, page.text.slice(0, 500)).toBe(200);
    const entries = timeline(page);
    expect(entries.map((e) => e.meta.replace(/ · by .*/, ""))).toEqual([
      "Merge: Contacts merged into this one",
      "Change: Contact updated",
      "Interaction: Note",
      "Interaction: Site visit",
      "Form submission: Newsletter",
      "Change: Contact created",
    ]);
    const [merge, patch, note, call, submission, created] = entries as Array<(typeof entries)[0]>;
    expect(merge!.text).toContain(`${other} was merged into this contact.`);
    expect(merge!.cls).toContain("merge");
    expect(patch!.text).toContain("Last name — → Hopper");
    expect(note!.text).toContain("Prefers mornings.");
    expect(call!.text).toContain("Walked the plant.");
    expect(call!.text).toContain("outcome quote requested");
    expect(submission!.text).toContain("Email grace@timeline.example");
    expect(submission!.text).toContain("First name Grace");
    expect(created!.meta).toContain("by Newsletter (form)");
  });

  test("pages: submissions, interactions and changes interleaved by time across pages, each entry once, newest first", async () => {
    const email = "paged@timeline.example";
    later();
    expect((await p.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email, firstName: "Sub 0" } })).status).toBe(201);
    const id = (await api("GET", `/contacts?email=${encodeURIComponent(email)}`)).data[0].contactId as string;
    // 25 rounds of a submission (which also changes the first name), a call and a note: 101 entries in all.
    for (let i = 1; i <= 25; i++) {
      later();
      expect((await p.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email, firstName: `Sub ${i}` } })).status).toBe(201);
      later();
      await api("POST", `/contacts/${id}/interactions`, { interactionTypeId: visit.id, note: `visit ${i}.` });
      later();
      await api("POST", `/contacts/${id}/interactions`, { type: "note", note: `note ${i}.` });
    }
    const seen: string[] = [];
    let path: string | undefined = `${base}/${id}`;
    let pages = 0;
    while (path) {
      const page = await admin.get(path);
      expect(page.status, page.text.slice(0, 500)).toBe(200);
      pages += 1;
      // A later page leads back to the newest entries; the first does not.
      expect(page.text.includes(`href="${base}/${id}#timeline">Newest entries</a>`)).toBe(pages > 1);
      for (const e of timeline(page)) {
        const n = /(?:visit|note) (\d+)\.|First name (?:Sub \d+ → )?Sub (\d+)/.exec(e.text);
        seen.push(`${e.meta.replace(/ · by .*/, "")} ${n?.[1] ?? n?.[2] ?? ""}`.trim());
      }
      const href = /href="([^"]*)">Older entries</.exec(page.text)?.[1];
      path = href?.replace(/&amp;/g, "&");
      expect(pages).toBeLessThan(12);
    }
    const expected = [
      "Change: Contact created 0",
      "Form submission: Newsletter 0",
      ...Array.from({ length: 25 }, (_, k) => [`Change: Contact updated ${k + 1}`, `Form submission: Newsletter ${k + 1}`, `Interaction: Site visit ${k + 1}`, `Interaction: Note ${k + 1}`]).flat(),
    ].reverse();
    expect(seen).toEqual(expected);
    expect(pages).toBeGreaterThan(2);
  });
});

describe("adding to the timeline from the page", () => {
  test("the page offers every interaction type; an interaction of a configured type is added with its date, notes and fields, as the API stores it", async () => {
    const id = await newContact({ firstName: "Typed" });
    const page = await admin.get(`${base}/${id}`);
    expect(page.text).toContain(`<option value="${visit.id}"`);
    for (const name of ["Call", "Meeting", "Site visit", "Note"]) expect(page.text).toMatch(new RegExp(`<option value="[^"]*"[^>]*>${name}</option>`));
    // The note form keeps its accessible names (docs/admin.md §4).
    expect(page.text).toContain(">Note</label>");
    expect(page.text).toContain(">Add note</button>");

    later();
    const since = new Date(clock.now()).toISOString();
    const res = await admin.post(`${base}/${id}/interactions`, {
      interactionTypeId: visit.id,
      date: "2026-01-05T09:30",
      note: "Toured the\r\nwarehouse.",
      fields: "outcome: quote requested\r\nduration: 45 min\r\n",
    });
    expect(res.status, res.text.slice(0, 1000)).toBe(303);
    expect(res.location).toBe(`${base}/${id}?done=logged#timeline`);
    const logs = (await api("GET", `/contacts/${id}/interactions`)).data;
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      interactionType: { id: visit.id, name: "Site visit" },
      note: "Toured the\nwarehouse.",
      fields: { outcome: "quote requested", duration: "45 min" },
      date: "2026-01-05T09:30:00.000Z",
    });
    const events = (await api("GET", `/events?since=${encodeURIComponent(since)}`)).data.filter((e: { event: string; data: any }) => e.event === "interaction_log.created" && e.data.interactionLog.id === logs[0].id);
    expect(events).toHaveLength(1);
    const after = await admin.get(res.location!);
    expect(pageText(after.text)).toContain("Interaction added.");
    expect(timeline(after)[1]!.meta).toBe("Interaction: Site visit");
  });

  test("refusals are shown at their field, 422, and add nothing: an unknown type, a field line without a name, nothing written", async () => {
    const id = await newContact({ firstName: "Refused" });
    const cases: Array<[Record<string, string>, string]> = [
      [{ interactionTypeId: "it_nope", note: "x" }, "interactionTypeId is not an interaction type of this project."],
      [{ interactionTypeId: visit.id, fields: "outcome: fine\nno colon here" }, "Line 2 of Fields needs a name before a colon"],
      [{ interactionTypeId: visit.id, note: "  ", fields: "" }, "Write notes or at least one field of the interaction."],
      [{ interactionTypeId: visit.id, note: "x", date: "yesterday" }, "date must be an ISO 8601 timestamp"],
    ];
    for (const [fields, message] of cases) {
      await admin.get(`${base}/${id}`);
      const res = await admin.post(`${base}/${id}/interactions`, fields);
      expect(res.status, JSON.stringify(fields)).toBe(422);
      expect(pageText(res.text)).toContain(message);
      // The form is open again with what was typed.
      expect(res.text).toMatch(/<details class="card add-interaction" id="add-interaction" open/);
    }
    expect((await api("GET", `/contacts/${id}/interactions`)).data).toEqual([]);
  });
});

describe("Delete and Restore", () => {
  test("Delete asks for confirmation first; confirmed, the contact is in the trash (404 in the API, 'deleted' in its history) and its page offers Restore", async () => {
    const id = await newContact({ firstName: "Trashed", email: "trashed@page.example" });
    const page = await admin.get(`${base}/${id}`);
    expect(page.text).toMatch(new RegExp(`<form method="post" action="${base}/${id}/delete"[^>]*>`));

    const asked = await admin.post(`${base}/${id}/delete`);
    expect(asked.status).toBe(200);
    expect(pageText(asked.text)).toContain("Delete Trashed?");
    expect(pageText(asked.text)).toContain("moves to the trash");
    expect(asked.text).toContain('<input type="hidden" name="confirm" value="yes"');
    expect(asked.text).toContain(">Delete contact</button>");
    // Asking deleted nothing.
    expect((await p.api("GET", `/contacts/${id}`)).status).toBe(200);

    later();
    const done = await admin.post(`${base}/${id}/delete`, { confirm: "yes" });
    expect(done.status, done.text.slice(0, 500)).toBe(303);
    expect(done.location).toBe(`${base}/${id}?done=trashed`);
    expect((await p.api("GET", `/contacts/${id}`)).status).toBe(404);
    const history = (await api("GET", `/contacts/${id}/history`)).data;
    expect(history[0].action).toBe("deleted");
    // A second confirmed post (a double click) trashes nothing more and lands on the same page.
    const twice = await admin.post(`${base}/${id}/delete`, { confirm: "yes" });
    expect([twice.status, twice.location]).toEqual([303, `${base}/${id}?done=trashed`]);
    expect((await api("GET", `/contacts/${id}/history`)).data.filter((r: { action: string }) => r.action === "deleted")).toHaveLength(1);

    const trashed = await admin.get(done.location!);
    expect(trashed.status).toBe(200);
    const text = pageText(trashed.text);
    expect(text).toContain("Contact moved to the trash.");
    expect(text).toContain("In the trash since");
    expect(trashed.text).toContain(">Restore</button>");
    expect(trashed.text).not.toContain(">Add note</button>");
    expect(timeline(trashed)[0]!.meta).toMatch(/^Change: Moved to the trash/);
    // Erase still reaches it (docs/api.md §19.3: a contact in the trash included).
    expect((await admin.get(`${base}/${id}/erase`)).status).toBe(200);
  });

  test("Restore brings a trashed contact back (the API finds it, 'restored' in its history); restoring a live one is refused on the page, 409", async () => {
    const id = await newContact({ firstName: "Back" });
    later();
    expect((await p.api("DELETE", `/contacts/${id}`)).status).toBe(204);
    await admin.get(`${base}/${id}`);
    later();
    const res = await admin.post(`${base}/${id}/restore`);
    expect(res.status, res.text.slice(0, 500)).toBe(303);
    expect(res.location).toBe(`${base}/${id}?done=restored`);
    expect((await p.api("GET", `/contacts/${id}`)).status).toBe(200);
    expect((await api("GET", `/contacts/${id}/history`)).data[0].action).toBe("restored");
    const page = await admin.get(res.location!);
    expect(pageText(page.text)).toContain("Contact restored from the trash.");
    expect(page.text).not.toContain(">Restore</button>");

    const again = await admin.post(`${base}/${id}/restore`);
    expect(again.status).toBe(409);
    expect(pageText(again.text)).toContain(`${id} is not in the trash.`);
  });
});

describe("the page's layout and links", () => {
  test("fields and timeline sit in a two-column grid from 64 rem, one column below; Merge leads to the comparison with its duplicates", async () => {
    const a = await newContact({ firstName: "Lin", email: "lin@dup.example" });
    const b = await newContact({ firstName: "Lin", email: "LIN@dup.example" });
    const page = await admin.get(`${base}/${b}`);
    expect(page.text).toMatch(/<div class="contact-layout"><div class="contact-fields">[\s\S]*<section class="contact-timeline" aria-labelledby="timeline">/);
    const css = await (await fetch(`${srv.origin}${/href="(\/admin\/assets\/admin\.css[^"]*)"/.exec(page.text)![1]!.replace(/&amp;/g, "&")}`)).text();
    expect(css).toContain(".contact-layout{display:grid;grid-template-columns:minmax(0,1fr)");
    expect(css).toMatch(/@media \(min-width:64rem\)\{\s*\.contact-layout\{grid-template-columns:minmax\(0,2fr\) minmax\(0,3fr\)\}/);
    const merge = /<a class="button secondary" href="([^"]*)">\s*Merge\s*<\/a>/.exec(page.text);
    expect(merge).not.toBeNull();
    const href = merge![1]!.replace(/&amp;/g, "&");
    const q = new URL(href, srv.origin).searchParams;
    expect(new URL(href, srv.origin).pathname).toBe(`/admin/projects/${p.id}/duplicates/compare`);
    expect(q.get("ids")!.split(",").sort()).toEqual([a, b].sort());
    expect(q.get("survivor")).toBe(b);
    expect((await admin.get(href)).status).toBe(200);
    // Merging with contacts typed by id: a GET form to the same comparison.
    expect(page.text).toContain(`<form method="get" action="/admin/projects/${p.id}/contacts/${b}/merge-with" aria-label="Merge with other contacts">`);
  });
});
