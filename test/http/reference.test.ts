import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";

let srv: ServerHandle;
let fresh: ProjectInfo; // untouched: shows the defaults of a new project
let p: ProjectInfo; // gets records from the CLI, and three tags through contacts
const made: Record<string, any> = {};
const WRITABLE_TYPES = ["text", "textarea", "number", "date", "checkbox", "url", "email", "phone", "image", "offering-list"];

beforeAll(async () => {
  srv = await startServer();
  fresh = await srv.newProject({ name: "fresh-project" });
  p = await srv.newProject({ name: "reference-project" });
  const cli = (args: string[]) => srv.cli([...args, "--json"]);
  made.tier = await cli(["custom-field", "create", "--project", p.id, "--title", "Tier", "--type", "select", "--options", "gold,silver"]);
  made.answer = await cli(["custom-field", "create", "--project", p.id, "--title", "Answer", "--type", "radio", "--options", "yes,no"]);
  made.colours = await cli(["custom-field", "create", "--project", p.id, "--title", "Colours", "--type", "multiselect", "--options", "red,blue"]);
  for (const type of WRITABLE_TYPES) await cli(["custom-field", "create", "--project", p.id, "--title", `W ${type}`, "--type", type]);
  made.distributor = await cli(["contact-type", "create", "--project", p.id, "--name", "Distributor", "--category", "Lead"]);
  made.demo = await cli(["interaction-type", "create", "--project", p.id, "--name", "Demo"]);
  // The server reads reference data from the database on each request: no wait needed.
  expectStatus(await p.api("POST", "/contacts", { body: { firstName: "T", tags: ["gamma", "alpha"] } }), 201);
  expectStatus(await p.api("POST", "/contacts", { body: { firstName: "T", tags: ["beta"] } }), 201);
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const names = (res: any, key = "name") => res.json.data.map((r: any) => r[key]);

describe("defaults of a new project", () => {
  test("GET /contact-types lists Customer (default), Lead, Other, Personnel ordered by name in the list envelope", async () => {
    const res = await fresh.api("GET", "/contact-types");
    expectStatus(res, 200);
    expect(res.json.pagination).toEqual({ nextCursor: null, hasMore: false });
    expect(res.json.data.map((t: any) => [t.name, t.category, t.isDefault])).toEqual([
      ["Customer", "Customer", true],
      ["Lead", "Lead", false],
      ["Other", "Other", false],
      ["Personnel", "Personnel", false],
    ]);
    for (const t of res.json.data) {
      expect(Object.keys(t).sort()).toEqual(["category", "id", "isDefault", "name"]);
      expect(t.id).toMatch(/^ct_/);
    }
  });

  test("GET /interaction-types lists Call, Email, Meeting, Message as { id, name }", async () => {
    const res = await fresh.api("GET", "/interaction-types");
    expectStatus(res, 200);
    expect(names(res)).toEqual(["Call", "Email", "Meeting", "Message"]);
    for (const t of res.json.data) {
      expect(Object.keys(t).sort()).toEqual(["id", "name"]);
      expect(t.id).toMatch(/^it_/);
    }
    expect(res.json.pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  test("GET /custom-fields of a new project is empty", async () => {
    const res = await fresh.api("GET", "/custom-fields");
    expect(res.json).toEqual({ data: [], pagination: { nextCursor: null, hasMore: false } });
  });

  test("GET /tags of a new project is empty", async () => {
    const res = await fresh.api("GET", "/tags");
    expect(res.json).toEqual({ data: [], pagination: { nextCursor: null, hasMore: false } });
  });
});

describe("records created in product settings", () => {
  test("a custom field created with the CLI is listed as { id, title, type, options, writable, unique }", async () => {
    const out = made.tier;
    expect(out.id).toMatch(/^cf_/);
    const res = await p.api("GET", "/custom-fields");
    const f = res.json.data.find((x: any) => x.id === out.id);
    expect(f).toEqual({ id: out.id, title: "Tier", type: "select", options: ["gold", "silver"], writable: true, unique: false });
  });

  test("custom fields carry options for select, radio and multiselect", async () => {
    const res = await p.api("GET", "/custom-fields");
    const byTitle = Object.fromEntries(res.json.data.map((f: any) => [f.title, f]));
    expect(byTitle.Answer.options).toEqual(["yes", "no"]);
    expect(byTitle.Colours.options).toEqual(["red", "blue"]);
  });

  test("image and offering-list custom fields are writable: false; every other type writable: true", async () => {
    const types = WRITABLE_TYPES;
    const { items } = await walk(p.api, "/custom-fields", { limit: 200 });
    for (const type of types) {
      const f = items.find((x: any) => x.title === `W ${type}`);
      expect(f.type).toBe(type);
      expect(f.writable).toBe(type !== "image" && type !== "offering-list");
    }
  });

  test("GET /custom-fields is ordered by title", async () => {
    const { items } = await walk(p.api, "/custom-fields", { limit: 200 });
    const titles = items.map((f: any) => f.title);
    expect(titles).toEqual([...titles].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  test("a contact type created with the CLI is listed in name order and usable as contactTypeId", async () => {
    const ct = made.distributor;
    expect(ct.id).toMatch(/^ct_/);
    const res = await p.api("GET", "/contact-types");
    expect(names(res)).toEqual(["Customer", "Distributor", "Lead", "Other", "Personnel"]);
    expect(res.json.data[1]).toEqual({ id: ct.id, name: "Distributor", category: "Lead", isDefault: false });
    const c = await p.api("POST", "/contacts", { body: { firstName: "Dist", contactTypeId: ct.id } });
    expectStatus(c, 201);
    expect(c.json.contactType).toEqual({ id: ct.id, name: "Distributor", category: "Lead" });
  });

  test("an interaction type created with the CLI is listed in name order", async () => {
    expect(made.demo.id).toMatch(/^it_/);
    expect(names(await p.api("GET", "/interaction-types"))).toEqual(["Call", "Demo", "Email", "Meeting", "Message"]);
  });

  test("tags created through contacts are listed as { id, name } ordered by name", async () => {
    const res = await p.api("GET", "/tags");
    expect(names(res)).toEqual(["alpha", "beta", "gamma"]);
    for (const t of res.json.data) {
      expect(Object.keys(t).sort()).toEqual(["id", "name"]);
      expect(t.id).toMatch(/^tag_/);
    }
  });
});

describe("paging of reference lists", () => {
  /** What beforeAll gave the project: 4 + 1 contact types, 4 + 1 interaction types, 3 + 10 custom fields, 3 tags. */
  const COUNTS: Record<string, number> = { "/contact-types": 5, "/interaction-types": 5, "/custom-fields": 13, "/tags": 3 };
  for (const path of Object.keys(COUNTS)) {
    test(`${path} pages with limit and cursor without gaps or duplicates`, async () => {
      const all = await p.api("GET", path, { query: { limit: 200 } });
      expect(all.json.data).toHaveLength(COUNTS[path]!);
      const { items, pages } = await walk(p.api, path, { limit: 2 });
      expect(items.map((x: any) => x.id)).toEqual(all.json.data.map((x: any) => x.id));
      expect(pages).toHaveLength(Math.ceil(COUNTS[path]! / 2));
      for (const page of pages.slice(0, -1)) expect(page.pagination.hasMore).toBe(true);
      expect(pages[pages.length - 1].pagination).toEqual({ nextCursor: null, hasMore: false });
    });

    test(`${path} rejects limit=0 and limit=201 with 422 limit`, async () => {
      expectError(await p.api("GET", path, { query: { limit: 0 } }), "ERR_FORM_VALIDATION", "limit");
      expectError(await p.api("GET", path, { query: { limit: 201 } }), "ERR_FORM_VALIDATION", "limit");
    });

    test(`${path} rejects a garbage cursor with 422 cursor`, async () => {
      expectError(await p.api("GET", path, { query: { cursor: "garbage" } }), "ERR_FORM_VALIDATION", "cursor");
    });
  }

  test("a page that takes the last interaction type says hasMore false and nextCursor null", async () => {
    const res = await p.api("GET", "/interaction-types", { query: { limit: 5 } });
    expect(res.json.data).toHaveLength(5);
    expect(res.json.pagination).toEqual({ nextCursor: null, hasMore: false });
  });
});
