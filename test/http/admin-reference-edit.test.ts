/**
 * Editing and removing reference data in the console (docs/admin.md §3):
 * contact types, interaction types, custom fields and tags, each change checked through
 * the API. Removals ask for a confirmation first (the first POST changes nothing); a
 * record something refers to is refused with the reason. Tag merges and deletions change
 * their contacts as the API's PATCH does: change records by the admin, contact.updated
 * events. Archiving a custom field asks first and only stops the console offering it; the
 * API is unchanged. One server for the file, a fresh project per test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdminClient, pageText, signedInAdmin } from "../helpers/admin.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { FieldChoices } from "../../src/admin/pages/form-fields.tsx";

let srv: ServerHandle;
let admin: AdminClient;

beforeAll(async () => {
  srv = await startServer({});
  admin = (await signedInAdmin(srv.origin, srv.env)).client;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

let n = 0;
const project = () => srv.newProject({ name: `reference-${++n}` });
const ref = (p: ProjectInfo, path = "") => `/admin/projects/${p.id}/reference${path}`;
/** The project's own key: a rotating key would cost a CLI run now and then. */
const api = (p: ProjectInfo, method: string, path: string, opts: { body?: unknown; query?: Record<string, string | number> } = {}) => srv.api(method, path, { ...opts, key: p.key });
const list = async (p: ProjectInfo, what: string) => (await api(p, "GET", `/${what}`, { query: { limit: 200 } })).json.data as any[];
const byName = async (p: ProjectInfo, what: string, name: string) => (await list(p, what)).find((r) => (r.name ?? r.title) === name);
const created = async (p: ProjectInfo, body: Record<string, unknown>) => {
  const res = await api(p, "POST", "/contacts", { body });
  expect(res.status).toBe(201);
  return res.json;
};

/** Posts a removal (or merge) twice: the first answer is the confirmation page and changes nothing (`unchanged` is checked in between). */
async function confirmTwice(path: string, fields: Record<string, string>, unchanged: () => Promise<void>) {
  const ask = await admin.post(path, fields);
  expect(ask.status).toBe(200);
  expect(ask.text).toContain('name="confirm" value="yes"');
  expect(ask.text).toContain("Cancel");
  await unchanged();
  return admin.post(path, { ...fields, confirm: "yes" });
}

describe("contact types", () => {
  test("a contact type's name and category are edited, and it can be made the default for new contacts", async () => {
    const p = await project();
    const lead = await byName(p, "contact-types", "Lead");
    const page = await admin.get(ref(p, `/contact-types/${lead.id}`));
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Contact type Lead</h1>");
    const saved = await admin.post(ref(p, `/contact-types/${lead.id}`), { name: "Prospect", category: "Other", isDefault: "on" });
    expect(saved.status).toBe(303);
    expect((await admin.get(saved.location!)).text).toContain("Contact type saved.");
    const types = await list(p, "contact-types");
    expect(types.find((t) => t.id === lead.id)).toEqual({ id: lead.id, name: "Prospect", category: "Other", isDefault: true });
    expect(types.filter((t) => t.isDefault)).toHaveLength(1);
    expect((await created(p, { firstName: "Ada" })).contactType).toEqual({ id: lead.id, name: "Prospect", category: "Other" });
  });

  test("an edit the rules refuse is shown at its field (422) and changes nothing", async () => {
    const p = await project();
    const lead = await byName(p, "contact-types", "Lead");
    const res = await admin.post(ref(p, `/contact-types/${lead.id}`), { name: "x".repeat(256), category: "Lead" });
    expect(res.status).toBe(422);
    expect(pageText(res.text)).toContain("Name must have 1–255 characters.");
    expect((await byName(p, "contact-types", "Lead")).id).toBe(lead.id);
  });

  test("Delete asks first; a type a contact has is refused with the reason; an unused type is deleted after the confirmation", async () => {
    const p = await project();
    const lead = await byName(p, "contact-types", "Lead");
    const other = await byName(p, "contact-types", "Other");
    await created(p, { firstName: "Ada", contactTypeId: lead.id });
    const refused = await confirmTwice(ref(p, `/contact-types/${lead.id}/delete`), {}, async () => {});
    expect(refused.status).toBe(409);
    expect(pageText(refused.text)).toContain("1 contact has this type (the trash included): give them another type first.");
    expect(await byName(p, "contact-types", "Lead")).toBeDefined();

    const done = await confirmTwice(ref(p, `/contact-types/${other.id}/delete`), {}, async () => {
      expect(await byName(p, "contact-types", "Other")).toBeDefined();
    });
    expect(done.status).toBe(303);
    expect((await admin.get(done.location!)).text).toContain("Contact type deleted.");
    expect(await byName(p, "contact-types", "Other")).toBeUndefined();
  });

  test("the default type offers no Delete, and a confirmed delete of it is refused", async () => {
    const p = await project();
    const customer = await byName(p, "contact-types", "Customer");
    const page = await admin.get(ref(p, `/contact-types/${customer.id}`));
    expect(page.text).not.toContain(">Delete contact type<");
    const res = await admin.post(ref(p, `/contact-types/${customer.id}/delete`), { confirm: "yes" });
    expect(res.status).toBe(409);
    expect(pageText(res.text)).toContain("The default type cannot be deleted: make another type the default first.");
  });
});

describe("interaction types", () => {
  test("a rename shows on the logs of the type; a type a log has cannot be deleted, an unused one can after the confirmation", async () => {
    const p = await project();
    const call = await byName(p, "interaction-types", "Call");
    const email = await byName(p, "interaction-types", "Email");
    const contact = await created(p, { firstName: "Ada" });
    expect((await api(p, "POST", `/contacts/${contact.contactId}/interactions`, { body: { interactionTypeId: call.id, note: "Rang" } })).status).toBe(201);
    expect((await admin.post(ref(p, `/interaction-types/${call.id}`), { name: "Phone call" })).status).toBe(303);
    const logs = (await api(p, "GET", `/contacts/${contact.contactId}/interactions`)).json.data;
    expect(logs[0].interactionType).toEqual({ id: call.id, name: "Phone call" });

    const refused = await confirmTwice(ref(p, `/interaction-types/${call.id}/delete`), {}, async () => {});
    expect(refused.status).toBe(409);
    expect(pageText(refused.text)).toContain("1 interaction log has this type: it cannot be deleted.");
    const done = await confirmTwice(ref(p, `/interaction-types/${email.id}/delete`), {}, async () => {
      expect(await byName(p, "interaction-types", "Email")).toBeDefined();
    });
    expect(done.status).toBe(303);
    expect(await byName(p, "interaction-types", "Email")).toBeUndefined();
  });
});

describe("custom fields", () => {
  const field = async (p: ProjectInfo, title: string, type: string, options?: string) => {
    const args = ["custom-field", "create", "--project", p.id, "--title", title, "--type", type, "--json"];
    return srv.cli(options ? [...args, "--options", options] : args);
  };

  test("a field's title and options are edited; an option a contact holds cannot be taken away", async () => {
    const p = await project();
    const tier = await field(p, "Tier", "select", "gold,silver");
    await created(p, { firstName: "Ada", customFields: { [tier.id]: "gold" } });
    const saved = await admin.post(ref(p, `/custom-fields/${tier.id}`), { title: "Level", options: "gold, silver, bronze" });
    expect(saved.status).toBe(303);
    expect(await byName(p, "custom-fields", "Level")).toMatchObject({ id: tier.id, type: "select", options: ["gold", "silver", "bronze"] });
    const refused = await admin.post(ref(p, `/custom-fields/${tier.id}`), { title: "Level", options: "silver, bronze" });
    expect(refused.status).toBe(422);
    expect(pageText(refused.text)).toContain("Options must keep gold: contacts hold it.");
    expect((await byName(p, "custom-fields", "Level")).options).toEqual(["gold", "silver", "bronze"]);
    // A new option is the API's at once.
    expect((await created(p, { firstName: "Grace", customFields: { [tier.id]: "bronze" } })).customFields[tier.id]).toBe("bronze");
  });

  test("a title another field has is refused at the field", async () => {
    const p = await project();
    const a = await field(p, "Alpha", "text");
    await field(p, "Beta", "text");
    const res = await admin.post(ref(p, `/custom-fields/${a.id}`), { title: "Beta" });
    expect(res.status).toBe(422);
    expect(pageText(res.text)).toMatch(/Title is already used by custom field cf_/);
  });

  test("Delete asks first; a field a contact holds is refused; an unused field is deleted after the confirmation", async () => {
    const p = await project();
    const held = await field(p, "Held", "text");
    const unused = await field(p, "Unused", "number");
    await created(p, { firstName: "Ada", customFields: { [held.id]: "x" } });
    const refused = await confirmTwice(ref(p, `/custom-fields/${held.id}/delete`), {}, async () => {});
    expect(refused.status).toBe(409);
    expect(pageText(refused.text)).toContain("1 contact holds a value of this field (the trash included): it cannot be deleted.");
    const done = await confirmTwice(ref(p, `/custom-fields/${unused.id}/delete`), {}, async () => {
      expect(await byName(p, "custom-fields", "Unused")).toBeDefined();
    });
    expect(done.status).toBe(303);
    expect(await byName(p, "custom-fields", "Unused")).toBeUndefined();
  });
});

describe("archiving a custom field", () => {
  const contacts = (p: ProjectInfo, path = "") => `/admin/projects/${p.id}/contacts${path}`;
  const offers = (html: string, id: string) => html.includes(`name="customFields.${id}"`);

  test("Archive asks first; then the list marks the field Archived and the contact form stops offering it, while the API still lists, returns and accepts it", async () => {
    const p = await project();
    const tier = await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Tier", "--type", "select", "--options", "gold,silver", "--json"]);
    const ada = await created(p, { firstName: "Ada", customFields: { [tier.id]: "gold" } });
    expect(offers((await admin.get(contacts(p, "/new"))).text, tier.id)).toBe(true);
    const page = await admin.get(ref(p, `/custom-fields/${tier.id}`));
    expect(page.text).toContain(">Archive field<");

    const ask = await admin.post(ref(p, `/custom-fields/${tier.id}/archive`), {});
    expect(pageText(ask.text)).toContain("It stays on contacts that have a value and in the API; the console's contact form and new web forms stop offering it.");
    const done = await confirmTwice(ref(p, `/custom-fields/${tier.id}/archive`), {}, async () => {
      expect((await admin.get(ref(p))).text).not.toContain(">Archived<");
      expect(offers((await admin.get(contacts(p, "/new"))).text, tier.id)).toBe(true);
    });
    expect(done.status).toBe(303);
    const listed = await admin.get(done.location!);
    expect(listed.text).toContain("Custom field archived");
    expect(pageText(listed.text)).toMatch(/Tier\s*Archived/);
    expect(listed.text).toContain(">Archived<");
    const archivedPage = await admin.get(ref(p, `/custom-fields/${tier.id}`));
    expect(archivedPage.text).toContain(">Restore field<");
    expect(archivedPage.text).not.toContain(">Archive field<");

    // The console's contact form: neither New nor Edit offers it; an edit keeps the contact's value.
    expect(offers((await admin.get(contacts(p, "/new"))).text, tier.id)).toBe(false);
    expect(offers((await admin.get(contacts(p, `/${ada.contactId}/edit`))).text, tier.id)).toBe(false);
    const edited = await admin.post(contacts(p, `/${ada.contactId}/edit`), { firstName: "Ada", lastName: "Lovelace", contactTypeId: ada.contactType.id, subscribed: ada.subscribed ? "on" : "" });
    expect(edited.status).toBe(303);
    expect((await admin.get(contacts(p, `/${ada.contactId}`))).text).toContain("Tier");

    // The API is unchanged.
    const got = (await api(p, "GET", `/contacts/${ada.contactId}`)).json;
    expect(got.lastName).toBe("Lovelace");
    expect(got.customFields[tier.id]).toBe("gold");
    expect(await byName(p, "custom-fields", "Tier")).toMatchObject({ id: tier.id, options: ["gold", "silver"] });
    expect(Object.keys(await byName(p, "custom-fields", "Tier"))).not.toContain("archivedAt");
    const patched = await api(p, "PATCH", `/contacts/${ada.contactId}`, { body: { customFields: { [tier.id]: "silver" } } });
    expect(patched.status).toBe(200);
    expect(patched.json.customFields[tier.id]).toBe("silver");

    // Restore: no confirmation, offered again.
    const restored = await admin.post(ref(p, `/custom-fields/${tier.id}/restore`), {});
    expect(restored.status).toBe(303);
    const after = await admin.get(restored.location!);
    expect(after.text).toContain("Custom field restored");
    expect(after.text).not.toContain(">Archived<");
    expect(offers((await admin.get(contacts(p, "/new"))).text, tier.id)).toBe(true);
    expect(offers((await admin.get(contacts(p, `/${ada.contactId}/edit`))).text, tier.id)).toBe(true);
  });

  test("the form builder offers an archived field only to a form that already asks for it", () => {
    const custom = [
      { id: "cf_live", title: "Live", type: "text", options: null },
      { id: "cf_old", title: "Old", type: "text", options: null },
    ];
    const archived = new Set(["cf_old"]);
    const fresh = String(FieldChoices({ custom, checked: [], archived }));
    expect(fresh).toContain('value="cf_live"');
    expect(fresh).not.toContain('value="cf_old"');
    const asking = String(FieldChoices({ custom, checked: ["email", "cf_old"], archived }));
    expect(asking).toContain('value="cf_old"');
    expect(asking).toContain("Old (archived)");
  });
});

describe("tags", () => {
  test("a rename shows on the contacts that have the tag; a name another tag has is refused", async () => {
    const p = await project();
    const ada = await created(p, { firstName: "Ada", tags: ["vip", "newsletter"] });
    const vip = await byName(p, "tags", "vip");
    const list = await admin.get(ref(p));
    expect(list.text).toContain(`aria-label="Edit vip"`);
    expect((await admin.post(ref(p, `/tags/${vip.id}`), { name: "very-important" })).status).toBe(303);
    expect((await api(p, "GET", `/contacts/${ada.contactId}`)).json.tags.map((t: any) => t.name)).toEqual(["newsletter", "very-important"]);
    const taken = await admin.post(ref(p, `/tags/${vip.id}`), { name: "Newsletter" });
    expect(taken.status).toBe(422);
    expect(pageText(taken.text)).toContain("Name is already used by another tag: merge this one into it instead.");
  });

  test("a merge asks first, then moves every contact (the trash included) to the other tag with a change record and an event each, and deletes the tag", async () => {
    const p = await project();
    const ada = await created(p, { firstName: "Ada", tags: ["vip"] });
    const grace = await created(p, { firstName: "Grace", tags: ["vip", "gold"] });
    const alan = await created(p, { firstName: "Alan", tags: ["vip"] });
    expect((await api(p, "DELETE", `/contacts/${alan.contactId}`)).status).toBe(204);
    const vip = await byName(p, "tags", "vip");
    const seq = (await api(p, "GET", "/changes", { query: { limit: 1000 } })).json.data.length;
    const merged = await confirmTwice(ref(p, `/tags/${vip.id}/merge`), { into: "GOLD" }, async () => {
      expect(await byName(p, "tags", "vip")).toBeDefined();
      expect((await api(p, "GET", `/contacts/${ada.contactId}`)).json.tags.map((t: any) => t.name)).toEqual(["vip"]);
    });
    expect(merged.status).toBe(303);
    expect((await admin.get(merged.location!)).text).toContain("Tags merged");
    expect(await byName(p, "tags", "vip")).toBeUndefined();
    for (const c of [ada, grace]) expect((await api(p, "GET", `/contacts/${c.contactId}`)).json.tags.map((t: any) => t.name)).toEqual(["gold"]);
    expect((await api(p, "POST", `/contacts/${alan.contactId}/restore`)).status).toBe(200);
    expect((await api(p, "GET", `/contacts/${alan.contactId}`)).json.tags.map((t: any) => t.name)).toEqual(["gold"]);

    const records = (await api(p, "GET", "/changes", { query: { limit: 1000 } })).json.data.slice(seq);
    const adaRecord = records.find((r: any) => r.id === ada.contactId);
    expect(adaRecord).toMatchObject({ action: "updated", actor: { type: "admin" }, changes: [{ field: "tags", from: ["vip"], to: ["gold"] }] });
    expect(records.find((r: any) => r.id === grace.contactId).changes).toEqual([{ field: "tags", from: ["gold", "vip"], to: ["gold"] }]);
    const events = (await api(p, "GET", "/events", { query: { limit: 200 } })).json.data.filter((e: any) => e.event === "contact.updated");
    expect(events.filter((e: any) => [ada.contactId, grace.contactId].includes(e.data.contact.contactId) && e.data.changedFields.includes("tags"))).toHaveLength(2);
  });

  test("a merge into a tag the project does not have is refused at the field, and a tag a webhook filter names is refused with the reason", async () => {
    const p = await project();
    await created(p, { firstName: "Ada", tags: ["vip", "gold"] });
    const vip = await byName(p, "tags", "vip");
    const unknown = await admin.post(ref(p, `/tags/${vip.id}/merge`), { into: "platinum" });
    expect(unknown.status).toBe(422);
    expect(pageText(unknown.text)).toContain("Merge into names no tag of this project: platinum.");
    const hook = await api(p, "POST", "/webhooks", { body: { url: "https://hooks.example.com/crm", events: ["contact.updated"], description: "VIP sync", filter: { tags: ["vip"] } } });
    expect(hook.status).toBe(201);
    const refused = await admin.post(ref(p, `/tags/${vip.id}/merge`), { into: "gold", confirm: "yes" });
    expect(refused.status).toBe(409);
    expect(pageText(refused.text)).toContain("The webhook filter of VIP sync names this tag: change it first.");
    expect(await byName(p, "tags", "vip")).toBeDefined();
  });

  test("Delete asks first, then takes the tag off every contact and deletes it", async () => {
    const p = await project();
    const ada = await created(p, { firstName: "Ada", tags: ["vip", "gold"] });
    const vip = await byName(p, "tags", "vip");
    const done = await confirmTwice(ref(p, `/tags/${vip.id}/delete`), {}, async () => {
      expect(await byName(p, "tags", "vip")).toBeDefined();
    });
    expect(done.status).toBe(303);
    expect(await byName(p, "tags", "vip")).toBeUndefined();
    expect((await api(p, "GET", `/contacts/${ada.contactId}`)).json.tags.map((t: any) => t.name)).toEqual(["gold"]);
  });
});

test("every cell of the reference lists names its column (data-label), so a phone shows each row as a card", async () => {
  const p = await project();
  await created(p, { firstName: "Ada", tags: ["vip"] });
  await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Tier", "--type", "select", "--options", "a,b", "--json"]);
  const page = await admin.get(ref(p));
  expect(page.text).toContain("<td data-label=");
  expect(page.text).not.toMatch(/<td(?![^>]*data-label)[^>]*>/);
});

test("a record of another project is not found", async () => {
  const [p, q] = await Promise.all([project(), project()]);
  const lead = await byName(q, "contact-types", "Lead");
  expect((await admin.get(ref(p, `/contact-types/${lead.id}`))).status).toBe(404);
  expect((await admin.post(ref(p, `/contact-types/${lead.id}/delete`), { confirm: "yes" })).status).toBe(404);
  expect(await byName(q, "contact-types", "Lead")).toBeDefined();
});
