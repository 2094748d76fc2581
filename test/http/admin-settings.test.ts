/**
 * The console's settings pages (docs/admin.md §3): projects, reference data and forms, driven
 * over HTTP as a browser would (cookies, Origin, CSRF), each action checked through the API,
 * the public form page or the CLI: the same services, the same rules. One sandbox server for
 * the file. (API keys: test/http/admin-keys.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdminClient, signedInAdmin } from "../helpers/admin.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;
let p: ProjectInfo;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  p = await srv.newProject({ name: "settings-project" });
  admin = (await signedInAdmin(srv.origin, srv.env)).client;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const decode = (s: string) => s.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
/** The error shown at the field (or group) whose id is `id`. */
const errorAt = (html: string, id: string) => {
  const m = new RegExp(`<p class="error" id="${id}-error">([^<]*)</p>`).exec(html);
  return m ? decode(m[1]!) : undefined;
};

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
    // Each cell names its column (docs/admin.md §2: tables read as cards at 390 px).
    for (const text of ['<td data-label="Name">Distributor</td>', '<td data-label="Name">Demo</td>', '<td data-label="Title">Tier</td>', '<td data-label="Options">gold, silver</td>', '<td data-label="Name">vip</td>']) {
      expect(page.text).toContain(text);
    }
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
  const formRows = async () => (await admin.get(formsPath())).text.match(/<td data-label="Name" id="form-/g)?.length ?? 0;

  test("a form made in the console is listed with an Open link, and /f/{id} serves its fields", async () => {
    const tier = (await p.api("GET", "/custom-fields")).json.data.find((f: any) => f.title === "Tier");
    const page = await admin.get(formsPath());
    expect(page.text).toContain("<h1>Forms</h1>");
    expect(page.text).toContain(`value="${tier.id}"/><label for="f-fields-${tier.id}">Tier</label>`);
    const res = await admin.post(formsPath(), { name: "Contact us", fields: ["email", "firstName", tier.id], redirectUrl: "https://example.com/thanks" });
    expect(res.status).toBe(303);
    const listed = await admin.get(res.location!);
    expect(listed.text).toContain("Form created.");
    const row = /<td data-label="Name" id="form-(frm_[A-Za-z0-9_]+)"><a href="[^"]+\/forms\/frm_[A-Za-z0-9_]+">Contact us<\/a><\/td>/.exec(listed.text);
    expect(row).not.toBeNull();
    const formId = row![1]!;
    expect(listed.text).toContain('<td data-label="Fields">email, firstName, Tier</td>');
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
