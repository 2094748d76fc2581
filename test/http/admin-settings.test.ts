/**
 * The console's settings pages (docs/admin.md §3): projects, API keys, reference data and
 * forms, driven over HTTP as a browser would (cookies, Origin, CSRF), each action checked
 * through the API, the public form page or the CLI: the same services, the same rules.
 * One sandbox server for the file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdminClient, signedInAdmin } from "../helpers/admin.ts";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;
let p: ProjectInfo;
let other: ProjectInfo;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  [p, other] = await Promise.all([srv.newProject({ name: "settings-project" }), srv.newProject({ name: "other-project" })]);
  admin = (await signedInAdmin(srv.origin, srv.env)).client;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const decode = (s: string) => s.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
/** The secret in the ShownOnce box named `label`, if the page has one. */
const shownOnce = (html: string, label: string) =>
  new RegExp(`<label for="once-value" id="once-label">${label}</label>\\s*<textarea id="once-value"[^>]*>([^<]*)</textarea>`).exec(html)?.[1];
/** The error shown at the field (or group) whose id is `id`. */
const errorAt = (html: string, id: string) => {
  const m = new RegExp(`<p class="error" id="${id}-error">([^<]*)</p>`).exec(html);
  return m ? decode(m[1]!) : undefined;
};
const ping = (key: string) => srv.api("GET", "/ping", { key });
const keysPath = (projectId = p.id) => `/admin/projects/${projectId}/keys`;
const keyList = async (projectId = p.id) => (await srv.cli(["key", "list", "--project", projectId, "--json"])).data as any[];

describe("API keys", () => {
  test("the keys page has the heading, the scope checkboxes labelled with each scope, and the Create key button", async () => {
    const page = await admin.get(keysPath());
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>API keys</h1>");
    for (const scope of ["contacts:read", "contacts:write", "interactions:write", "webhooks:manage"]) {
      const id = `f-scopes-${scope.replace(":", "-")}`;
      expect(page.text).toContain(`<input type="checkbox" id="${id}" name="scopes" value="${scope}"/><label for="${id}">${scope}</label>`);
    }
    expect(page.text).toContain('<label for="f-name">Name</label>');
    expect(page.text).toContain('<button type="submit">Create key</button>');
  });

  test("a key created with chosen scopes is shown once in 'New API key', listed, and /v1/ping answers exactly those scopes", async () => {
    const res = await admin.post(keysPath(), { name: "ci-bot", scopes: ["contacts:read", "webhooks:manage"] });
    expect(res.status).toBe(200); // answered, not redirected: the key never goes in a URL
    expect(res.location).toBeNull();
    const key = shownOnce(res.text, "New API key")!;
    expect(key).toMatch(/^crm_test_[A-Za-z0-9]{46}$/); // the server's environment (sandbox)
    const pinged = await ping(key);
    expectStatus(pinged, 200);
    expect(pinged.json).toEqual({ projectId: p.id, keyId: pinged.json.keyId, scopes: ["contacts:read", "webhooks:manage"], environment: "sandbox" });
    // The table lists it, newest first, by name and hint; never the key itself outside the box.
    expect(res.text).toContain(`<td id="key-${pinged.json.keyId}">ci-bot`);
    expect(res.text.indexOf(`key-${pinged.json.keyId}`)).toBeLessThan(res.text.indexOf(`key-${p.keyId}`));
    expect(res.text.split(key).length).toBe(2);

    const reload = await admin.get(keysPath());
    expect(reload.status).toBe(200);
    expect(shownOnce(reload.text, "New API key")).toBeUndefined();
    expect(reload.text).not.toContain(key);
    expect(reload.text).toContain(`<td id="key-${pinged.json.keyId}">ci-bot`);
  });

  test("Revoke (a POST with the CSRF token) makes the key answer 401 and the row shows when it was revoked", async () => {
    const made = await admin.post(keysPath(), { name: "to-revoke", scopes: ["contacts:write"] });
    const key = shownOnce(made.text, "New API key")!;
    const { keyId } = (await ping(key)).json;
    // Each Revoke button is named "Revoke" and described by its key's name cell.
    expect(made.text).toContain(`<button type="submit" class="danger" aria-describedby="key-${keyId}">Revoke</button>`);

    const res = await admin.post(`${keysPath()}/${keyId}/revoke`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${keysPath()}?done=revoked`);
    expectStatus(await ping(key), 401);
    const page = await admin.get(res.location!);
    expect(page.text).toContain("Key revoked");
    expect(page.text).not.toContain(`aria-describedby="key-${keyId}"`);
    expect((await keyList()).find((k) => k.id === keyId).revokedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("a revoke without the CSRF token is refused (403) and the key keeps working", async () => {
    const made = await admin.post(keysPath(), { name: "kept", scopes: ["contacts:read"] });
    const key = shownOnce(made.text, "New API key")!;
    const { keyId } = (await ping(key)).json;
    const res = await admin.post(`${keysPath()}/${keyId}/revoke`, { _csrf: "wrong" });
    expect(res.status).toBe(403);
    expectStatus(await ping(key), 200);
  });

  test("no scope checked is 422 with the error on the scopes group, and no key is made", async () => {
    const before = (await admin.get(keysPath())).text.match(/<td id="key-/g)!.length;
    const res = await admin.post(keysPath(), { name: "no-scopes" });
    expect(res.status).toBe(422);
    expect(errorAt(res.text, "f-scopes")).toBe("Choose at least one scope.");
    expect(res.text).toContain('aria-describedby="f-scopes-error"');
    expect(shownOnce(res.text, "New API key")).toBeUndefined();
    expect(res.text).toContain('value="no-scopes"'); // what was typed is kept
    expect(res.text.match(/<td id="key-/g)!.length).toBe(before);
  });

  test("an expiry in the past (by the service clock) is 422 at the field; a datetime-local one is stored as that UTC time", async () => {
    const past = await admin.post(keysPath(), { name: "old", scopes: ["contacts:read"], expiresAt: "2001-01-01T00:00" });
    expect(past.status).toBe(422);
    expect(errorAt(past.text, "f-expiresAt")).toBe("Expires must be in the future.");
    const bad = await admin.post(keysPath(), { name: "bad", scopes: ["contacts:read"], expiresAt: "soon" });
    expect(bad.status).toBe(422);
    expect(errorAt(bad.text, "f-expiresAt")).toContain("must be a date and time");

    const res = await admin.post(keysPath(), { name: "expiring", scopes: ["contacts:read"], expiresAt: "2099-01-31T12:00" });
    expect(res.status).toBe(200);
    const { keyId } = (await ping(shownOnce(res.text, "New API key")!)).json;
    expect((await keyList()).find((k) => k.id === keyId)).toMatchObject({ name: "expiring", expiresAt: "2099-01-31T12:00:00.000Z", scopes: ["contacts:read"] });
  });

  test("revoking a key of another project through this project's page is a 404 page, and that key still works", async () => {
    const res = await admin.post(`${keysPath(p.id)}/${other.keyId}/revoke`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain("API key not found.");
    expectStatus(await ping(other.key), 200);
    expect((await keyList(other.id)).find((k) => k.id === other.keyId).revokedAt).toBeNull();
  });
});

describe("reference data", () => {
  const refPath = () => `/admin/projects/${p.id}/reference`;
  const apiNames = async (path: string) => (await p.api("GET", path)).json.data;

  test("a contact type, an interaction type, a custom field and a tag made in the console are listed on the page and by the API", async () => {
    const made = [
      await admin.post(`${refPath()}/contact-types`, { name: "Distributor", category: "Lead", isDefault: "on" }),
      await admin.post(`${refPath()}/interaction-types`, { name: "Demo" }),
      await admin.post(`${refPath()}/custom-fields`, { title: "Tier", type: "select", options: "gold, silver,," }),
      await admin.post(`${refPath()}/custom-fields`, { title: "Seats", type: "number", options: "ignored" }),
      await admin.post(`${refPath()}/tags`, { name: " vip " }),
    ];
    for (const res of made) {
      expect(res.status).toBe(303);
      expect(res.location).toStartWith(`${refPath()}?done=`);
    }
    expect(await apiNames("/contact-types")).toContainEqual({ id: expect.stringMatching(/^ct_/), name: "Distributor", category: "Lead", isDefault: true });
    // One default per project: Customer gave the flag up.
    expect((await apiNames("/contact-types")).find((t: any) => t.name === "Customer").isDefault).toBe(false);
    expect((await apiNames("/interaction-types")).map((t: any) => t.name)).toContain("Demo");
    const fields = await apiNames("/custom-fields");
    expect(fields).toContainEqual({ id: expect.stringMatching(/^cf_/), title: "Tier", type: "select", options: ["gold", "silver"], writable: true, unique: false });
    expect(fields).toContainEqual({ id: expect.stringMatching(/^cf_/), title: "Seats", type: "number", writable: true, unique: false });
    expect(await apiNames("/tags")).toEqual([{ id: expect.stringMatching(/^tag_/), name: "vip" }]);

    const page = await admin.get(made[0]!.location!);
    expect(page.text).toContain("<h1>Reference data</h1>");
    expect(page.text).toContain("Contact type created.");
    for (const text of ["<td>Distributor</td>", "<td>Demo</td>", "<td>Tier</td>", "<td>gold, silver</td>", "<td>vip</td>"]) expect(page.text).toContain(text);
  });

  test.each([
    ["a select custom field without options", "custom-fields", { title: "Size", type: "select", options: " , " }, "custom-fields-options", "Options is required for select."],
    ["a custom field whose title is taken", "custom-fields", { title: "Tier", type: "text" }, "custom-fields-title", "Title is already used by custom field"],
    ["a custom field of an unknown type", "custom-fields", { title: "Odd", type: "colour" }, "custom-fields-type", "Type must be one of text,"],
    ["a contact type of an unknown category", "contact-types", { name: "Partner", category: "Partner" }, "contact-types-category", "Category must be one of Lead, Customer, Personnel, Other."],
    ["an interaction type without a name", "interaction-types", { name: "  " }, "interaction-types-name", "Name must have 1–255 characters."],
    ["a tag longer than 64 characters", "tags", { name: "x".repeat(65) }, "tags-name", "Name must be 1–64 characters."],
    ["a tag that exists (any case)", "tags", { name: "VIP" }, "tags-name", "Name is already used by a tag."],
  ])("%s is 422 with the error at its field, and nothing is made", async (_name, path, fields, fieldId, message) => {
    const before = await Promise.all(["/contact-types", "/interaction-types", "/custom-fields", "/tags"].map(apiNames));
    const res = await admin.post(`${refPath()}/${path}`, fields);
    expect(res.status).toBe(422);
    expect(errorAt(res.text, fieldId)).toStartWith(message);
    expect(res.text).toContain(`href="#${fieldId}"`); // the summary links to the field
    expect(await Promise.all(["/contact-types", "/interaction-types", "/custom-fields", "/tags"].map(apiNames))).toEqual(before);
  });
});

describe("forms", () => {
  const formsPath = () => `/admin/projects/${p.id}/forms`;
  /** Rows of the forms table (the page reads the same table the CLI lists). */
  const formRows = async () => (await admin.get(formsPath())).text.match(/<td id="form-/g)?.length ?? 0;

  test("a form made in the console is listed with an Open link, and /f/{id} serves its fields", async () => {
    const tier = (await p.api("GET", "/custom-fields")).json.data.find((f: any) => f.title === "Tier");
    const page = await admin.get(formsPath());
    expect(page.text).toContain("<h1>Forms</h1>");
    expect(page.text).toContain(`value="${tier.id}"/><label for="f-fields-${tier.id}">Tier</label>`);
    const res = await admin.post(formsPath(), { name: "Contact us", fields: ["email", "firstName", tier.id], redirectUrl: "https://example.com/thanks" });
    expect(res.status).toBe(303);
    const listed = await admin.get(res.location!);
    expect(listed.text).toContain("Form created.");
    const row = /<td id="form-(frm_[A-Za-z0-9_]+)">Contact us<\/td>/.exec(listed.text);
    expect(row).not.toBeNull();
    const formId = row![1]!;
    expect(listed.text).toContain("<td>email, firstName, Tier</td>");
    expect(listed.text).toContain("https://example.com/thanks");
    expect(listed.text).toContain(`<a href="/f/${formId}" aria-describedby="form-${formId}">Open</a>`);
    expect((await srv.cli(["form", "list", "--project", p.id, "--json"])).data).toContainEqual(
      expect.objectContaining({ id: formId, name: "Contact us", fields: ["email", "firstName", tier.id], redirectUrl: "https://example.com/thanks" }),
    );

    const publicPage = await fetch(`${srv.origin}/f/${formId}`);
    expect(publicPage.status).toBe(200);
    const html = await publicPage.text();
    for (const name of ["email", "firstName", tier.id]) expect(html).toContain(`name="${name}"`);
  });

  test.each([
    ["no identity field", { name: "Bad", fields: ["subscribed"] }, "f-fields", "A form needs at least one of firstName, lastName, email, phone, businessName."],
    ["no fields at all", { name: "Bad" }, "f-fields", "A form needs at least one of"],
    ["a blank name", { name: "  ", fields: ["email"] }, "f-name", "Name takes 1–255 characters."],
    ["a redirect URL that is not http(s)", { name: "Bad", fields: ["email"], redirectUrl: "javascript:alert(1)" }, "f-redirectUrl", "Redirect URL must be an http(s) URL"],
  ])("a form with %s is 422 with the error at its field, as `crm form create` refuses it", async (_name, fields, fieldId, message) => {
    const before = await formRows();
    const res = await admin.post(formsPath(), fields);
    expect(res.status).toBe(422);
    expect(errorAt(res.text, fieldId)).toStartWith(message);
    expect(await formRows()).toBe(before);
  });
});

describe("projects", () => {
  const projectList = async () => (await srv.cli(["project", "list", "--json"])).data as any[];

  test("a project created in the console and its quota and limits edited there are what `crm project list` shows", async () => {
    const res = await admin.post("/admin/projects", { name: "Console project" });
    expect(res.status).toBe(303);
    // A new project opens on its settings (docs/admin.md §3), a section of its own beside Home.
    const id = /^\/admin\/projects\/(prj_[A-Za-z0-9_]+)\/settings\?done=created$/.exec(res.location!)![1]!;
    expect((await projectList()).find((x) => x.id === id)).toMatchObject({ name: "Console project", contactQuota: null });
    const created = await admin.get(res.location!);
    expect(created.status).toBe(200);
    expect(created.text).toContain("Project created.");
    expect(created.text).toContain(`<a href="/admin/projects/${id}/settings" aria-current="page">Settings</a>`);
    // The projects list and the home page lead there.
    expect((await admin.get("/admin/projects")).text).toContain(`<a href="/admin/projects/${id}">Console project</a>`);
    expect((await admin.get(`/admin/projects/${id}`)).text).toContain(`<a href="/admin/projects/${id}/settings">Name, quota and limits</a>`);

    const saved = await admin.post(`/admin/projects/${id}/settings`, { name: "Renamed", contactQuota: "500", rateLimitPerMinute: "30", contactCreatesPerHour: "7" });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/admin/projects/${id}/settings?done=saved`);
    expect((await projectList()).find((x) => x.id === id)).toMatchObject({ name: "Renamed", contactQuota: 500, rateLimitPerMinute: 30, contactCreatesPerHour: 7 });
    // A blank quota removes the limit.
    await admin.post(`/admin/projects/${id}/settings`, { name: "Renamed", contactQuota: "", rateLimitPerMinute: "30", contactCreatesPerHour: "7" });
    expect((await projectList()).find((x) => x.id === id).contactQuota).toBeNull();
  });

  test("a blank project name is 422 with the error at Name, and nothing is made", async () => {
    const before = (await projectList()).length;
    const res = await admin.post("/admin/projects", { name: "   " });
    expect(res.status).toBe(422);
    expect(errorAt(res.text, "f-name")).toBe("Name is required.");
    expect((await projectList()).length).toBe(before);
  });
});
