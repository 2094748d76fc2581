import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, walk, type Api, type ServerHandle } from "../helpers/server.ts";
import { ADDRESS_KEYS, expectContactShape, expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";

let srv: ServerHandle;
let api: Api;
/** custom-field ids by type */
const cf: Record<string, string> = {};
const cfTitle: Record<string, string> = {};

const FIELD_TYPES: [type: string, options?: string][] = [
  ["text"],
  ["textarea"],
  ["number"],
  ["date"],
  ["checkbox"],
  ["url"],
  ["email"],
  ["phone"],
  ["select", "gold,silver"],
  ["radio", "yes,no"],
  ["multiselect", "red,green,blue"],
  ["image"],
  ["offering-list"],
];

beforeAll(async () => {
  srv = await startServer();
  api = srv.api;
  for (const [type, options] of FIELD_TYPES) {
    const title = `Field ${type} Title`;
    const args = ["custom-field", "create", "--project", srv.projectId, "--title", title, "--type", type, "--json"];
    if (options) args.push("--options", options);
    const out = await srv.cli(args);
    cf[type] = out.id;
    cfTitle[type] = title;
  }
  // The server reads custom fields from the database on each request: no wait needed.
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const create = (body: unknown, key?: string) => api("POST", "/contacts", { body, key });

describe("POST /contacts basics", () => {
  test("creation answers 201 with the contact and a Location header naming its contactId", async () => {
    const res = await create({ firstName: "Ada", lastName: "Lovelace" });
    expectStatus(res, 201);
    expect(res.json.contactId).toMatch(/^CR-\d+$/);
    expect(res.headers.get("location")).toBe(`/v1/contacts/${res.json.contactId}`);
    expect(res.json.firstName).toBe("Ada");
    expect(res.json.lastName).toBe("Lovelace");
  });

  test("a new contact carries every field: null where unset, empty tags and customFields, a six-key address", async () => {
    const res = await create({ email: "shape@example.com" });
    expectStatus(res, 201);
    const c = res.json;
    expectContactShape(c);
    expect(c).toMatchObject({
      email: "shape@example.com",
      firstName: null,
      lastName: null,
      phone: null,
      businessName: null,
      website: null,
      notes: null,
      tags: [],
      customFields: {},
      subscribed: false,
      smsSubscribed: false,
      source: "api",
      identityType: "personal",
    });
    expect(c.address).toEqual(Object.fromEntries(ADDRESS_KEYS.map((k) => [k, null])));
    expect(c.createdAt).toMatch(ISO_RE);
    expect(c.updatedAt).toMatch(ISO_RE);
    expect("duplicateSignal" in c).toBe(false);
  });

  test("createdAt and updatedAt of a new contact are the current time", async () => {
    const before = Date.now();
    const res = await create({ firstName: "Clock" });
    const after = Date.now();
    expectStatus(res, 201);
    expect(res.json.updatedAt).toBe(res.json.createdAt);
    // The server runs on this machine's clock: the stamp falls within the request.
    const t = Date.parse(res.json.createdAt);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(after);
  });

  test("GET of a created contact returns the same contact plus duplicateSignal", async () => {
    const created = await create({ firstName: "Grace", email: "grace@example.com", notes: "hello" });
    expectStatus(created, 201);
    const got = await api("GET", `/contacts/${created.json.contactId}`);
    expectStatus(got, 200);
    expectContactShape(got.json, true);
    const { duplicateSignal, ...rest } = got.json;
    expect(rest).toEqual(created.json);
    expect(duplicateSignal).toEqual({ emailMatches: 0, phoneMatches: 0 });
  });

  test("the Location header of a creation resolves to the contact", async () => {
    const created = await create({ firstName: "Loc" });
    const location = created.headers.get("location")!;
    const url = location.startsWith("http") ? location : srv.origin + location;
    const got = await api("GET", url);
    expectStatus(got, 200);
    expect(got.json.contactId).toBe(created.json.contactId);
  });

  test("generated contactIds are CR-<n>, n counting up one per contact of the project", async () => {
    const p = await srv.newProject();
    const made: string[] = [];
    for (const firstName of ["One", "Two", "Three"]) {
      const res = await p.api("POST", "/contacts", { body: { firstName } });
      expectStatus(res, 201);
      made.push(res.json.contactId);
    }
    expect(made).toEqual(["CR-1", "CR-2", "CR-3"]);
  });

  test("POST never deduplicates: the same body twice creates two contacts", async () => {
    const body = { email: "twice@example.com", firstName: "Twice" };
    const a = await create(body);
    const b = await create(body);
    expectStatus(a, 201);
    expectStatus(b, 201);
    expect(a.json.contactId).not.toBe(b.json.contactId);
  });

  test("every writable field is stored and returned on creation", async () => {
    const body = {
      firstName: "Full",
      lastName: "Contact",
      email: "full@example.com",
      phone: "+14155550123",
      website: "https://full.example.com/path",
      address: { line1: "1 Main St", line2: "Suite 2", city: "Springfield", state: "IL", zip: "62701", country: "US" },
      notes: "some notes",
      subscribed: true,
      smsSubscribed: true,
      source: "import",
    };
    const res = await create(body);
    expectStatus(res, 201);
    expect(res.json).toMatchObject(body);
    expect(res.json.identityType).toBe("personal");
  });

  test("a partial address is returned with all six keys, null where unset", async () => {
    const res = await create({ firstName: "Addr", address: { city: "Paris" } });
    expectStatus(res, 201);
    expect(res.json.address).toEqual({ line1: null, line2: null, city: "Paris", state: null, zip: null, country: null });
  });
});

describe("identityType", () => {
  test("identityType defaults to personal without a businessName", async () => {
    const res = await create({ firstName: "P" });
    expect(res.json.identityType).toBe("personal");
  });

  test("identityType defaults to business when businessName is set", async () => {
    const res = await create({ businessName: "Acme Ltd" });
    expectStatus(res, 201);
    expect(res.json.identityType).toBe("business");
    expect(res.json.businessName).toBe("Acme Ltd");
  });

  test("explicit identityType business with a businessName is accepted", async () => {
    const res = await create({ businessName: "Biz", identityType: "business" });
    expectStatus(res, 201);
    expect(res.json.identityType).toBe("business");
  });
});

// What a body must be (identity fields, types, sizes, formats, bounds): contacts-create-validation.test.ts.

describe("source and subscriptions", () => {
  test("source defaults to api", async () => {
    expect((await create({ firstName: "S" })).json.source).toBe("api");
  });

  test("source can be set on creation", async () => {
    expect((await create({ firstName: "S", source: "trade-show" })).json.source).toBe("trade-show");
  });

  test("subscribed and smsSubscribed default to false and accept true", async () => {
    const a = await create({ firstName: "Sub" });
    expect([a.json.subscribed, a.json.smsSubscribed]).toEqual([false, false]);
    const b = await create({ firstName: "Sub", subscribed: true, smsSubscribed: true });
    expect([b.json.subscribed, b.json.smsSubscribed]).toEqual([true, true]);
  });
});

describe("contact types on creation", () => {
  test("without contactTypeId the project's default Customer contact type is used", async () => {
    const types = await api("GET", "/contact-types");
    const customer = types.json.data.find((t: any) => t.isDefault);
    expect(customer.category).toBe("Customer");
    const res = await create({ firstName: "Def" });
    expect(res.json.contactType).toEqual({ id: customer.id, name: customer.name, category: "Customer" });
  });

  test("a contactTypeId sets the contact type", async () => {
    const types = await api("GET", "/contact-types");
    const lead = types.json.data.find((t: any) => t.category === "Lead");
    const res = await create({ firstName: "Lead", contactTypeId: lead.id });
    expectStatus(res, 201);
    expect(res.json.contactType).toEqual({ id: lead.id, name: lead.name, category: "Lead" });
  });

});

describe("tags on creation", () => {
  test("an unknown tag name is created automatically and listed by GET /tags", async () => {
    const res = await create({ firstName: "Tag", tags: ["Brand-New-Tag"] });
    expectStatus(res, 201);
    expect(res.json.tags).toHaveLength(1);
    expect(res.json.tags[0].name).toBe("Brand-New-Tag");
    expect(res.json.tags[0].id).toMatch(/^tag_/);
    const { items } = await walk(api, "/tags", { limit: 200 });
    expect(items.filter((t: any) => t.name === "Brand-New-Tag")).toEqual([{ id: res.json.tags[0].id, name: "Brand-New-Tag" }]);
  });

  test("tag names match case-insensitively: a differently cased name reuses the existing tag", async () => {
    const a = await create({ firstName: "Case", tags: ["Premium"] });
    const b = await create({ firstName: "Case", tags: ["pREMIUM"] });
    expect(b.json.tags).toEqual(a.json.tags);
    expect(b.json.tags[0].name).toBe("Premium");
    const { items } = await walk(api, "/tags", { limit: 200 });
    expect(items.filter((t: any) => t.name.toLowerCase() === "premium")).toEqual(a.json.tags);
  });

  test("a tag can be given by its id", async () => {
    const a = await create({ firstName: "ById", tags: ["by-id-tag"] });
    const tag = a.json.tags[0];
    const b = await create({ firstName: "ById", tags: [tag.id] });
    expectStatus(b, 201);
    expect(b.json.tags).toEqual([tag]);
  });

  test("tags by name and by id can be mixed in one request", async () => {
    const a = await create({ firstName: "Mix", tags: ["mix-one"] });
    const b = await create({ firstName: "Mix", tags: [a.json.tags[0].id, "mix-two"] });
    expectStatus(b, 201);
    expect(b.json.tags.map((t: any) => t.name).sort()).toEqual(["mix-one", "mix-two"]);
  });
});

describe("custom fields on creation", () => {
  const values: [type: string, value: unknown][] = [
    ["text", "plain text"],
    ["textarea", "line one\nline two"],
    ["number", 42.5],
    ["date", "2024-05-01"],
    ["checkbox", true],
    ["url", "https://example.com/x"],
    ["email", "field@example.com"],
    ["phone", "+14155550100"],
    ["select", "gold"],
    ["radio", "no"],
    ["multiselect", ["red", "blue"]],
  ];

  test.each(values)("a %s custom field written by id is returned keyed by id", async (type, value) => {
    const res = await create({ firstName: "CF", customFields: { [cf[type]]: value } });
    expectStatus(res, 201);
    expect(res.json.customFields).toEqual({ [cf[type]]: value });
  });

  test("a custom field written by its exact title is stored and returned keyed by id", async () => {
    const res = await create({ firstName: "CF", customFields: { [cfTitle.text]: "by title" } });
    expectStatus(res, 201);
    expect(res.json.customFields).toEqual({ [cf.text]: "by title" });
  });

  test("a title that is not exact (other case) is an unknown key: 422 customFields.<key>", async () => {
    const key = cfTitle.text.toUpperCase();
    expectError(await create({ firstName: "CF", customFields: { [key]: "x" } }), "ERR_FORM_VALIDATION", `customFields.${key}`);
  });

  test("an unknown custom-field key is 422 customFields.<key>", async () => {
    expectError(
      await create({ firstName: "CF", customFields: { cf_unknown: "x" } }),
      "ERR_FORM_VALIDATION",
      "customFields.cf_unknown",
    );
  });

  test.each([
    ["select", "bronze"],
    ["radio", "maybe"],
    ["multiselect", ["red", "purple"]],
  ])("a %s value outside its options is 422 customFields.<id>", async (type, value) => {
    const res = await create({ firstName: "CF", customFields: { [cf[type]]: value } });
    expectError(res, "ERR_FORM_VALIDATION", `customFields.${cf[type]}`);
  });

  test("a select value outside its options written by title is 422 customFields.<id>", async () => {
    const res = await create({ firstName: "CF", customFields: { [cfTitle.select]: "bronze" } });
    expectError(res, "ERR_FORM_VALIDATION", `customFields.${cf.select}`);
  });

  test.each([
    ["number", "not a number"],
    ["text", 12],
    ["checkbox", "perhaps"],
    ["date", "not a date"],
    ["url", "not a url"],
    ["email", "not-an-email"],
    ["select", 3],
  ])("a wrong-typed %s custom value is 422 customFields.<id>", async (type, value) => {
    const res = await create({ firstName: "CF", customFields: { [cf[type]]: value } });
    expectError(res, "ERR_FORM_VALIDATION", `customFields.${cf[type]}`);
  });

  test.each([["image"], ["offering-list"]])("a write to a read-only %s custom field is 422 customFields.<id>", async (type) => {
    const res = await create({ firstName: "CF", customFields: { [cf[type]]: type === "image" ? "https://example.com/a.png" : ["x"] } });
    expectError(res, "ERR_FORM_VALIDATION", `customFields.${cf[type]}`);
  });

  test("a write to a read-only custom field by title is 422 customFields.<id>", async () => {
    const res = await create({ firstName: "CF", customFields: { [cfTitle.image]: "https://example.com/a.png" } });
    expectError(res, "ERR_FORM_VALIDATION", `customFields.${cf.image}`);
  });

  test("several custom fields in one request are all stored", async () => {
    const res = await create({ firstName: "CF", customFields: { [cf.text]: "t", [cfTitle.number]: 7, [cf.select]: "silver" } });
    expectStatus(res, 201);
    expect(res.json.customFields).toEqual({ [cf.text]: "t", [cf.number]: 7, [cf.select]: "silver" });
  });
});

describe("contact quota", () => {
  test("a create past the project's contact quota is 402 ERR_QUOTA_EXCEEDED", async () => {
    const p = await srv.newProject({ contactQuota: 2 });
    expectStatus(await p.api("POST", "/contacts", { body: { firstName: "Q1" } }), 201);
    expectStatus(await p.api("POST", "/contacts", { body: { firstName: "Q2" } }), 201);
    const third = await p.api("POST", "/contacts", { body: { firstName: "Q3" } });
    expectError(third, "ERR_QUOTA_EXCEEDED");
    const list = await p.api("GET", "/contacts");
    expect(list.json.data).toHaveLength(2);
  });

  test("a full quota does not block PATCH of existing contacts", async () => {
    const p = await srv.newProject({ contactQuota: 1 });
    const c = await p.api("POST", "/contacts", { body: { firstName: "Only" } });
    expectStatus(c, 201);
    expectError(await p.api("POST", "/contacts", { body: { firstName: "Over" } }), "ERR_QUOTA_EXCEEDED");
    expectStatus(await p.api("PATCH", `/contacts/${c.json.contactId}`, { body: { lastName: "Still editable" } }), 200);
  });

  test("a project without a quota is not limited by another project's quota", async () => {
    const full = await srv.newProject({ contactQuota: 1 });
    expectStatus(await full.api("POST", "/contacts", { body: { firstName: "Q1" } }), 201);
    expectError(await full.api("POST", "/contacts", { body: { firstName: "Q2" } }), "ERR_QUOTA_EXCEEDED");
    expectStatus(await create({ firstName: "Unlimited" }), 201);
  });
});
