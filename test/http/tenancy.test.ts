import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";

let srv: ServerHandle;
let a: ProjectInfo;
let b: ProjectInfo;
/** Project A's contact, relabelled to a number B never generates; no test changes it. */
let contactA: any;
const CONTACT_A_ID = "CR-987654";
let tagA: any;
let cfA: string;
let ctA: any;
let itA: any;

beforeAll(async () => {
  srv = await startServer();
  a = await srv.newProject({ name: "tenant-a" });
  b = await srv.newProject({ name: "tenant-b" });
  cfA = (await srv.cli(["custom-field", "create", "--project", a.id, "--title", "Shared Title", "--type", "text", "--json"])).id;
  await srv.cli(["custom-field", "create", "--project", b.id, "--title", "Shared Title", "--type", "text", "--json"]);
  ctA = await srv.cli(["contact-type", "create", "--project", a.id, "--name", "A Only", "--category", "Lead", "--json"]);
  itA = await srv.cli(["interaction-type", "create", "--project", a.id, "--name", "A Only Type", "--json"]);
  // The server reads reference data from the database on each request: no wait needed.
  const c = await a.api("POST", "/contacts", {
    body: { firstName: "Secret", email: "secret@a.example.com", tags: ["a-only-tag"], customFields: { [cfA]: "a" } },
  });
  expectStatus(c, 201);
  // B's own CR-1, CR-2 … must never stand in for A's contact, whatever B creates first.
  const relabelled = await a.api("PATCH", `/contacts/${c.json.contactId}`, { body: { contactId: CONTACT_A_ID } });
  expectStatus(relabelled, 200);
  contactA = relabelled.json;
  tagA = c.json.tags[0];
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

describe("another project's contact is not found", () => {
  const routes: [string, string, unknown][] = [
    ["GET", "/contacts/:id", undefined],
    ["PATCH", "/contacts/:id", { notes: "hijack" }],
    ["POST", "/contacts/:id/interactions", { type: "note", note: "hijack" }],
    ["GET", "/contacts/:id/interactions", undefined],
  ];
  for (const [method, path, body] of routes)
    test(`${method} ${path} with project B's key on project A's contact is 404`, async () => {
      const res = await b.api(method, path.replace(":id", contactA.contactId), { body });
      expectError(res, "ERR_NOT_FOUND");
      expect(res.text).not.toContain("secret@a.example.com");
    });

  test("project A's contact is unchanged after project B's attempts to write it", async () => {
    expectError(await b.api("PATCH", `/contacts/${contactA.contactId}`, { body: { notes: "hijack" } }), "ERR_NOT_FOUND");
    expectError(await b.api("POST", `/contacts/${contactA.contactId}/interactions`, { body: { type: "note", note: "hijack" } }), "ERR_NOT_FOUND");
    const res = await a.api("GET", `/contacts/${contactA.contactId}`);
    const { duplicateSignal, ...contact } = res.json;
    expect(contact).toEqual(contactA);
    expect((await a.api("GET", `/contacts/${contactA.contactId}/interactions`)).json.data).toEqual([]);
  });
});

describe("lists show only the key's project", () => {
  test("GET /contacts with B's key does not list A's contacts", async () => {
    expect((await b.api("GET", "/contacts", { query: { email: "secret@a.example.com" } })).json.data).toEqual([]);
    expect((await b.api("GET", "/contacts", { query: { search: "Secret" } })).json.data).toEqual([]);
  });

  test("GET /tags with B's key does not list A's tags", async () => {
    const res = await b.api("GET", "/tags", { query: { limit: 200 } });
    expect(res.json.data.map((t: any) => t.id)).not.toContain(tagA.id);
  });

  test("GET /custom-fields with B's key does not list A's custom fields", async () => {
    const res = await b.api("GET", "/custom-fields", { query: { limit: 200 } });
    expect(res.json.data.map((f: any) => f.id)).not.toContain(cfA);
  });

  test("GET /contact-types with B's key does not list A's contact types", async () => {
    const res = await b.api("GET", "/contact-types", { query: { limit: 200 } });
    expect(res.json.data.map((t: any) => t.id)).not.toContain(ctA.id);
  });

  test("GET /interaction-types with B's key does not list A's interaction types", async () => {
    const res = await b.api("GET", "/interaction-types", { query: { limit: 200 } });
    expect(res.json.data.map((t: any) => t.id)).not.toContain(itA.id);
  });

  test("?tag= with another project's tag id gives an empty list", async () => {
    // A project of its own: B's tests may give B a tag named like A's id (see below).
    const c = await srv.newProject();
    expectStatus(await c.api("POST", "/contacts", { body: { firstName: "C person", tags: ["c-tag"] } }), 201);
    const res = await c.api("GET", "/contacts", { query: { tag: tagA.id } });
    expectStatus(res, 200);
    expect(res.json.data).toEqual([]);
  });
});

describe("another project's reference ids are unknown (422)", () => {
  test("contactTypeId of another project is 422 contactTypeId", async () => {
    expectError(await b.api("POST", "/contacts", { body: { firstName: "X", contactTypeId: ctA.id } }), "ERR_FORM_VALIDATION", "contactTypeId");
  });

  test("a default contact type id of another project is 422 contactTypeId", async () => {
    const leadA = (await a.api("GET", "/contact-types")).json.data.find((t: any) => t.category === "Lead");
    expectError(await b.api("POST", "/contacts", { body: { firstName: "X", contactTypeId: leadA.id } }), "ERR_FORM_VALIDATION", "contactTypeId");
  });

  test("a custom-field id of another project is 422 customFields.<id>", async () => {
    expectError(
      await b.api("POST", "/contacts", { body: { firstName: "X", customFields: { [cfA]: "x" } } }),
      "ERR_FORM_VALIDATION",
      `customFields.${cfA}`,
    );
  });

  test("a custom-field title resolves within the key's project only", async () => {
    const res = await b.api("POST", "/contacts", { body: { firstName: "X", customFields: { "Shared Title": "b" } } });
    expectStatus(res, 201);
    expect(Object.keys(res.json.customFields)).not.toContain(cfA);
  });

  test("an interactionTypeId of another project is 422 interactionTypeId", async () => {
    const c = await b.api("POST", "/contacts", { body: { firstName: "X" } });
    expectError(
      await b.api("POST", `/contacts/${c.json.contactId}/interactions`, { body: { interactionTypeId: itA.id } }),
      "ERR_FORM_VALIDATION",
      "interactionTypeId",
    );
  });

  test("a default interaction type id of another project is 422 interactionTypeId", async () => {
    const callA = (await a.api("GET", "/interaction-types")).json.data.find((t: any) => t.name === "Call");
    const c = await b.api("POST", "/contacts", { body: { firstName: "X" } });
    expectError(
      await b.api("POST", `/contacts/${c.json.contactId}/interactions`, { body: { interactionTypeId: callA.id } }),
      "ERR_FORM_VALIDATION",
      "interactionTypeId",
    );
  });

  test("another project's tag id never attaches that project's tag: it is an unknown name, so B gets a new tag of that name", async () => {
    // docs/decisions.md: `tag_…` items are looked up as ids first, then as names; an unknown name creates the tag.
    const res = await b.api("POST", "/contacts", { body: { firstName: "X", tags: [tagA.id] } });
    expectStatus(res, 201);
    expect(res.json.tags).toHaveLength(1);
    expect(res.json.tags[0].name).toBe(tagA.id);
    expect(res.json.tags[0].id).not.toBe(tagA.id);
    // A's tag is as it was, and still only A's.
    const tagsOfA = (await a.api("GET", "/tags", { query: { limit: 200 } })).json.data;
    expect(tagsOfA).toEqual([tagA]);
  });

  test("a tag name used in another project creates a separate tag", async () => {
    const res = await b.api("POST", "/contacts", { body: { firstName: "X", tags: ["a-only-tag"] } });
    expectStatus(res, 201);
    expect(res.json.tags[0].id).not.toBe(tagA.id);
  });
});

describe("contactIds are unique within a project only", () => {
  test("a relabel to a contactId used in another project succeeds", async () => {
    const target = "CR-424242";
    const inA = await a.api("POST", "/contacts", { body: { firstName: "A relabel" } });
    expectStatus(inA, 201);
    expectStatus(await a.api("PATCH", `/contacts/${inA.json.contactId}`, { body: { contactId: target } }), 200);
    const inB = await b.api("POST", "/contacts", { body: { firstName: "B relabel" } });
    expectStatus(inB, 201);
    expectStatus(await b.api("PATCH", `/contacts/${inB.json.contactId}`, { body: { contactId: target } }), 200);
    expect((await a.api("GET", `/contacts/${target}`)).json.firstName).toBe("A relabel");
    expect((await b.api("GET", `/contacts/${target}`)).json.firstName).toBe("B relabel");
  });

  test("the duplicateSignal does not count another project's contacts", async () => {
    // A project of its own, so B's lists by A's email stay empty whatever runs first.
    const twin = await srv.newProject();
    const c = await twin.api("POST", "/contacts", { body: { firstName: "Twin", email: "secret@a.example.com" } });
    expectStatus(c, 201);
    const res = await twin.api("GET", `/contacts/${c.json.contactId}`);
    expect(res.json.duplicateSignal).toEqual({ emailMatches: 0, phoneMatches: 0 });
  });

  test("an Idempotency-Key used in another project does not replay there", async () => {
    const headers = { "Idempotency-Key": "tenant-shared-key" };
    const first = await a.api("POST", "/contacts", { body: { firstName: "Idem" }, headers });
    const second = await b.api("POST", "/contacts", { body: { firstName: "Idem" }, headers });
    expectStatus(first, 201);
    expectStatus(second, 201);
    expect(second.headers.get("idempotent-replayed")).not.toBe("true");
    expectStatus(await b.api("GET", `/contacts/${second.json.contactId}`), 200);
  });
});
