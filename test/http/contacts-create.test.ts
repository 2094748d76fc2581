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

describe("required fields", () => {
  test.each([
    ["an empty body", {}],
    ["only notes", { notes: "x" }],
    ["only a website", { website: "https://a.example.com" }],
    ["only tags", { tags: ["lonely"] }],
    ["identity fields all null", { firstName: null, lastName: null, email: null, phone: null, businessName: null }],
  ])("a body without firstName, lastName, email, phone or businessName is 422 firstName (%s)", async (_name, body) => {
    const res = await create(body);
    expectError(res, "ERR_FORM_VALIDATION", "firstName");
  });

  test.each([
    ["firstName", { firstName: "A" }],
    ["lastName", { lastName: "B" }],
    ["email", { email: "only@example.com" }],
    ["phone", { phone: "+14155550111" }],
    ["businessName", { businessName: "Only Inc" }],
  ])("%s alone is enough to create a contact", async (_name, body) => {
    expectStatus(await create(body), 201);
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

  test("identityType personal with a businessName is 422 identityType", async () => {
    const res = await create({ businessName: "Acme Ltd", identityType: "personal" });
    expectError(res, "ERR_FORM_VALIDATION", "identityType");
  });

  test("explicit identityType business with a businessName is accepted", async () => {
    const res = await create({ businessName: "Biz", identityType: "business" });
    expectStatus(res, 201);
    expect(res.json.identityType).toBe("business");
  });

  test("an identityType other than personal or business is 422 identityType", async () => {
    const res = await create({ firstName: "X", identityType: "robot" });
    expectError(res, "ERR_FORM_VALIDATION", "identityType");
  });
});

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

  test.each([["subscribed"], ["smsSubscribed"]])("a non-boolean %s is 422 naming it", async (field) => {
    const res = await create({ firstName: "Sub", [field]: "yes" });
    expectError(res, "ERR_FORM_VALIDATION", field);
  });
});

const email254 = "a".repeat(64) + "@" + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(57) + ".com";
const email255 = "a".repeat(64) + "@" + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(58) + ".com";
const urlOf = (len: number) => {
  const prefix = "https://example.com/";
  return prefix + "p".repeat(len - prefix.length);
};

describe("bounds of contact fields", () => {
  const textFields = ["firstName", "lastName", "businessName"];
  test.each(textFields)("%s of exactly 255 characters is accepted", async (field) => {
    const res = await create({ email: "b@example.com", [field]: "x".repeat(255) });
    expectStatus(res, 201);
    expect(res.json[field]).toBe("x".repeat(255));
  });
  test.each(textFields)("%s of 256 characters is 422 naming it", async (field) => {
    expectError(await create({ email: "b@example.com", [field]: "x".repeat(256) }), "ERR_FORM_VALIDATION", field);
  });

  test.each(ADDRESS_KEYS)("address.%s of exactly 255 characters is accepted", async (part) => {
    const res = await create({ firstName: "A", address: { [part]: "y".repeat(255) } });
    expectStatus(res, 201);
    expect(res.json.address[part]).toBe("y".repeat(255));
  });
  test.each(ADDRESS_KEYS)("address.%s of 256 characters is 422 address.<part>", async (part) => {
    const res = await create({ firstName: "A", address: { [part]: "y".repeat(256) } });
    expectError(res, "ERR_FORM_VALIDATION", `address.${part}`);
  });

  test("an email of exactly 254 characters is accepted", async () => {
    expect(email254.length).toBe(254);
    const res = await create({ email: email254 });
    expectStatus(res, 201);
  });
  test("an email of 255 characters is 422 email", async () => {
    expect(email255.length).toBe(255);
    expectError(await create({ email: email255 }), "ERR_FORM_VALIDATION", "email");
  });
  test.each([["not-an-email"], ["a@"], ["@example.com"], ["two@@example.com"], ["spa ce@example.com"]])(
    "a syntactically invalid email (%s) is 422 email",
    async (email) => {
      expectError(await create({ firstName: "E", email }), "ERR_FORM_VALIDATION", "email");
    },
  );

  test("a phone of exactly 32 characters is accepted", async () => {
    expectStatus(await create({ phone: "1".repeat(32) }), 201);
  });
  test("a phone of 33 characters is 422 phone", async () => {
    expectError(await create({ phone: "1".repeat(33) }), "ERR_FORM_VALIDATION", "phone");
  });

  test("a website of exactly 2048 characters is accepted", async () => {
    const res = await create({ firstName: "W", website: urlOf(2048) });
    expectStatus(res, 201);
    expect(res.json.website).toBe(urlOf(2048));
  });
  test("a website of 2049 characters is 422 website", async () => {
    expectError(await create({ firstName: "W", website: urlOf(2049) }), "ERR_FORM_VALIDATION", "website");
  });
  test.each([["http://example.com"], ["https://example.com/a?b=c"]])("an http(s) website (%s) is accepted", async (website) => {
    expectStatus(await create({ firstName: "W", website }), 201);
  });
  test.each([["ftp://example.com"], ["example.com"], ["not a url"], ["javascript:alert(1)"]])(
    "a website that is not an http(s) URL (%s) is 422 website",
    async (website) => {
      expectError(await create({ firstName: "W", website }), "ERR_FORM_VALIDATION", "website");
    },
  );

  test("notes of exactly 65,535 characters are accepted", async () => {
    const res = await create({ firstName: "N", notes: "n".repeat(65_535) });
    expectStatus(res, 201);
    expect(res.json.notes.length).toBe(65_535);
  });
  test("notes of 65,536 characters are 422 notes", async () => {
    expectError(await create({ firstName: "N", notes: "n".repeat(65_536) }), "ERR_FORM_VALIDATION", "notes");
  });

  test("a tag name of exactly 64 characters is accepted", async () => {
    const name = "t".repeat(64);
    const res = await create({ firstName: "T", tags: [name] });
    expectStatus(res, 201);
    expect(res.json.tags.map((t: any) => t.name)).toEqual([name]);
  });
  test("a tag name of 65 characters is 422 tags", async () => {
    expectError(await create({ firstName: "T", tags: ["ok", "t".repeat(65)] }), "ERR_FORM_VALIDATION", "tags");
  });
  test("an empty tag name is 422 tags", async () => {
    expectError(await create({ firstName: "T", tags: ["ok", ""] }), "ERR_FORM_VALIDATION", "tags");
  });
  test("exactly 100 tags on a contact are accepted", async () => {
    const tags = Array.from({ length: 100 }, (_, i) => `bulk-${i}`);
    const res = await create({ firstName: "T", tags });
    expectStatus(res, 201);
    expect(res.json.tags.length).toBe(100);
  });
  test("101 tags on a contact are 422 tags", async () => {
    const tags = Array.from({ length: 101 }, (_, i) => `bulk-${i}`);
    expectError(await create({ firstName: "T", tags }), "ERR_FORM_VALIDATION", "tags");
  });

  test("a text custom value of exactly 10,000 characters is accepted", async () => {
    const res = await create({ firstName: "C", customFields: { [cf.text]: "v".repeat(10_000) } });
    expectStatus(res, 201);
    expect(res.json.customFields[cf.text]).toBe("v".repeat(10_000));
  });
  test("a text custom value of 10,001 characters is 422 customFields.<id>", async () => {
    const res = await create({ firstName: "C", customFields: { [cf.text]: "v".repeat(10_001) } });
    expectError(res, "ERR_FORM_VALIDATION", `customFields.${cf.text}`);
  });
});

describe("body validation", () => {
  test("an unknown body field is 422 with fieldName = that key", async () => {
    expectError(await create({ firstName: "U", favouriteColour: "blue" }), "ERR_FORM_VALIDATION", "favouriteColour");
  });
  test("fields not writable on creation (contactId, createdAt, updatedAt, duplicateSignal) are 422 naming them", async () => {
    for (const [field, value] of [
      ["contactId", "CR-999999"],
      ["createdAt", "2020-01-01T00:00:00Z"],
      ["updatedAt", "2020-01-01T00:00:00Z"],
      ["duplicateSignal", { emailMatches: 0, phoneMatches: 0 }],
    ] as const) {
      expectError(await create({ firstName: "U", [field]: value }), "ERR_FORM_VALIDATION", field);
    }
  });
  test("an unknown address key is 422 address.<key>", async () => {
    expectError(await create({ firstName: "U", address: { planet: "Mars" } }), "ERR_FORM_VALIDATION", "address.planet");
  });
  test.each([
    ["firstName", 5],
    ["lastName", true],
    ["email", 42],
    ["phone", 4155550100],
    ["notes", { a: 1 }],
    ["tags", "vip"],
    ["customFields", ["x"]],
    ["address", "1 Main St"],
    ["contactTypeId", 7],
  ])("a wrongly typed %s is 422 naming it", async (field, value) => {
    const body: any = { firstName: "Typed", [field]: value };
    if (field === "firstName") body.lastName = "L";
    expectError(await create(body), "ERR_FORM_VALIDATION", field);
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

  test("an unknown contactTypeId is 422 contactTypeId", async () => {
    expectError(await create({ firstName: "X", contactTypeId: "ct_doesnotexist" }), "ERR_FORM_VALIDATION", "contactTypeId");
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
