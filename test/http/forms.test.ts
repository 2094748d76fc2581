/**
 * Web forms (docs/api.md §15, §3, §6, docs/webhooks.md §2): the CLI makes a form, /f/{id} serves its page, and
 * POST /v1/forms/{id}/submissions takes JSON or urlencoded without a key. Black-box: the
 * real server, its CLI, and the events table read straight from the database (the SQLite
 * file, or PostgreSQL under CRM_TEST_BACKEND=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase, type SideDatabase } from "../helpers/side-db.ts";

let srv: ServerHandle;
let db: SideDatabase;
let colourId: string;
/** email, firstName, phone, address.city, Colour (select red/blue), subscribed */
let form: { id: string; name: string; fields: string[] };
const FIELDS = () => `email,firstName,phone,address.city,${colourId},subscribed`;

/** Every event stored, in the order written. */
const events = async (): Promise<Array<{ event: string; projectId: string; data: any }>> =>
  (await db.all<{ body: string }>(`SELECT body FROM events ORDER BY ${db.insertionOrder}`)).map((r) => JSON.parse(r.body));
const submissions = async () => (await db.get<{ n: number }>("SELECT count(*) AS n FROM form_submissions"))!.n;

const createForm = (args: string[]) => srv.cli(["form", "create", "--project", srv.projectId, "--json", ...args]);
/** A form of its own per test: each (address, form) pair may send 10 a minute. */
const freshForm = () => createForm(["--name", "Contact us", "--fields", FIELDS()]);
const postJson = (formId: string, body: unknown) => srv.api("POST", `/forms/${formId}/submissions`, { key: null, body });
const postForm = (formId: string, fields: Record<string, string | string[]>) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) params.append(k, item);
  return srv.api("POST", `/forms/${formId}/submissions`, {
    key: null,
    rawBody: params.toString(),
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
  });
};
const contactsByEmail = async (email: string) => (await srv.api("GET", "/contacts", { query: { email } })).json.data as any[];

beforeAll(async () => {
  srv = await startServer();
  db = await openSideDatabase(srv.env, { readonly: true });
  colourId = (await srv.cli(["custom-field", "create", "--project", srv.projectId, "--title", "Colour", "--type", "select", "--options", "red,blue", "--json"])).id;
  form = await createForm(["--name", "Contact us", "--fields", "email,firstName,phone,address.city,Colour,subscribed"]);
}, 60_000);
afterAll(async () => {
  await db?.close();
  await srv.stop();
});

describe("crm form create", () => {
  test("prints the form as JSON, custom fields resolved to ids", () => {
    expect(form.id).toMatch(/^frm_[A-Za-z0-9]{22}$/);
    expect(form.name).toBe("Contact us");
    expect(form.fields).toEqual(["email", "firstName", "phone", "address.city", colourId, "subscribed"]);
  });

  test.each([
    ["an unknown field", ["--name", "x", "--fields", "email,favouriteFood"]],
    ["no identity field", ["--name", "x", "--fields", "notes"]],
    ["a bad redirect URL", ["--name", "x", "--fields", "email", "--redirect-url", "javascript:alert(1)"]],
  ])("refuses %s with exit 2", async (_, args) => {
    const r = await srv.cliRaw(["form", "create", "--project", srv.projectId, "--json", ...args]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("crm:");
  });
});

describe("GET /f/{formId}", () => {
  test("serves an accessible HTML page with the fields, the honeypot and no outside asset", async () => {
    const res = await srv.api("GET", `${srv.origin}/f/${form.id}`, { key: null });
    expectStatus(res, 200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = res.text;
    expect(html).toMatch(/<html lang="en">/);
    expect(html).toContain(`<form method="post" action="/v1/forms/${form.id}/submissions"`);
    for (const [name, type] of [["email", "email"], ["firstName", "text"], ["phone", "tel"], ["address.city", "text"]]) {
      const input = new RegExp(`<input type="${type}" id="([^"]+)" name="${name.replace(".", "\\.")}"`).exec(html);
      expect(input, name).not.toBeNull();
      expect(html).toContain(`<label for="${input![1]}">`);
    }
    expect(html).toContain(`<select id="f-${colourId}" name="${colourId}">`);
    expect(html).toMatch(/<input type="checkbox" id="f-subscribed" name="subscribed"/);
    const honeypot = /<input[^>]*name="_hp"[^>]*>/.exec(html)?.[0] ?? "";
    expect(honeypot).toContain('tabindex="-1"');
    expect(honeypot).toContain('autocomplete="off"');
    expect(honeypot).toContain("hidden");
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?https?:\/\//i);
    expect(html).not.toContain("<script");
  });

  test("the page may be embedded in other sites: no frame-ancestors, no X-Frame-Options (docs/api.md §7)", async () => {
    const res = await srv.api("GET", `${srv.origin}/f/${form.id}`, { key: null });
    expectStatus(res, 200);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("content-security-policy")).not.toContain("frame-ancestors");
    expect(res.headers.get("x-frame-options")).toBeNull();
  });

  test("an unknown form is 404", async () => {
    const res = await srv.api("GET", `${srv.origin}/f/frm_missing`, { key: null });
    expectStatus(res, 404);
    expect(res.headers.get("content-type")).toContain("text/html");
  });
});

describe("POST /v1/forms/{formId}/submissions", () => {
  test("JSON creates a contact with source web_form and records contact.created then web_form.submitted", async () => {
    const before = (await events()).length;
    const res = await postJson(form.id, { email: "ada@example.com", firstName: "Ada", "address.city": "London", [colourId]: "red" });
    expectStatus(res, 201);
    expect(res.json.submissionId).toMatch(/^sub_/);
    expect(res.json.submittedAt).toMatch(ISO_RE);
    const [contact] = await contactsByEmail("ada@example.com");
    expect(contact).toMatchObject({ source: "web_form", firstName: "Ada", email: "ada@example.com", customFields: { [colourId]: "red" } });
    expect(contact.address.city).toBe("London");

    const added = (await events()).slice(before);
    expect(added.map((e) => e.event)).toEqual(["contact.created", "web_form.submitted"]);
    expect(added[0]!.data).toEqual({ contact });
    expect(added[1]!.projectId).toBe(srv.projectId);
    expect(added[1]!.data).toEqual({
      form: { id: form.id, name: "Contact us" },
      submission: {
        id: res.json.submissionId,
        submittedAt: res.json.submittedAt,
        values: { email: "ada@example.com", firstName: "Ada", "address.city": "London", [colourId]: "red" },
      },
      contact,
    });
  });

  test("urlencoded creates a contact and answers a thank-you page", async () => {
    const res = await postForm(form.id, { email: "bo@example.com", firstName: "Bo", phone: "", subscribed: "true", _hp: "" });
    expectStatus(res, 201);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain("Thank you");
    const [contact] = await contactsByEmail("bo@example.com");
    expect(contact).toMatchObject({ source: "web_form", firstName: "Bo", phone: null, subscribed: true });
  });

  test("the same email (any case) updates that contact: contact.updated, then web_form.submitted", async () => {
    const made = await srv.api("POST", "/contacts", { body: { email: "cy@example.com", firstName: "Cy", lastName: "Old" } });
    expectStatus(made, 201);
    const before = (await events()).length;
    const res = await postJson(form.id, { email: "  CY@example.com ", firstName: "Cyrus" });
    expectStatus(res, 201);
    const all = await contactsByEmail("cy@example.com");
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ contactId: made.json.contactId, firstName: "Cyrus", lastName: "Old", source: "api" });
    const added = (await events()).slice(before);
    expect(added.map((e) => e.event)).toEqual(["contact.updated", "web_form.submitted"]);
    expect(added[0]!.data.changedFields).toContain("firstName");
    expect(added[1]!.data.contact).toEqual(all[0]);
  });

  test("JSON validation errors are the envelope with the form's field name, and store nothing", async () => {
    const before = [(await events()).length, await submissions()];
    const own = await freshForm();
    expectError(await postJson(own.id, { email: "not-an-email", firstName: "X" }), "ERR_FORM_VALIDATION", "email");
    expectError(await postJson(own.id, { email: "z@example.com", company: "Acme" }), "ERR_FORM_VALIDATION", "company");
    expectError(await postJson(own.id, { email: "z@example.com", [colourId]: "green" }), "ERR_FORM_VALIDATION", colourId);
    expectError(await postJson(own.id, { firstName: "x".repeat(256) }), "ERR_FORM_VALIDATION", "firstName");
    // The at-least-one rule names firstName, as the API does, when the form has it.
    expectError(await postJson(own.id, { "address.city": "Paris" }), "ERR_FORM_VALIDATION", "firstName");
    expect([(await events()).length, await submissions()]).toEqual(before);
    expect(await contactsByEmail("z@example.com")).toHaveLength(0);
  });

  test("a urlencoded post with errors gets the form again, listing them", async () => {
    const res = await postForm(form.id, { email: "nope", firstName: "Dee", [colourId]: "green" });
    expectStatus(res, 422);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain('role="alert"');
    expect(res.text).toContain('href="#f-email"');
    expect(res.text).toMatch(/Must be a valid email address/);
    expect(res.text).toMatch(/Must be one of red, blue\./);
    expect(res.text.indexOf('href="#f-email"')).toBeLessThan(res.text.indexOf(`href="#f-${colourId}"`));
    expect(res.text).toMatch(/name="email"[^>]*aria-invalid="true"[^>]*value="nope"/);
    expect(res.text).toContain('value="Dee"');
  });

  test("urlencoded custom values are read by type: number, checkbox, every value of a multiselect", async () => {
    const cf = async (title: string, type: string, options?: string) =>
      (await srv.cli(["custom-field", "create", "--project", srv.projectId, "--title", title, "--type", type, "--json", ...(options ? ["--options", options] : [])])).id as string;
    const [size, agree, topics] = [await cf("Size", "number"), await cf("Agree", "checkbox"), await cf("Topics", "multiselect", "a,b,c")];
    const own = await createForm(["--name", "Typed", "--fields", `email,Size,Agree,Topics`]);
    expect(own.fields).toEqual(["email", size, agree, topics]);
    const page = (await srv.api("GET", `${srv.origin}/f/${own.id}`, { key: null })).text;
    expect(page).toContain(`<input type="number" id="f-${size}" name="${size}"`);
    expect(page).toMatch(new RegExp(`<fieldset[^>]*>\n<legend>Topics</legend>`));
    const res = await postForm(own.id, { email: "typed@example.com", [size]: "42.5", [agree]: "true", [topics]: ["a", "c"] });
    expectStatus(res, 201);
    const [contact] = await contactsByEmail("typed@example.com");
    expect(contact.customFields).toEqual({ [size]: 42.5, [agree]: true, [topics]: ["a", "c"] });
    const bad = await postForm(own.id, { email: "typed2@example.com", [size]: "lots" });
    expectStatus(bad, 422);
    expect(bad.text).toContain(`href="#f-${size}"`);
  });

  test("a filled honeypot is answered as a success and creates nothing", async () => {
    const before = [(await events()).length, await submissions()];
    const own = await freshForm();
    const json = await postJson(own.id, { email: "bot@example.com", firstName: "Bot", _hp: "http://spam" });
    expectStatus(json, 201);
    expect(json.json.submissionId).toMatch(/^sub_/);
    const html = await postForm(own.id, { email: "bot@example.com", _hp: "x" });
    expectStatus(html, 201);
    expect(html.text).toContain("Thank you");
    expect([(await events()).length, await submissions()]).toEqual(before);
    expect(await contactsByEmail("bot@example.com")).toHaveLength(0);
  });

  test("unknown form is 404 (envelope for JSON), another content type is 415", async () => {
    expectError(await postJson("frm_missing", { email: "a@example.com" }), "ERR_NOT_FOUND");
    const text = await srv.api("POST", `/forms/${form.id}/submissions`, { key: null, rawBody: "email=a", headers: { "Content-Type": "text/plain" } });
    expectError(text, "ERR_UNSUPPORTED_MEDIA_TYPE");
  });

  test("a browser post to an unknown form gets a 404 page, with X-Request-Id", async () => {
    const res = await srv.api("POST", "/forms/frm_missing/submissions", {
      key: null,
      rawBody: "email=a%40example.com",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expectStatus(res, 404);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain("Form not found");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("a body over 1 MiB is 413: a page for a browser, the envelope for JSON", async () => {
    const own = await freshForm();
    const html = await srv.api("POST", `/forms/${own.id}/submissions`, {
      key: null,
      rawBody: `email=${"a".repeat(1_048_577)}`,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expectStatus(html, 413);
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(html.text).toContain("Too much data");
    expectError(await postJson(own.id, { email: "x".repeat(1_048_577) }), "ERR_PAYLOAD_TOO_LARGE");
  });

  test("a JSON body that is not an object is 422 fieldName body; malformed JSON is ERR_INVALID_JSON", async () => {
    const own = await freshForm();
    const raw = (rawBody: string) =>
      srv.api("POST", `/forms/${own.id}/submissions`, { key: null, rawBody, headers: { "Content-Type": "application/json" } });
    expectError(await raw('["email"]'), "ERR_FORM_VALIDATION", "body");
    expectError(await raw("null"), "ERR_FORM_VALIDATION", "body");
    expectError(await raw('{"email":'), "ERR_INVALID_JSON", "body");
    expectError(await raw(""), "ERR_INVALID_JSON", "body");
  });

  test("a form with a redirect URL answers a browser post with 303 there, JSON with 201", async () => {
    const redirecting = await createForm(["--name", "Newsletter", "--fields", "email", "--redirect-url", "https://example.com/thanks"]);
    const page = await srv.api("GET", `${srv.origin}/f/${redirecting.id}`, { key: null });
    expect(page.text).toMatch(/<input type="email" id="f-email" name="email"[^>]* required/);
    const res = await fetch(`${srv.baseUrl}/forms/${redirecting.id}/submissions`, {
      method: "POST",
      body: new URLSearchParams({ email: "news@example.com" }),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("https://example.com/thanks");
    expectStatus(await postJson(redirecting.id, { email: "news2@example.com" }), 201);
    expect(await contactsByEmail("news@example.com")).toHaveLength(1);
  });

  test("the contact quota applies: 402, while the same email still updates", async () => {
    const project = await srv.newProject({ contactQuota: 1 });
    const quoted = await srv.cli(["form", "create", "--project", project.id, "--name", "Q", "--fields", "email,firstName", "--json"]);
    expectStatus(await postJson(quoted.id, { email: "q1@example.com" }), 201);
    expectError(await postJson(quoted.id, { email: "q2@example.com" }), "ERR_QUOTA_EXCEEDED");
    const html = await postForm(quoted.id, { email: "q3@example.com" });
    expectStatus(html, 402);
    expect(html.headers.get("content-type")).toContain("text/html");
    expectStatus(await postJson(quoted.id, { email: "Q1@example.com", firstName: "Quinn" }), 201);
    const listed = await project.api("GET", "/contacts");
    expect(listed.json.data.map((c: any) => [c.email, c.firstName])).toEqual([["q1@example.com", "Quinn"]]);
  });

  test("submissions are limited per client address and form: 429 with Retry-After", async () => {
    const limited = await createForm(["--name", "Limited", "--fields", "email"]);
    for (let i = 0; i < 10; i++) expectStatus(await postJson(limited.id, { email: "l@example.com", _hp: "bot" }), 201);
    const refused = await postJson(limited.id, { email: "l@example.com" });
    expectError(refused, "ERR_RATE_LIMITED");
    // 10 a minute refill one token every 6 s: the wait for the next one is 1 to 6 whole seconds.
    const wait = (res: { headers: Headers }) => res.headers.get("retry-after") ?? "";
    expect(wait(refused)).toMatch(/^[1-6]$/);
    const html = await postForm(limited.id, { email: "l@example.com" });
    expectStatus(html, 429);
    expect(wait(html)).toMatch(/^[1-6]$/);
    expect(await contactsByEmail("l@example.com")).toHaveLength(0);
    // Another form is counted apart.
    expectStatus(await postJson(form.id, { email: "other@example.com" }), 201);
  });

  test("the OpenAPI document describes the submission route, without a key", async () => {
    const doc = (await srv.api("GET", "/openapi.json", { key: null })).json;
    expect(doc.paths["/forms/{formId}/submissions"].post.security).toEqual([]);
  });
});
