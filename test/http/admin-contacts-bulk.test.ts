/**
 * Bulk actions on the console's contacts list (docs/admin.md §3): tick
 * contacts, add or remove a tag, or delete them after a confirmation. Each contact is done
 * as its single API call would be (PATCH, DELETE: the same events, change records and
 * duplicate groups), in one unit of work; a contact that fails is listed with the API's
 * reason and the others are done. Checked through the API: contacts, events, GET /changes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signedInAdmin, tableRows, type AdminClient, type AdminPage } from "../helpers/admin.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  ({ client: admin } = await signedInAdmin(srv.origin, srv.env));
});
afterAll(() => srv?.stop());

const unescape = (s: string) =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

/** A project with contacts made through the API; returns their contactIds by key. */
async function projectWith(name: string, people: Record<string, Record<string, unknown>>) {
  const p = await srv.newProject({ name });
  const ids: Record<string, string> = {};
  for (const [key, body] of Object.entries(people)) {
    const res = await p.api("POST", "/contacts", { body });
    expect(res.status).toBe(201);
    ids[key] = res.json.contactId;
  }
  return { p, ids, list: `/admin/projects/${p.id}/contacts` };
}

const tagsOf = async (p: ProjectInfo, id: string) => ((await p.api("GET", `/contacts/${id}`)).json.tags as any[]).map((t) => t.name).sort();
const eventsOf = async (p: ProjectInfo, type: string) => (await walk(p.api, "/events")).items.filter((e: any) => e.event === type);
/** The project's change records (docs/api.md §19.2) of `action`: a few, on one page. */
const changesOf = async (p: ProjectInfo, action: string) => {
  const res = await p.api("GET", "/changes", { query: { limit: 1000, object: "contact" } });
  expect(res.status).toBe(200);
  return (res.json.data as any[]).filter((c) => c.action === action);
};
const errorAt = (page: AdminPage, id: string) => {
  const m = new RegExp(`id="${id}-error"[^>]*>([^<]*)<`).exec(page.text);
  return m ? unescape(m[1]!) : undefined;
};

describe("the list's selection", () => {
  test("each row has a box to tick, labelled by the contact; the select-all box stays hidden until the script runs", async () => {
    const { ids, list } = await projectWith("bulk-boxes", { ada: { firstName: "Ada", lastName: "Lovelace" } });
    const page = await admin.get(list);
    expect(page.text).toMatch(new RegExp(`<input type="checkbox" name="contactIds" value="${ids.ada}" aria-label="Select Ada Lovelace"`));
    expect(page.text).toMatch(/<div class="check select-all" hidden=""><input type="checkbox" id="select-all" data-select-all="contactIds"/);
    expect(page.text).toMatch(/<form method="post" action="[^"]*\/contacts\/bulk" class="bulk" aria-label="Selected contacts">/);
    for (const label of ["Add tag", "Remove tag", "Delete selected"]) expect(page.text).toContain(`>${label}</button>`);
    expect(page.text).toContain(">Tag to add or remove</label>");
  });
});

describe("adding and removing a tag", () => {
  test("Add tag adds it to each ticked contact as PATCH does: contact.updated and an updated change for each changed one, none for one that had it", async () => {
    const { p, ids, list } = await projectWith("bulk-tag", {
      ada: { firstName: "Ada", tags: ["vip"] },
      alan: { firstName: "Alan" },
      grace: { firstName: "Grace" },
      other: { firstName: "Untouched" },
    });
    await admin.get(`${list}?sort=name`);
    const res = await admin.post(`${list}/bulk`, { back: "?sort=name", action: "add-tag", bulkTag: " VIP ", contactIds: [ids.ada!, ids.alan!, ids.grace!] });
    expect(res.status, res.text.slice(0, 1500)).toBe(303);
    expect(res.location).toBe(`${list}?sort=name&done=tagged&n=2&u=1`);
    const after = await admin.get(res.location!);
    expect(after.text).toContain("Tag added to 2 contacts. 1 contact already had it.");
    expect(after.text).toMatch(/<option value="name" selected="">/); // back on the same list
    for (const k of ["ada", "alan", "grace"]) expect(await tagsOf(p, ids[k]!), k).toEqual(["vip"]); // the existing tag, by its name in any case
    expect(await tagsOf(p, ids.other!)).toEqual([]);
    const updated = await eventsOf(p, "contact.updated");
    expect(updated.map((e: any) => e.data.contact.contactId).sort()).toEqual([ids.alan, ids.grace].sort());
    for (const e of updated) expect(e.data.changedFields).toEqual(["tags"]);
    expect((await changesOf(p, "updated")).map((c: any) => c.id).sort()).toEqual([ids.alan, ids.grace].sort());

    // A new name makes the tag, as PATCH does.
    const made = await admin.post(`${list}/bulk`, { back: "", action: "add-tag", bulkTag: "Speaker", contactIds: [ids.alan!] });
    expect(made.location).toBe(`${list}?done=tagged&n=1`);
    expect(await tagsOf(p, ids.alan!)).toEqual(["Speaker", "vip"]);
  });

  test("Remove tag takes it off each ticked contact that has it; an unknown tag is refused at the field, with the boxes still ticked", async () => {
    const { p, ids, list } = await projectWith("bulk-untag", {
      ada: { firstName: "Ada", tags: ["vip", "math"] },
      alan: { firstName: "Alan", tags: ["vip"] },
      grace: { firstName: "Grace" },
    });
    await admin.get(list);
    const unknown = await admin.post(`${list}/bulk`, { back: "", action: "remove-tag", bulkTag: "nosuch", contactIds: [ids.ada!, ids.grace!] });
    expect(unknown.status).toBe(422);
    expect(errorAt(unknown, "f-bulkTag")).toBe('This project has no tag named "nosuch".');
    expect(unknown.text).toMatch(new RegExp(`value="${ids.ada}" checked=""`));
    expect(unknown.text).not.toMatch(new RegExp(`value="${ids.alan}" checked=""`));

    const res = await admin.post(`${list}/bulk`, { back: "", action: "remove-tag", bulkTag: "vip", contactIds: [ids.ada!, ids.alan!, ids.grace!] });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${list}?done=untagged&n=2&u=1`);
    expect(await tagsOf(p, ids.ada!)).toEqual(["math"]);
    expect(await tagsOf(p, ids.alan!)).toEqual([]);
    const updated = await eventsOf(p, "contact.updated");
    expect(updated.map((e: any) => e.data.contact.contactId).sort()).toEqual([ids.ada, ids.alan].sort());
    expect(updated.find((e: any) => e.data.contact.contactId === ids.ada).data.previous.tags.map((t: any) => t.name).sort()).toEqual(["math", "vip"]);
  });

  test("nothing ticked, no tag, or more than 200 contacts is refused on the list, 422, and changes nothing", async () => {
    const { p, ids, list } = await projectWith("bulk-refused", { ada: { firstName: "Ada" } });
    await admin.get(list);
    const none = await admin.post(`${list}/bulk`, { back: "", action: "add-tag", bulkTag: "vip" });
    expect(none.status).toBe(422);
    expect(none.text).toContain("Select at least one contact.");
    expect(none.text).toContain('href="#bulk-actions"');
    const blank = await admin.post(`${list}/bulk`, { back: "", action: "add-tag", bulkTag: "  ", contactIds: [ids.ada!] });
    expect(blank.status).toBe(422);
    expect(errorAt(blank, "f-bulkTag")).toBe("Enter the tag to add.");
    const many = Array.from({ length: 201 }, (_, i) => `CR-${i + 1}`);
    const tooMany = await admin.post(`${list}/bulk`, { back: "", action: "delete", contactIds: many });
    expect(tooMany.status).toBe(422);
    expect(tooMany.text).toContain("Select at most 200 contacts at a time.");
    expect(await tagsOf(p, ids.ada!)).toEqual([]);
    expect((await p.api("GET", `/contacts/${ids.ada}`)).status).toBe(200);
    expect(await eventsOf(p, "contact.updated")).toHaveLength(0);
  });
});

describe("deleting", () => {
  test("Delete selected asks first and deletes nothing; the confirmed post moves them to the trash as DELETE does", async () => {
    const { p, ids, list } = await projectWith("bulk-delete", {
      ada: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
      twin: { firstName: "Ada", email: "ADA@example.com" },
      alan: { firstName: "Alan", lastName: "Turing" },
      keep: { firstName: "Kept" },
    });
    // The two Adas share an email: a duplicate group, which the delete dissolves (docs/api.md §20).
    expect((await p.api("GET", "/duplicates")).json.data).toHaveLength(1);
    await admin.get(list);
    const chosen = [ids.twin!, ids.alan!];
    const ask = await admin.post(`${list}/bulk`, { back: "?sort=name", action: "delete", contactIds: chosen });
    expect(ask.status).toBe(200);
    expect(ask.text).toContain("<h1>Delete 2 contacts?</h1>");
    expect(ask.text).toContain(`<li>Ada (${ids.twin})</li>`);
    expect(ask.text).toContain(`<li>Alan Turing (${ids.alan})</li>`);
    expect(ask.text).toContain(">Delete contacts</button>");
    // The names wrap on a phone; the list never scrolls, sideways or down (docs/admin.md §3.2).
    const css = await (await fetch(`${srv.origin}${unescape(/href="(\/admin\/assets\/admin\.css[^"]*)"/.exec(ask.text)![1]!)}`)).text();
    const names = [...css.matchAll(/(?:^|\})\s*[^{}]*ul\.names[^{}]*\{([^}]*)\}/g)].map((m) => m[1]).join(";");
    expect(names).toContain("overflow-wrap:anywhere");
    expect(names).not.toMatch(/overflow(-x|-y)?:(auto|scroll)|max-height/);
    expect(ask.text).toContain(`href="${list}?sort=name" class="button secondary">Cancel</a>`);
    for (const id of Object.values(ids)) expect((await p.api("GET", `/contacts/${id}`)).status).toBe(200);
    expect(await eventsOf(p, "contact.deleted")).toHaveLength(0);

    // What the confirmation page posts: its hidden fields.
    const hidden = Object.fromEntries(
      ["confirm", "action", "back"].map((n) => [n, unescape(new RegExp(`name="${n}" value="([^"]*)"`).exec(ask.text)![1]!)]),
    );
    const carried = [...ask.text.matchAll(/name="contactIds" value="([^"]*)"/g)].map((m) => m[1]!);
    expect(carried).toEqual(chosen);
    const done = await admin.post(`${list}/bulk`, { ...hidden, contactIds: carried });
    expect(done.status, done.text.slice(0, 1500)).toBe(303);
    expect(done.location).toBe(`${list}?sort=name&done=deleted&n=2`);
    expect((await admin.get(done.location!)).text).toContain("Moved 2 contacts to the trash.");

    for (const id of chosen) expect((await p.api("GET", `/contacts/${id}`)).status).toBe(404);
    for (const id of [ids.ada!, ids.keep!]) expect((await p.api("GET", `/contacts/${id}`)).status).toBe(200);
    const deleted = await eventsOf(p, "contact.deleted");
    expect(deleted.map((e: any) => e.data.contactId).sort()).toEqual([...chosen].sort());
    for (const e of deleted) expect(e.data.reason).toBe("deleted");
    expect((await changesOf(p, "deleted")).map((c: any) => c.id).sort()).toEqual([...chosen].sort());
    expect((await p.api("GET", "/duplicates")).json.data).toHaveLength(0);
    const listed = (await p.api("GET", "/contacts")).json.data.map((c: any) => c.contactId).sort();
    expect(listed).toEqual([ids.ada, ids.keep].sort());
    expect((await admin.get(list)).text).toContain('<p class="total" id="contacts-total">2 contacts</p>');
    // Restored like any deleted contact.
    expect((await p.api("POST", `/contacts/${ids.alan}/restore`)).status).toBe(200);
  });

  test("a contact merged away meanwhile is listed with the API's reason and its survivor; the others are done", async () => {
    const { p, ids, list } = await projectWith("bulk-merged", {
      survivor: { firstName: "Ada", email: "ada@example.com" },
      merged: { firstName: "Ada L", email: "ada@example.com" },
      alan: { firstName: "Alan" },
    });
    await admin.get(list); // the list as it was, both Adas on it
    const merge = await p.api("POST", `/contacts/${ids.survivor}/merge`, { body: { contactIds: [ids.merged] } });
    expect(merge.status, JSON.stringify(merge.json)).toBe(200);
    const res = await admin.post(`${list}/bulk`, { back: "", action: "add-tag", bulkTag: "vip", contactIds: [ids.merged!, ids.alan!] });
    expect(res.status).toBe(200);
    expect(res.text).toContain("<h1>1 contact was not changed</h1>");
    expect(res.text).toContain("Tag &quot;vip&quot; added to 1 contact.");
    const rows = tableRows(res.text, "Contacts not changed");
    expect(rows).toHaveLength(1);
    expect(rows[0]![0]).toBe(ids.merged);
    expect(rows[0]![1]).toContain(`merged into ${ids.survivor}`);
    expect(res.text).toContain(`href="${list}/${ids.survivor}">Open ${ids.survivor}</a>`);
    expect(await tagsOf(p, ids.alan!)).toEqual(["vip"]);
    expect(await tagsOf(p, ids.survivor!)).toEqual([]);

    // The same for a delete: the live one goes to the trash, the merged-away one is reported.
    await admin.get(list);
    const confirmed = await admin.post(`${list}/bulk`, { confirm: "yes", back: "", action: "delete", contactIds: [ids.merged!, ids.alan!] });
    expect(confirmed.status).toBe(200);
    expect(tableRows(confirmed.text, "Contacts not changed").map((r) => r[0])).toEqual([ids.merged]);
    expect((await p.api("GET", `/contacts/${ids.alan}`)).status).toBe(404);
    expect((await p.api("GET", `/contacts/${ids.survivor}`)).status).toBe(200);
    expect((await eventsOf(p, "contact.deleted")).map((e: any) => e.data.contactId)).toContain(ids.alan);
  });
});
