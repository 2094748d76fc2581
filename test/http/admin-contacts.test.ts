/**
 * The console's contacts (docs/admin.md §3): list with search, filters and pages; create and
 * edit by hand (source manual, contact.created / contact.updated, the API's rules and
 * messages); a contact's page with its timeline and "Add note" (interaction_log.created).
 * Checked through the API and the event log, on the real server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signedInAdmin, type AdminClient, type AdminPage } from "../helpers/admin.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;
/** A project of its own for every test that counts events or lists contacts. */
let p: ProjectInfo;
let base: string;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  ({ client: admin } = await signedInAdmin(srv.origin, srv.env));
  p = await srv.newProject({ name: "console-contacts" });
  base = `/admin/projects/${p.id}/contacts`;
});
afterAll(() => srv?.stop());

const unescape = (s: string) =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

/** The message shown at a field (src/admin/ui.tsx: `<p class="error" id="<field id>-error">`). */
function errorAt(page: AdminPage, id: string): string | undefined {
  const m = new RegExp(`id="${id}-error"[^>]*>([^<]*)<`).exec(page.text);
  return m ? unescape(m[1]!) : undefined;
}

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}(?:="([^"]*)")?(?=[\\s/>])`).exec(tag);
  return m ? unescape(m[1] ?? "") : undefined;
};

/** What a browser would post from the page's form named `label`: inputs, ticked boxes, selected options, textareas. */
function formFields(page: AdminPage, label: string): Record<string, string[]> {
  const start = page.text.indexOf(`aria-label="${label}"`);
  if (start < 0) throw new Error(`no form ${label}`);
  const form = page.text.slice(start, page.text.indexOf("</form>", start));
  const out: Record<string, string[]> = {};
  const add = (name: string | undefined, value: string) => name && name !== "_csrf" && (out[name] ??= []).push(value);
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const type = attr(tag, "type");
    if ((type === "checkbox" || type === "radio") && attr(tag, "checked") === undefined) continue;
    add(attr(tag, "name"), attr(tag, "value") ?? (type === "checkbox" ? "on" : ""));
  }
  for (const [, tag, body] of form.matchAll(/(<textarea\b[^>]*>)([\s\S]*?)<\/textarea>/g)) add(attr(tag!, "name"), unescape(body!).replace(/\n/g, "\r\n"));
  for (const [, tag, body] of form.matchAll(/(<select\b[^>]*>)([\s\S]*?)<\/select>/g)) {
    const options = [...body!.matchAll(/<option\b[^>]*>/g)].map(([o]) => o);
    const chosen = options.find((o) => attr(o, "selected") !== undefined) ?? options[0];
    add(attr(tag!, "name"), chosen ? (attr(chosen, "value") ?? "") : "");
  }
  return out;
}

const contactIdOf = (location: string | null) => /\/contacts\/(CR-\d+)\?/.exec(location ?? "")?.[1];

async function events(type: string) {
  const { items } = await walk(p.api, "/events");
  return items.filter((e: any) => e.event === type);
}

/** Creates a contact through the console's form; returns its contactId. */
async function createInConsole(fields: Record<string, string | string[]>) {
  await admin.get(`${base}/new`);
  const res = await admin.post(`${base}/new`, fields);
  expect(res.status, res.text.slice(0, 2000)).toBe(303);
  return contactIdOf(res.location)!;
}

describe("creating a contact by hand", () => {
  test("the console creates a manual contact with the fields given, fires contact.created, and shows it", async () => {
    const types = (await p.api("GET", "/contact-types")).json.data;
    const lead = types.find((t: any) => t.category === "Lead");
    const form = await admin.get(`${base}/new`);
    expect(form.status).toBe(200);
    for (const label of ["First name", "Last name", "Email", "Phone", "Notes", "Tags"]) expect(form.text).toContain(`>${label}</label>`);
    expect(form.text).toContain(">Save</button>");

    const res = await admin.post(`${base}/new`, {
      firstName: "Grace",
      lastName: "Hopper",
      email: " grace@example.com ",
      phone: "+1 415 555 0101",
      businessName: "",
      website: "https://example.com/grace",
      contactTypeId: lead.id,
      tags: "navy, compilers , navy",
      subscribed: "on",
      "address.city": "Arlington",
      "address.country": "US",
      notes: "Line one\r\nLine two",
    });
    expect(res.status, res.text.slice(0, 2000)).toBe(303);
    const contactId = contactIdOf(res.location)!;
    expect(res.location).toBe(`${base}/${contactId}?done=created`);

    const api = await p.api("GET", `/contacts/${contactId}`);
    expect(api.status).toBe(200);
    expect(api.json).toMatchObject({
      source: "manual",
      firstName: "Grace",
      lastName: "Hopper",
      email: "grace@example.com",
      phone: "+1 415 555 0101",
      businessName: null,
      website: "https://example.com/grace",
      contactType: { id: lead.id },
      subscribed: true,
      smsSubscribed: false,
      notes: "Line one\nLine two",
      address: { city: "Arlington", country: "US", line1: null },
    });
    expect(api.json.tags.map((t: any) => t.name).sort()).toEqual(["compilers", "navy"]);

    const created = (await events("contact.created")).filter((e: any) => e.data.contact.contactId === contactId);
    expect(created).toHaveLength(1);
    expect(created[0].data.contact.source).toBe("manual");

    const page = await admin.get(res.location!);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Grace Hopper</h1>");
    expect(page.text).toContain("Contact created.");
    expect(page.text).toContain("manual");

    const log = await admin.get(`/admin/projects/${p.id}/events?type=contact.created`);
    expect(log.status).toBe(200);
    expect(log.text).toContain(created[0].id);
  });

  test("no name, email, phone or business name is refused with the API's message, 422, and creates nothing", async () => {
    const before = (await events("contact.created")).length;
    await admin.get(`${base}/new`);
    const res = await admin.post(`${base}/new`, { firstName: " ", lastName: "", email: "", phone: "", businessName: "", notes: "only a note" });
    expect(res.status).toBe(422);
    expect(errorAt(res, "f-firstName")).toBe("At least one of firstName, lastName, email, phone or businessName is required.");
    expect(res.text).toContain('role="alert"');
    expect(res.text).toContain("only a note"); // what was typed stays
    expect((await events("contact.created")).length).toBe(before);
  });

  test("a bad email is refused at Email with the API's message, keeping what was typed", async () => {
    await admin.get(`${base}/new`);
    const res = await admin.post(`${base}/new`, { firstName: "Ada", email: "not-an-email" });
    expect(res.status).toBe(422);
    expect(errorAt(res, "f-email")).toBe("email must be a valid email address.");
    expect(res.text).toContain('href="#f-email"');
    expect(res.text).toMatch(/name="firstName" type="text" value="Ada"/);
  });
});

describe("editing a contact", () => {
  beforeAll(async () => {
    for (const [title, type, options] of [["Seats", "number"], ["Plan", "select", "free,pro"], ["Trial", "checkbox"], ["Channels", "multiselect", "mail,phone,chat"]]) {
      await srv.cli(["custom-field", "create", "--project", p.id, "--title", title!, "--type", type!, ...(options ? ["--options", options] : [])]);
    }
  });

  test("saving the edit form unchanged writes nothing and fires nothing; a change fires contact.updated with what changed", async () => {
    const made = await p.api("POST", "/contacts", {
      body: { firstName: "Linus", lastName: "Pauling", phone: "+1 650 555 0102", notes: "a\nb", tags: ["chem"], customFields: { Seats: 3, Channels: ["chat", "mail"] } },
    });
    expect(made.status).toBe(201);
    const id = made.json.contactId;
    const updated = async () => (await events("contact.updated")).filter((e: any) => e.data.contact.contactId === id);

    const edit = await admin.get(`${base}/${id}/edit`);
    expect(edit.status).toBe(200);
    const fields = formFields(edit, "Contact details");
    expect(fields.firstName).toEqual(["Linus"]);
    expect(fields.tags).toEqual(["chem"]);
    const unchanged = await admin.post(`${base}/${id}/edit`, fields);
    expect(unchanged.status, unchanged.text.slice(0, 2000)).toBe(303);
    expect(unchanged.location).toBe(`${base}/${id}?done=unchanged`);
    expect((await p.api("GET", `/contacts/${id}`)).json.updatedAt).toBe(made.json.updatedAt);
    expect(await updated()).toHaveLength(0);

    const changed = await admin.post(`${base}/${id}/edit`, { ...fields, lastName: "Carl Pauling", phone: "" });
    expect(changed.status).toBe(303);
    expect(changed.location).toBe(`${base}/${id}?done=saved`);
    const after = await p.api("GET", `/contacts/${id}`);
    expect(after.json).toMatchObject({ lastName: "Carl Pauling", phone: null, firstName: "Linus", notes: "a\nb" });
    const ups = await updated();
    expect(ups).toHaveLength(1);
    expect(ups[0].data.changedFields.sort()).toEqual(["lastName", "phone"]);
  });

  test("custom fields are edited by title: a select, a checkbox, a multiselect, a number (its error at the field)", async () => {
    const made = await p.api("POST", "/contacts", { body: { firstName: "Rosalind" } });
    const id = made.json.contactId;
    const cf = (await p.api("GET", "/custom-fields")).json.data as any[];
    const byTitle = Object.fromEntries(cf.map((f) => [f.title, `customFields.${f.id}`]));
    const edit = await admin.get(`${base}/${id}/edit`);
    for (const title of ["Seats", "Plan", "Trial", "Channels"]) expect(edit.text).toContain(title);
    const fields = formFields(edit, "Contact details");

    const bad = await admin.post(`${base}/${id}/edit`, { ...fields, [byTitle.Seats!]: "many" });
    expect(bad.status).toBe(422);
    const seatsId = `f-${byTitle.Seats!.replace(/[^A-Za-z0-9_-]/g, "-")}`;
    expect(errorAt(bad, seatsId)).toMatch(/\(Seats\) must be a number\.$/);

    const ok = await admin.post(`${base}/${id}/edit`, {
      ...fields,
      [byTitle.Seats!]: "12",
      [byTitle.Plan!]: "pro",
      [byTitle.Trial!]: "on",
      [byTitle.Channels!]: ["phone", "mail"],
    });
    expect(ok.status).toBe(303);
    const got = (await p.api("GET", `/contacts/${id}`)).json.customFields;
    const idOf = (t: string) => byTitle[t]!.slice("customFields.".length);
    expect(got[idOf("Seats")]).toBe(12);
    expect(got[idOf("Plan")]).toBe("pro");
    expect(got[idOf("Trial")]).toBe(true);
    expect([...got[idOf("Channels")]].sort()).toEqual(["mail", "phone"]);

    // The saved form, sent again as the browser shows it, changes nothing.
    const again = formFields(await admin.get(`${base}/${id}/edit`), "Contact details");
    expect((await admin.post(`${base}/${id}/edit`, again)).location).toBe(`${base}/${id}?done=unchanged`);
    // Unticking and blanking clear them.
    const cleared = await admin.post(`${base}/${id}/edit`, { ...again, [byTitle.Seats!]: "", [byTitle.Plan!]: "", [byTitle.Trial!]: [], [byTitle.Channels!]: [] });
    expect(cleared.location).toBe(`${base}/${id}?done=saved`);
    const now = (await p.api("GET", `/contacts/${id}`)).json.customFields;
    expect(now).toEqual({ [idOf("Trial")]: false });

    const page = await admin.get(`${base}/${id}`);
    expect(page.text).toMatch(/<dt>Trial<\/dt><dd>No<\/dd>/);
  });
});

describe("a contact's page and timeline", () => {
  test("Add note creates a note log like the API's, fires interaction_log.created, and shows it on the timeline", async () => {
    const id = await createInConsole({ firstName: "Barbara", lastName: "Liskov", email: "barbara@example.com" });
    const page = await admin.get(`${base}/${id}`);
    expect(page.text).toContain(">Note</label>");
    expect(page.text).toContain(">Add note</button>");
    expect(page.text).toContain(`href="${base}/${id}/edit"`);
    expect(page.text).toContain("0 other contacts with this email");

    const res = await admin.post(`${base}/${id}/notes`, { note: "Called about <substitution>.\r\nWill call back." });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${base}/${id}?done=noted#timeline`);
    const logs = await p.api("GET", `/contacts/${id}/interactions`);
    expect(logs.json.data).toHaveLength(1);
    expect(logs.json.data[0]).toMatchObject({ interactionType: { id: "note", name: "Note" }, note: "Called about <substitution>.\nWill call back.", contactId: id });
    const fired = (await events("interaction_log.created")).filter((e: any) => e.data.interactionLog.id === logs.json.data[0].id);
    expect(fired).toHaveLength(1);

    const after = await admin.get(res.location!);
    expect(after.text).toContain("Note added.");
    expect(after.text).toContain("Called about &lt;substitution&gt;.\nWill call back.");
  });

  test("an empty note is refused at Note, 422, and adds nothing", async () => {
    const id = await createInConsole({ firstName: "Empty" });
    await admin.get(`${base}/${id}`);
    const res = await admin.post(`${base}/${id}/notes`, { note: "  " });
    expect(res.status).toBe(422);
    expect(errorAt(res, "f-note")).toBeDefined();
    expect((await p.api("GET", `/contacts/${id}/interactions`)).json.data).toHaveLength(0);
  });

  test("the timeline is newest first, with pages", async () => {
    const id = await createInConsole({ firstName: "Timeline" });
    for (let i = 1; i <= 22; i++) {
      const r = await p.api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: `entry ${i}`, date: `2025-01-${String(i).padStart(2, "0")}T10:00:00Z` } });
      expect(r.status).toBe(201);
    }
    const first = await admin.get(`${base}/${id}`);
    expect(first.text.indexOf("entry 22")).toBeLessThan(first.text.indexOf("entry 21"));
    expect(first.text).not.toContain("entry 2<");
    const older = /href="([^"]*cursor=[^"]*)">Older entries</.exec(first.text)?.[1];
    expect(older).toBeDefined();
    const second = await admin.get(unescape(older!));
    expect(second.status).toBe(200);
    expect(second.text).toContain("entry 2<");
    expect(second.text).toContain("entry 1<");
    expect(second.text).not.toContain("Older entries");
  });

  test("an unknown contact is a 404 page, for its page, its edit form and a note", async () => {
    for (const path of [`${base}/CR-999999`, `${base}/nope`, `${base}/CR-999999/edit`]) {
      const res = await admin.get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/html");
    }
    await admin.get(base);
    expect((await admin.post(`${base}/CR-999999/notes`, { note: "x" })).status).toBe(404);
    expect((await admin.post(`${base}/CR-999999/edit`, { firstName: "x" })).status).toBe(404);
  });

  test("a contact's fields are escaped, never markup: a name like <script> shows as text", async () => {
    const evil = "<script>alert(1)</script>";
    const made = await p.api("POST", "/contacts", { body: { firstName: evil, tags: ['"><img src=x onerror=alert(2)>'] } });
    const id = made.json.contactId;
    for (const path of [`${base}/${id}`, `${base}?search=${encodeURIComponent("script")}`, `${base}/${id}/edit`]) {
      const page = await admin.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toContain(evil);
      expect(page.text, path).not.toContain("<img src=x");
    }
    expect((await admin.get(`${base}/${id}`)).text).toContain("<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>");
  });
});

describe("the contacts list", () => {
  let q: ProjectInfo;
  let list: string;
  const made: Record<string, string> = {};

  beforeAll(async () => {
    q = await srv.newProject({ name: "console-list" });
    list = `/admin/projects/${q.id}/contacts`;
    const lead = (await q.api("GET", "/contact-types")).json.data.find((t: any) => t.category === "Lead");
    for (const [key, body] of [
      ["margaret", { firstName: "Margaret", lastName: "Hamilton", email: "mh@example.com", contactTypeId: lead.id, tags: ["apollo"] }],
      ["katherine", { firstName: "Katherine", lastName: "Johnson", tags: ["apollo", "nasa"] }],
      ["dorothy", { firstName: "Dorothy", lastName: "Vaughan", phone: "+1 757 555 0100", contactTypeId: lead.id }],
    ] as const) {
      const r = await q.api("POST", "/contacts", { body });
      expect(r.status).toBe(201);
      made[key] = r.json.contactId;
    }
  });

  const shown = (page: AdminPage) => [...page.text.matchAll(/<a href="[^"]*\/contacts\/(CR-\d+)">/g)].map((m) => m[1]);

  test("lists every contact, newest update first, each linking to its page, with a New contact button", async () => {
    const page = await admin.get(list);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Contacts</h1>");
    // A button, as docs/admin.md §3 names it, in a GET form: it navigates without script.
    expect(page.text).toMatch(/<form method="get" action="[^"]*\/contacts\/new"[^>]*><button type="submit">New contact<\/button><\/form>/);
    expect(shown(page)).toEqual([made.dorothy, made.katherine, made.margaret]);
    expect(page.text).toContain("Margaret Hamilton");
    expect(page.text).toContain("apollo, nasa");
    for (const label of ["Search", "Contact type", "Category", "Tag"]) expect(page.text).toContain(`>${label}</label>`);
    expect(page.text).toContain(">Search</button>");
  });

  test("search finds by a name prefix, case-insensitively", async () => {
    expect(shown(await admin.get(`${list}?search=kath`))).toEqual([made.katherine]);
    expect(shown(await admin.get(`${list}?search=VAUG`))).toEqual([made.dorothy]);
    expect(shown(await admin.get(`${list}?search=zzz`))).toEqual([]);
  });

  test("filters by contact type, by category and by tag; blank fields are no filter", async () => {
    const lead = (await q.api("GET", "/contact-types")).json.data.find((t: any) => t.category === "Lead");
    expect(shown(await admin.get(`${list}?search=&contactTypeId=${lead.id}&contactTypeCategory=&tag=`))).toEqual([made.dorothy, made.margaret]);
    expect(shown(await admin.get(`${list}?contactTypeCategory=Customer`))).toEqual([made.katherine]);
    expect(shown(await admin.get(`${list}?tag=apollo`))).toEqual([made.katherine, made.margaret]);
    expect(shown(await admin.get(`${list}?tag=${encodeURIComponent("apollo, nasa")}`))).toEqual([made.katherine]);
  });

  test("pages: Next page carries the cursor and the filters, and the last page has none", async () => {
    const first = await admin.get(`${list}?limit=1&tag=apollo`);
    expect(shown(first)).toEqual([made.katherine]);
    const link = /href="([^"]*)">Next page</.exec(first.text)?.[1];
    expect(link).toBeDefined();
    const rest = await admin.get(unescape(link!));
    expect(rest.status).toBe(200);
    expect(shown(rest)).toEqual([made.margaret]); // still only tag apollo
    expect(rest.text).not.toContain("Next page");

    const one = await admin.get(`${list}?limit=2`);
    expect(shown(one)).toEqual([made.dorothy, made.katherine]);
    const next = /href="([^"]*)">Next page</.exec(one.text)?.[1];
    expect(next).toBeDefined();
    const url = new URL(unescape(next!), srv.origin);
    expect(url.searchParams.get("limit")).toBe("2");
    expect(url.searchParams.get("cursor")).toBeTruthy();
    const two = await admin.get(url.pathname + url.search);
    expect(shown(two)).toEqual([made.margaret]);
    expect(two.text).not.toContain("Next page");

    // The cursor is bound to its filters, as in the API.
    url.searchParams.set("search", "margaret");
    const other = await admin.get(url.pathname + url.search);
    expect(other.status).toBe(422);
    expect(other.text).toContain("cursor was issued for other filters.");
  });

  test("a filter the API refuses is shown with the API's message, 422", async () => {
    const cat = await admin.get(`${list}?contactTypeCategory=Nobody`);
    expect(cat.status).toBe(422);
    expect(errorAt(cat, "f-contactTypeCategory")).toBe("contactTypeCategory must be one of Lead, Customer, Personnel, Other.");
    const limit = await admin.get(`${list}?limit=0`);
    expect(limit.status).toBe(422);
    expect(limit.text).toContain("limit must be an integer from 1 to 200.");
    const type = await admin.get(`${list}?contactTypeId=ct_nope`);
    expect(type.status).toBe(422);
    expect(errorAt(type, "f-contactTypeId")).toBe("contactTypeId is not a contact type of this project.");
  });

  test("on a phone's first screen: Search and Sort by shown, the other filters folded under More filters, open while one is set", async () => {
    const folded = (page: AdminPage) => /<details class="more-filters"( open="")?><summary>More filters<\/summary>([\s\S]*?)<\/details>/.exec(page.text);
    const plain = folded(await admin.get(list));
    expect(plain).not.toBeNull();
    expect(plain![1]).toBeUndefined(); // closed
    for (const label of ["Contact type", "Category", "Tag"]) expect(plain![2]).toContain(`>${label}</label>`);
    for (const label of ["Search", "Sort by"]) expect(plain![2]).not.toContain(`>${label}</label>`);
    expect(folded(await admin.get(`${list}?search=&contactTypeId=&contactTypeCategory=&tag=`))![1]).toBeUndefined(); // blank is no filter
    for (const set of ["tag=apollo", "contactTypeCategory=Lead"]) expect(folded(await admin.get(`${list}?${set}`))![1], set).toBe(' open=""');
  });

  test("an empty cell shows a dash, so a phone's card never shows a bare label", async () => {
    const page = await admin.get(`${list}?search=katherine`);
    const row = /<tr>(?:(?!<\/tr>)[\s\S])*Katherine Johnson[\s\S]*?<\/tr>/.exec(page.text)![0];
    for (const label of ["Email", "Phone"]) expect(row).toMatch(new RegExp(`data-label="${label}"[^>]*><span class="none">—</span></td>`));
    expect(row).toMatch(/data-label="Tags"[^>]*>apollo, nasa<\/td>/);
  });

  test("an email wraps only after its @ and dots, never mid-word beside a wide Tags column; under 40rem anywhere", async () => {
    const page = await admin.get(`${list}?search=margaret`);
    expect(page.text).toContain('<td data-label="Email" class="email">mh@<wbr/>example.<wbr/>com</td>');
    const css = await (await fetch(`${srv.origin}${unescape(/href="(\/admin\/assets\/admin\.css[^"]*)"/.exec(page.text)![1]!)}`)).text();
    expect(css).toContain(".table td.email{overflow-wrap:break-word}");
    expect(css).toMatch(/@media \(max-width:40rem\)\{[\s\S]*\.table td,\.table tbody th\{[^}]*overflow-wrap:anywhere/);
  });

  test("Merge with other contacts requires an id; sent empty it stays on a page asking for one, 422; typed ids go to the comparison", async () => {
    const contact = await admin.get(`${list}/${made.margaret}`);
    const form = /<form method="get" action="([^"]*)" aria-label="Merge with other contacts">([\s\S]*?)<\/form>/.exec(contact.text)!;
    expect(form[1]).toBe(`${list}/${made.margaret}/merge-with`);
    expect(form[2]).toMatch(/<input id="f-merge-ids" name="ids" type="text" value="" required=""/);
    for (const ids of ["", "  ", made.margaret!, "nonsense"]) {
      const empty = await admin.get(`${form[1]}?ids=${encodeURIComponent(ids!)}`);
      expect(empty.status, ids).toBe(422);
      expect(empty.text).toContain(`<h1>Merge ${made.margaret} with other contacts</h1>`);
      expect(errorAt(empty, "f-merge-ids")).toStartWith("Name at least one other contact to merge with");
      expect(empty.text).toContain('aria-label="Merge with other contacts"');
    }
    const sent = await admin.get(`${form[1]}?ids=${encodeURIComponent(` ${made.katherine!.toLowerCase()}, ${made.dorothy}`)}`);
    expect(sent.status).toBe(303);
    const to = new URL(sent.location!, srv.origin);
    expect(to.pathname).toBe(`/admin/projects/${q.id}/duplicates/compare`);
    expect(to.searchParams.get("ids")).toBe([made.margaret, made.katherine, made.dorothy].join(","));
    expect(to.searchParams.get("survivor")).toBe(made.margaret);
    expect((await admin.get(sent.location!)).status).toBe(200);
    expect((await admin.get(`${list}/nope/merge-with?ids=CR-1`)).status).toBe(404);
  });

  test("a contact of another project is not found here", async () => {
    expect((await admin.get(`${list}/${made.margaret}`)).status).toBe(200);
    const elsewhere = (await p.api("POST", "/contacts", { body: { firstName: "Elsewhere" } })).json.contactId;
    const res = await admin.get(`${list}?search=elsewhere`);
    expect(shown(res)).toEqual([]);
    expect(Number(elsewhere.slice(3))).toBeGreaterThan(3); // numbers are per project: q has CR-1 to CR-3
    expect((await admin.get(`${list}/${elsewhere}`)).status).toBe(404);
  });
});

describe("the contacts list: total, sorts, pages both ways, links (docs/admin.md §3.2)", () => {
  let r: ProjectInfo;
  let list: string;
  const id: Record<string, string> = {};

  beforeAll(async () => {
    r = await srv.newProject({ name: "console-sorts" });
    list = `/admin/projects/${r.id}/contacts`;
    // Created in this order; "babbage" is touched last, so it is the newest update.
    for (const [key, body] of [
      ["ada", { firstName: "Ada", lastName: "Lovelace", tags: ["math"] }],
      ["babbage", { businessName: "Babbage Engines" }],
      ["nameless", { email: "nameless@example.com", tags: ["math"] }],
      ["alan", { firstName: "Alan", lastName: "Turing", tags: ["math"] }],
      ["grace", { firstName: "Grace", lastName: "hopper" }],
      ["byron", { firstName: "Byron", lastName: "Lovelace", tags: ["math"] }],
    ] as const) {
      const res = await r.api("POST", "/contacts", { body });
      expect(res.status).toBe(201);
      id[key] = res.json.contactId;
    }
    expect((await r.api("PATCH", `/contacts/${id.babbage}`, { body: { notes: "touched" } })).status).toBe(200);
  });

  const shown = (page: AdminPage) => [...page.text.matchAll(/<a href="[^"]*\/contacts\/(CR-\d+)">/g)].map((m) => m[1]);
  const link = (page: AdminPage, name: string) => {
    const m = new RegExp(`href="([^"]*)">${name}<`).exec(page.text);
    return m ? unescape(m[1]!) : undefined;
  };
  const total = (page: AdminPage) => /<p class="total"[^>]*>([^<]*)</.exec(page.text)?.[1];

  test("the total is the exact count of the contacts the filters keep", async () => {
    expect(total(await admin.get(list))).toBe("6 contacts");
    expect(total(await admin.get(`${list}?tag=math`))).toBe("4 contacts match");
    expect(total(await admin.get(`${list}?search=lovelace`))).toBe("2 contacts match");
    expect(total(await admin.get(`${list}?search=turing`))).toBe("1 contact matches");
    // The same total on every page.
    const second = await admin.get(unescape(link(await admin.get(`${list}?tag=math&limit=2`), "Next page")!));
    expect(total(second)).toBe("4 contacts match");
    expect((await admin.get(`${list}?search=nobody`)).text).toContain("No contacts match.");
  });

  test("sorts: last updated (the default, as the API), newest first, and name A→Z by last name, first name, else business name, nameless last", async () => {
    const api = (await r.api("GET", "/contacts")).json.data.map((c: any) => c.contactId);
    expect(shown(await admin.get(list))).toEqual(api);
    expect(shown(await admin.get(`${list}?sort=updated`))).toEqual(api);
    expect(api[0]).toBe(id.babbage);
    expect(shown(await admin.get(`${list}?sort=created`))).toEqual(["byron", "grace", "alan", "nameless", "babbage", "ada"].map((k) => id[k]));
    const byName = await admin.get(`${list}?sort=name`);
    expect(shown(byName)).toEqual(["babbage", "grace", "ada", "byron", "alan", "nameless"].map((k) => id[k]));
    expect(byName.text).toMatch(/<option value="name" selected="">Name \(A–Z\)<\/option>/);
    // The date column follows the sort.
    expect(byName.text).toContain('<th scope="col">Updated</th>');
    expect((await admin.get(`${list}?sort=created`)).text).toContain('<th scope="col">Created</th>');
  });

  test("each sort pages forwards and back: Next then Previous gives the same page, and the first page has no Previous", async () => {
    for (const query of ["sort=updated", "sort=created", "sort=name", "sort=name&tag=math", "sort=created&search=lovelace"]) {
      const expected = shown(await admin.get(`${list}?${query}&limit=200`));
      const pages: AdminPage[] = [await admin.get(`${list}?${query}&limit=2`)];
      expect(pages[0]!.text, query).not.toContain("Previous page");
      while (link(pages.at(-1)!, "Next page")) pages.push(await admin.get(link(pages.at(-1)!, "Next page")!));
      expect(pages.flatMap(shown), query).toEqual(expected);
      // Back from the last page to the first, one page at a time.
      for (let i = pages.length - 1; i > 0; i--) {
        const back = await admin.get(link(pages[i]!, "Previous page")!);
        expect(back.status, query).toBe(200);
        expect(shown(back), `${query}: page ${i}`).toEqual(shown(pages[i - 1]!));
        expect(back.text.includes("Previous page"), `${query}: page ${i}`).toBe(i - 1 > 0);
        expect(link(back, "Next page"), query).toBeDefined();
      }
    }
  });

  test("a cursor belongs to its sort and filters; an unknown sort is refused at Sort by, 422", async () => {
    const next = link(await admin.get(`${list}?sort=name&limit=2`), "Next page")!;
    const other = await admin.get(next.replace("sort=name", "sort=created"));
    expect(other.status).toBe(422);
    expect(other.text).toContain("cursor was issued for other filters.");
    const bad = await admin.get(`${list}?sort=email`);
    expect(bad.status).toBe(422);
    expect(errorAt(bad, "f-sort")).toBe("sort must be one of updated, created, name.");
  });

  test("names link to the contact's page; the rows are cards with labelled cells on a phone", async () => {
    const page = await admin.get(`${list}?sort=name`);
    expect(link(page, "Ada Lovelace")).toBe(`${list}/${id.ada}`);
    expect(link(page, "Babbage Engines")).toBe(`${list}/${id.babbage}`);
    expect(link(page, id.nameless!)).toBe(`${list}/${id.nameless}`); // no name: its contactId
    const opened = await admin.get(link(page, "Ada Lovelace")!);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain("<h1>Ada Lovelace</h1>");
    const cells = [...page.text.matchAll(/<td\b[^>]*>/g)].map(([td]) => td);
    expect(cells.length).toBeGreaterThan(0);
    for (const td of cells) expect(td).toMatch(/data-label="[^"]+"/);
  });
});

describe("the contacts list's total past its bound (docs/admin.md §3.2: \"more than 10,000\")", () => {
  test("counting stops at the bound and says more than it; below it the count is exact, with and without filters", async () => {
    const { loadConfig } = await import("../../src/config.ts");
    const { openStorage } = await import("../../src/storage/index.ts");
    const { listConsoleContacts, COUNT_LIMIT } = await import("../../src/contacts/console-list.ts");
    const { CursorCodec } = await import("../../src/lib/cursor.ts");
    const { totalText } = await import("../../src/admin/pages/contacts-list-query.ts");
    expect(COUNT_LIMIT).toBe(10_000);
    const s = await srv.newProject({ name: "console-bound" });
    const items = Array.from({ length: 12 }, (_, i) => ({ firstName: `Bound${i}`, lastName: i % 2 ? "Even" : "Odd", tags: ["many"] }));
    expect((await s.api("POST", "/contacts/batch", { body: { operation: "create", items } })).status).toBe(200);
    const storage = await openStorage(loadConfig(srv.env));
    try {
      const cursors = new CursorCodec("bound");
      for (const smallSet of [0, 10_000]) {
        // smallSet 0: every filter is checked on a walk of the project; else a filter of up to 10,000 contacts drives.
        const list = (filters: Record<string, unknown>, countLimit: number, sort: "updated" | "name" = "updated") =>
          listConsoleContacts(storage.db, cursors, s.id, { filters, sort, limit: 5 }, { countLimit, smallSet });
        expect((await list({ tag: "many" }, 10)).total).toEqual({ count: 10, exact: false });
        expect((await list({ tag: "many" }, 12)).total).toEqual({ count: 12, exact: true });
        expect((await list({ search: "bound" }, 5, "name")).total).toEqual({ count: 5, exact: false });
        expect((await list({ search: "even" }, 6)).total).toEqual({ count: 6, exact: true });
        expect((await list({ search: "even", tag: "many" }, 3)).total).toEqual({ count: 3, exact: false });
        expect((await list({ search: "even", tag: "many" }, 100)).total).toEqual({ count: 6, exact: true });
        // No filter: the project's own count, exact whatever the bound.
        expect((await list({}, 3)).total).toEqual({ count: 12, exact: true });
      }
      // A walk and a driving filter page alike, in every sort.
      for (const sort of ["updated", "created", "name"] as const) {
        const orders: string[][] = [];
        for (const smallSet of [0, 10_000]) {
          const ids: string[] = [];
          let cursor: string | undefined;
          for (;;) {
            const page = await listConsoleContacts(storage.db, cursors, s.id, { filters: { tag: "many" }, sort, limit: 5, cursor }, { smallSet });
            ids.push(...page.contacts.map((c) => c.contactId));
            if (!page.next) break;
            cursor = page.next;
          }
          orders.push(ids);
        }
        expect(orders[0], sort).toEqual(orders[1]!);
        expect(new Set(orders[0]).size, sort).toBe(12);
      }
      expect(totalText({ count: 10_000, exact: false }, false)).toBe("More than 10,000 contacts");
      expect(totalText({ count: 10_000, exact: false }, true)).toBe("More than 10,000 contacts match");
      expect(totalText({ count: 1234, exact: true }, false)).toBe("1,234 contacts");
    } finally {
      await storage.close();
    }
  });
});
