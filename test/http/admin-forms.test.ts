/**
 * A web form's own page in the console (docs/admin.md §3): its fields and
 * redirect URL edited under `crm form create`'s rules (checked through the CLI and the
 * public page), its submissions newest first in pages of 50, each linking to its contact,
 * and Delete after a confirmation for a form without submissions. One server for the file
 * (behind a "proxy", so submissions can come from many addresses without the per-address
 * limit).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdminClient, pageText, signedInAdmin, tableRows } from "../helpers/admin.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;
let p: ProjectInfo;

beforeAll(async () => {
  srv = await startServer({ extraEnv: { CRM_TRUST_PROXY: "127.0.0.1, ::1" } });
  p = await srv.newProject({ name: "forms-project" });
  admin = (await signedInAdmin(srv.origin, srv.env)).client;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const formsPath = `/admin/projects/${"{p}"}/forms`;
const page = (formId = "") => `${formsPath.replace("{p}", p.id)}${formId ? `/${formId}` : ""}`;
const newForm = async (name: string, fields = "email,firstName") => srv.cli(["form", "create", "--project", p.id, "--name", name, "--fields", fields, "--json"]);
const formList = async () => (await srv.cli(["form", "list", "--project", p.id, "--json"])).data as any[];
let address = 0;
const submit = (formId: string, body: Record<string, unknown>) =>
  srv.api("POST", `/forms/${formId}/submissions`, { key: null, body, headers: { "X-Forwarded-For": `203.0.113.${++address % 250}` } });

describe("a form's page", () => {
  test("the forms list links each form's name to its page, and every cell names its column (data-label)", async () => {
    const form = await newForm("Newsletter");
    const list = await admin.get(page());
    expect(list.text).toContain(`<a href="${page(form.id)}">Newsletter</a>`);
    expect(list.text).not.toMatch(/<td(?![^>]*data-label)[^>]*>/);
    const own = await admin.get(page(form.id));
    expect(own.status).toBe(200);
    expect(own.text).toContain("<h1>Form Newsletter</h1>");
    expect(own.text).toContain("No submissions yet.");
  });

  test("the fields, name and redirect URL are edited under createForm's rules, and the public page follows at once", async () => {
    const form = await newForm("Contact us");
    const saved = await admin.post(page(form.id), { name: "Talk to us", fields: ["email", "phone", "address.city"], redirectUrl: "https://example.com/thanks" });
    expect(saved.status).toBe(303);
    expect((await admin.get(saved.location!)).text).toContain("Form saved.");
    expect((await formList()).find((f) => f.id === form.id)).toMatchObject({ name: "Talk to us", fields: ["email", "phone", "address.city"], redirectUrl: "https://example.com/thanks" });
    const publicPage = await (await fetch(`${srv.origin}/f/${form.id}`)).text();
    expect(publicPage).toContain('name="phone"');
    expect(publicPage).not.toContain('name="firstName"');

    const badUrl = await admin.post(page(form.id), { name: "Talk to us", fields: ["email"], redirectUrl: "javascript:alert(1)" });
    expect(badUrl.status).toBe(422);
    expect(pageText(badUrl.text)).toContain("Redirect URL must be an http(s) URL of at most 2048 characters.");
    const noIdentity = await admin.post(page(form.id), { name: "Talk to us", fields: ["notes"], redirectUrl: "" });
    expect(noIdentity.status).toBe(422);
    expect((await formList()).find((f) => f.id === form.id).fields).toEqual(["email", "phone", "address.city"]);
  });

  test("submissions are listed newest first, 50 a page, each linking to its contact", async () => {
    const form = await newForm("Busy");
    for (let i = 0; i < 52; i++) {
      const res = await submit(form.id, { email: `person${i}@example.com`, firstName: `P${i}` });
      expect(res.status).toBeLessThan(300);
    }
    const first = await admin.get(page(form.id));
    const rows = tableRows(first.text, "Submissions, newest first");
    expect(rows).toHaveLength(50);
    expect(pageText(first.text)).toContain("Submissions (52)");
    expect(rows[0]![2]).toContain("person51@example.com");
    const contactId = rows[0]![1]!.match(/CR-\d+/)![0];
    expect(first.text).toContain(`href="/admin/projects/${p.id}/contacts/${contactId}"`);
    expect((await p.api("GET", `/contacts/${contactId}`)).json.email).toBe("person51@example.com");
    const older = /<a href="([^"]+\?after=[^"#]+)#submissions">Older<\/a>/.exec(first.text)![1]!;
    const second = await admin.get(older.replace(/&amp;/g, "&"));
    const rest = tableRows(second.text, "Submissions, newest first");
    expect(rest.map((r) => r[2])).toEqual([expect.stringContaining("person1@example.com"), expect.stringContaining("person0@example.com")]);
    expect(second.text).not.toContain(">Older</a>");
  });
});

describe("deleting a form", () => {
  test("Delete asks first; the confirmed delete removes a form without submissions, and its page answers 404", async () => {
    const form = await newForm("Mistake");
    const ask = await admin.post(`${page(form.id)}/delete`);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('name="confirm" value="yes"');
    expect((await formList()).some((f) => f.id === form.id)).toBe(true);
    const done = await admin.post(`${page(form.id)}/delete`, { confirm: "yes" });
    expect(done.status).toBe(303);
    expect((await admin.get(done.location!)).text).toContain("Form deleted.");
    expect((await formList()).some((f) => f.id === form.id)).toBe(false);
    expect((await fetch(`${srv.origin}/f/${form.id}`)).status).toBe(404);
    expect((await admin.get(page(form.id))).status).toBe(404);
  });

  test("a form with submissions is not deleted: the page says why", async () => {
    const form = await newForm("Used");
    expect((await submit(form.id, { email: "kept@example.com" })).status).toBeLessThan(300);
    const res = await admin.post(`${page(form.id)}/delete`, { confirm: "yes" });
    expect(res.status).toBe(409);
    expect(pageText(res.text)).toContain("This form has 1 submission, which their contacts' timelines show: it cannot be deleted.");
    expect((await formList()).some((f) => f.id === form.id)).toBe(true);
  });

  test("a form of another project is not found", async () => {
    const other = await srv.newProject({ name: "forms-other" });
    const form = await srv.cli(["form", "create", "--project", other.id, "--name", "Theirs", "--fields", "email", "--json"]);
    expect((await admin.get(page(form.id))).status).toBe(404);
    expect((await admin.post(`${page(form.id)}/delete`, { confirm: "yes" })).status).toBe(404);
  });
});
