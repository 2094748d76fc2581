/**
 * The console's contact timeline shows the change history beside the interactions (docs/api.md
 * §19; docs/admin.md §3): one list, newest first, each change with its action, who made it
 * (an API key by name, an admin by email), when, and for an update the fields from → to,
 * escaped; pages that continue both kinds where the previous page stopped. On the real server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pageText, signedInAdmin, type AdminClient, type AdminPage } from "../helpers/admin.ts";
import { ALL_SCOPES, startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;
let adminEmail: string;
let p: ProjectInfo;
let base: string;
/** A named key of the project: its changes show its name. */
let key: { id: string; key: string };
const KEY_NAME = "Zapier sync";

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  const signedIn = await signedInAdmin(srv.origin, srv.env);
  admin = signedIn.client;
  adminEmail = signedIn.account.email;
  p = await srv.newProject({ name: "console-history", rateLimitPerMinute: 10_000 });
  key = await srv.createKey({ scopes: ALL_SCOPES, projectId: p.id, name: KEY_NAME });
  base = `/admin/projects/${p.id}/contacts`;
});
afterAll(() => srv?.stop());

const api = async (method: string, path: string, body?: unknown) => {
  const res = await srv.api(method, path, { key: key.key, body });
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 500)}`).toBeLessThan(300);
  return res.json;
};

const unescape = (s: string) =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

/** The timeline's entries as they read: the html of each `<li>` of the list "Timeline, newest first", its text, and its first line without the time. */
function timeline(page: AdminPage): Array<{ html: string; text: string; meta: string }> {
  const start = page.text.indexOf('aria-label="Timeline, newest first"');
  if (start < 0) return [];
  const list = page.text.slice(start, page.text.indexOf("</ol>", start));
  return list
    .split(/<li\b[^>]*>/)
    .slice(1)
    .map((html) => ({ html, text: pageText(html), meta: pageText(/<p class="meta">([\s\S]*?)<\/p>/.exec(html)?.[1] ?? "").replace(/^\S+ \S+ UTC · /, "") }));
}

/** The link to the next (older) page of the timeline, if any. */
const olderLink = (page: AdminPage) => {
  const href = /href="([^"]*)">Older entries</.exec(page.text)?.[1];
  return href === undefined ? undefined : unescape(href);
};

/** What a browser would post from the edit form: its inputs, ticked boxes, selected options, textareas. */
function formFields(page: AdminPage): Record<string, string[]> {
  const start = page.text.indexOf('aria-label="Contact details"');
  const form = page.text.slice(start, page.text.indexOf("</form>", start));
  const attr = (tag: string, name: string) => {
    const m = new RegExp(`\\s${name}(?:="([^"]*)")?(?=[\\s/>])`).exec(tag);
    return m ? unescape(m[1] ?? "") : undefined;
  };
  const out: Record<string, string[]> = {};
  const add = (name: string | undefined, value: string) => name && name !== "_csrf" && (out[name] ??= []).push(value);
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const type = attr(tag, "type");
    if ((type === "checkbox" || type === "radio") && attr(tag, "checked") === undefined) continue;
    add(attr(tag, "name"), attr(tag, "value") ?? "");
  }
  for (const [, tag, body] of form.matchAll(/(<textarea\b[^>]*>)([\s\S]*?)<\/textarea>/g)) add(attr(tag!, "name"), unescape(body!));
  for (const [, tag, body] of form.matchAll(/(<select\b[^>]*>)([\s\S]*?)<\/select>/g)) {
    const options = [...body!.matchAll(/<option\b[^>]*>/g)].map(([o]) => o);
    const chosen = options.find((o) => attr(o, "selected") !== undefined) ?? options[0];
    add(attr(tag!, "name"), chosen ? (attr(chosen, "value") ?? "") : "");
  }
  return out;
}

describe("the contact's timeline shows its change history (docs/api.md §19)", () => {
  test("after an API create, a note, an API PATCH of the email and a console edit, the page lists them newest first with who made each and the email's from → to, escaped", async () => {
    const evil = "<script>alert(1)</script>";
    const made = await api("POST", "/contacts", { firstName: evil, email: "old@example.com", tags: ["vip"] });
    const id = made.contactId as string;
    await api("POST", `/contacts/${id}/interactions`, { type: "note", note: "Called <b>them</b>." });
    await api("PATCH", `/contacts/${id}`, { email: "new@example.com", tags: ["vip", '"><img src=x onerror=alert(2)>'] });

    const edit = await admin.get(`${base}/${id}/edit`);
    expect(edit.status).toBe(200);
    const saved = await admin.post(`${base}/${id}/edit`, { ...formFields(edit), lastName: "Hopper" });
    expect(saved.status, saved.text.slice(0, 1000)).toBe(303);

    const page = await admin.get(`${base}/${id}`);
    expect(page.status).toBe(200);
    const entries = timeline(page);
    expect(entries.map((e) => e.meta)).toEqual([
      `Change: Contact updated · by ${adminEmail} (admin)`,
      `Change: Contact updated · by ${KEY_NAME} (API key)`,
      "Interaction: Note",
      `Change: Contact created · by ${KEY_NAME} (API key)`,
    ]);
    const [consoleEdit, patch, , created] = entries as [(typeof entries)[0], (typeof entries)[0], unknown, (typeof entries)[0]];
    expect(consoleEdit.text).toContain("Last name — → Hopper");
    expect(consoleEdit.text).not.toContain("Email");
    expect(patch.text).toContain("Email old@example.com → new@example.com");
    // Tags by name, before and after.
    expect(patch.text).toContain(`Tags vip → "><img src=x onerror=alert(2)>, vip`);
    expect(created.text).toContain(`First name ${evil}`);
    expect(created.text).toContain("Email old@example.com");

    // Everything a person typed is text, never markup.
    expect(page.text).not.toContain(evil);
    expect(page.text).not.toContain("<img src=x");
    expect(page.text).not.toContain("<b>them</b>");
    expect(created.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(patch.html).toContain("&lt;img src=x onerror=alert(2)&gt;");
  });

  test("a long value is cut short on the timeline; trash and restore show as their actions", async () => {
    const long = `${"word ".repeat(100)}END`;
    const made = await api("POST", "/contacts", { firstName: "Long" });
    const id = made.contactId as string;
    await api("PATCH", `/contacts/${id}`, { notes: long });
    expect((await srv.api("DELETE", `/contacts/${id}`, { key: key.key })).status).toBe(204);
    await api("POST", `/contacts/${id}/restore`);

    const entries = timeline(await admin.get(`${base}/${id}`));
    expect(entries.map((e) => e.meta.split(" · by ")[0])).toEqual([
      "Change: Restored from the trash",
      "Change: Moved to the trash",
      "Change: Contact updated",
      "Change: Contact created",
    ]);
    const update = entries[2]!.text;
    expect(update).toContain("Notes — → word word");
    expect(update).toContain("…");
    expect(update).not.toContain("END");
    expect(update.length).toBeLessThan(300);
  });

  test("pages: interactions and changes interleaved by time across pages, each entry once, newest first, the last page without a link", async () => {
    const made = await api("POST", "/contacts", { firstName: "Paged" });
    const id = made.contactId as string;
    // 30 notes and 30 updates, alternating: the timeline holds 61 entries.
    for (let i = 1; i <= 30; i++) {
      await api("POST", `/contacts/${id}/interactions`, { type: "note", note: `note ${i}.` });
      await api("PATCH", `/contacts/${id}`, { lastName: `Name ${i}` });
    }
    const seen: string[] = [];
    let path: string | undefined = `${base}/${id}`;
    let pages = 0;
    while (path) {
      const page = await admin.get(path);
      expect(page.status, page.text.slice(0, 500)).toBe(200);
      pages += 1;
      for (const e of timeline(page)) {
        const note = /note (\d+)\./.exec(e.text);
        const name = /→ Name (\d+)/.exec(e.text);
        seen.push(note ? `note ${note[1]}` : name ? `name ${name[1]}` : /Contact created/.test(e.text) ? "created" : `? ${e.text}`);
      }
      path = olderLink(page);
      expect(pages).toBeLessThan(10);
    }
    const expected = ["created", ...Array.from({ length: 30 }, (_, i) => [`note ${i + 1}`, `name ${i + 1}`]).flat()].reverse();
    expect(seen).toEqual(expected);
    expect(pages).toBeGreaterThan(1);
  });
});
