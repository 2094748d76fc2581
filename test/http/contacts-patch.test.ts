import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type Api, type ServerHandle } from "../helpers/server.ts";
import { expectContactShape, expectError, expectStatus } from "../helpers/expect.ts";
import { until } from "../helpers/until.ts";

let srv: ServerHandle;
let api: Api;
const cf: Record<string, string> = {};

beforeAll(async () => {
  srv = await startServer();
  api = srv.api;
  for (const [type, options] of [["text"], ["number"], ["select", "gold,silver"], ["image"]] as [string, string?][]) {
    const args = ["custom-field", "create", "--project", srv.projectId, "--title", `Patch ${type}`, "--type", type, "--json"];
    if (options) args.push("--options", options);
    cf[type] = (await srv.cli(args)).id;
  }
  // The server reads custom fields from the database on each request: no wait needed.
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

async function make(body: Record<string, unknown> = {}) {
  const res = await api("POST", "/contacts", { body: { firstName: "Patchy", ...body } });
  expectStatus(res, 201);
  return res.json;
}
const patch = (contactId: string, body: unknown) => api("PATCH", `/contacts/${contactId}`, { body });
const get = (contactId: string) => api("GET", `/contacts/${contactId}`);
/** Resolves once the clock has moved past `iso`: a write from now on would be stamped later. */
const pastClock = (iso: string) => until(() => Date.now() > Date.parse(iso) + 1, { what: `the clock past ${iso}` });

describe("PATCH /contacts/{contactId}", () => {
  test("PATCH answers 200 with the full contact without duplicateSignal", async () => {
    const c = await make();
    const res = await patch(c.contactId, { lastName: "Updated" });
    expectStatus(res, 200);
    expectContactShape(res.json);
    expect(res.json.lastName).toBe("Updated");
  });

  test("PATCH changes only the fields sent", async () => {
    const c = await make({ lastName: "Keep", email: "keep@example.com", phone: "+14155550101", notes: "n" });
    const res = await patch(c.contactId, { phone: "+14155550102" });
    expectStatus(res, 200);
    const { phone, updatedAt, version, ...rest } = res.json;
    const { phone: _p, updatedAt: _u, version: _v, ...before } = c;
    expect(phone).toBe("+14155550102");
    expect(version).toBe(c.version + 1);
    expect(rest).toEqual(before);
  });

  test("the PATCH answer equals what a later GET returns", async () => {
    const c = await make();
    const res = await patch(c.contactId, { notes: "persisted" });
    const got = await get(c.contactId);
    const { duplicateSignal, ...rest } = got.json;
    expect(rest).toEqual(res.json);
  });

  test("PATCH with null clears the field", async () => {
    const c = await make({ email: "clear@example.com", lastName: "Clear", notes: "x" });
    const res = await patch(c.contactId, { email: null, notes: null });
    expectStatus(res, 200);
    expect(res.json.email).toBeNull();
    expect(res.json.notes).toBeNull();
    expect(res.json.lastName).toBe("Clear");
    expect((await get(c.contactId)).json.email).toBeNull();
  });

  test("address merges key by key and null clears one key", async () => {
    const c = await make({ address: { line1: "1 Main St", city: "Springfield", zip: "12345" } });
    const res = await patch(c.contactId, { address: { city: "Shelbyville", zip: null } });
    expectStatus(res, 200);
    expect(res.json.address).toEqual({ line1: "1 Main St", line2: null, city: "Shelbyville", state: null, zip: null, country: null });
  });

  test("customFields merge key by key", async () => {
    const c = await make({ customFields: { [cf.text]: "stays", [cf.number]: 1 } });
    const res = await patch(c.contactId, { customFields: { [cf.number]: 2 } });
    expectStatus(res, 200);
    expect(res.json.customFields).toEqual({ [cf.text]: "stays", [cf.number]: 2 });
  });

  test("a customFields key sent as null clears that value and keeps the others", async () => {
    const c = await make({ customFields: { [cf.text]: "stays", [cf.number]: 1 } });
    const res = await patch(c.contactId, { customFields: { [cf.number]: null } });
    expectStatus(res, 200);
    expect(res.json.customFields).toEqual({ [cf.text]: "stays" });
    expect((await get(c.contactId)).json.customFields).toEqual({ [cf.text]: "stays" });
  });

  test("customFields can be patched by exact title and are returned by id", async () => {
    const c = await make();
    const res = await patch(c.contactId, { customFields: { "Patch text": "titled" } });
    expectStatus(res, 200);
    expect(res.json.customFields).toEqual({ [cf.text]: "titled" });
  });

  test("tags replace the whole set", async () => {
    const c = await make({ tags: ["old-a", "old-b"] });
    const res = await patch(c.contactId, { tags: ["new-c"] });
    expectStatus(res, 200);
    expect(res.json.tags.map((t: any) => t.name)).toEqual(["new-c"]);
  });

  test("tags: [] removes every tag", async () => {
    const c = await make({ tags: ["gone"] });
    const res = await patch(c.contactId, { tags: [] });
    expectStatus(res, 200);
    expect(res.json.tags).toEqual([]);
  });

  test("a PATCH that changes a field advances updatedAt", async () => {
    const c = await make();
    await pastClock(c.updatedAt);
    const res = await patch(c.contactId, { lastName: "Later" });
    expectStatus(res, 200);
    expect(Date.parse(res.json.updatedAt)).toBeGreaterThan(Date.parse(c.updatedAt));
    expect(res.json.createdAt).toBe(c.createdAt);
  });

  test.each([
    ["an empty body", {}],
    ["the same firstName", { firstName: "Patchy" }],
    ["the same tag set", { tags: ["same-1", "same-2"] }],
    ["the same tag set in other order and case", { tags: ["SAME-2", "same-1"] }],
    ["null for a field already null", { notes: null }],
    ["the same address part", { address: { city: "Same" } }],
  ])("a no-op PATCH (%s) leaves updatedAt unchanged", async (_name, body) => {
    const c = await make({ tags: ["same-1", "same-2"], address: { city: "Same" } });
    // Past the creation's millisecond, a PATCH that wrote would show another updatedAt.
    await pastClock(c.updatedAt);
    const res = await patch(c.contactId, body);
    expectStatus(res, 200);
    expect(res.json.updatedAt).toBe(c.updatedAt);
    expect((await get(c.contactId)).json.updatedAt).toBe(c.updatedAt);
  });

  test("PATCH accepts every field writable on create", async () => {
    const types = await api("GET", "/contact-types");
    const other = types.json.data.find((t: any) => t.category === "Other");
    const c = await make();
    const body = {
      firstName: "F",
      lastName: "L",
      email: "all@example.com",
      phone: "+14155550177",
      businessName: "All Fields Inc",
      website: "https://all.example.com",
      address: { line1: "a", line2: "b", city: "c", state: "d", zip: "e", country: "f" },
      contactTypeId: other.id,
      tags: ["all-fields"],
      customFields: { [cf.select]: "gold" },
      notes: "all",
      subscribed: true,
      smsSubscribed: true,
      source: "patched",
      identityType: "business",
    };
    const res = await patch(c.contactId, body);
    expectStatus(res, 200);
    const { contactTypeId, tags, ...plain } = body;
    expect(res.json).toMatchObject(plain);
    expect(res.json.contactType).toEqual({ id: other.id, name: other.name, category: "Other" });
    expect(res.json.tags.map((t: any) => t.name)).toEqual(["all-fields"]);
  });

  test("PATCH of an unknown contact is 404 ERR_NOT_FOUND", async () => {
    expectError(await patch("CR-987654321", { firstName: "Ghost" }), "ERR_NOT_FOUND");
  });

  test("PATCH with an unknown body field is 422 naming it", async () => {
    const c = await make();
    expectError(await patch(c.contactId, { shoeSize: 44 }), "ERR_FORM_VALIDATION", "shoeSize");
  });

  test("PATCH enforces the creation bounds (firstName of 256 characters is 422 firstName)", async () => {
    const c = await make();
    expectError(await patch(c.contactId, { firstName: "x".repeat(256) }), "ERR_FORM_VALIDATION", "firstName");
  });

  test("PATCH with an invalid email is 422 email", async () => {
    const c = await make();
    expectError(await patch(c.contactId, { email: "nope" }), "ERR_FORM_VALIDATION", "email");
  });

  test("PATCH with an unknown contactTypeId is 422 contactTypeId", async () => {
    const c = await make();
    expectError(await patch(c.contactId, { contactTypeId: "ct_nope" }), "ERR_FORM_VALIDATION", "contactTypeId");
  });

  test("PATCH of a read-only custom field is 422 customFields.<id>", async () => {
    const c = await make();
    expectError(
      await patch(c.contactId, { customFields: { [cf.image]: "https://example.com/x.png" } }),
      "ERR_FORM_VALIDATION",
      `customFields.${cf.image}`,
    );
  });

  test("PATCH with a select value outside its options is 422 customFields.<id>", async () => {
    const c = await make();
    expectError(await patch(c.contactId, { customFields: { [cf.select]: "bronze" } }), "ERR_FORM_VALIDATION", `customFields.${cf.select}`);
  });

  test("PATCH identityType personal on a contact with a businessName is 422 identityType", async () => {
    const c = await make({ businessName: "Biz Co" });
    expectError(await patch(c.contactId, { identityType: "personal" }), "ERR_FORM_VALIDATION", "identityType");
    expect((await get(c.contactId)).json.identityType).toBe("business");
  });

  test("a failed PATCH changes nothing", async () => {
    const c = await make({ lastName: "Intact" });
    const res = await patch(c.contactId, { lastName: "Changed", email: "bad" });
    expectError(res, "ERR_FORM_VALIDATION", "email");
    expect((await get(c.contactId)).json.lastName).toBe("Intact");
  });
});

describe("relabel via PATCH contactId", () => {
  /** A project of the test's own, so the contact numbers it relabels to are free and its counter is its own. */
  async function ownContact() {
    const p = await srv.newProject();
    const res = await p.api("POST", "/contacts", { body: { firstName: "Relabel", email: "relabel@example.com", tags: ["kept"] } });
    expectStatus(res, 201);
    expect(res.json.contactId).toBe("CR-1");
    return { p, c: res.json };
  }

  test("PATCH contactId relabels the contact: the new id resolves and the old one is 404", async () => {
    const { p, c } = await ownContact();
    const res = await p.api("PATCH", `/contacts/${c.contactId}`, { body: { contactId: "CR-5000" } });
    expectStatus(res, 200);
    expect(res.json.contactId).toBe("CR-5000");
    expectStatus(await p.api("GET", "/contacts/CR-5000"), 200);
    expectError(await p.api("GET", `/contacts/${c.contactId}`), "ERR_NOT_FOUND");
  });

  test("after a relabel to CR-n, newly generated contactIds are greater than n (CR-n+1 next)", async () => {
    const { p, c } = await ownContact();
    expectStatus(await p.api("PATCH", `/contacts/${c.contactId}`, { body: { contactId: "CR-7000" } }), 200);
    const next = await p.api("POST", "/contacts", { body: { firstName: "Next" } });
    expectStatus(next, 201);
    expect(next.json.contactId).toBe("CR-7001");
  });

  test("relabel to a contactId in use is 409 ERR_CONFLICT and changes nothing", async () => {
    const a = await make();
    const b = await make();
    expectError(await patch(b.contactId, { contactId: a.contactId }), "ERR_CONFLICT");
    expect((await get(b.contactId)).json.contactId).toBe(b.contactId);
    expect((await get(a.contactId)).json.contactId).toBe(a.contactId);
  });

  test.each([["ABC-12"], ["CR-"], ["CR-12a"], ["CR 12"], ["12"], ["CR--5"], ["CR-1.5"]])(
    "relabel to a value that is not CR-<digits> (%s) is 422 contactId",
    async (value) => {
      const c = await make();
      expectError(await patch(c.contactId, { contactId: value }), "ERR_FORM_VALIDATION", "contactId");
    },
  );

  test("a relabelled contact keeps all its other data", async () => {
    const { p, c } = await ownContact();
    const res = await p.api("PATCH", `/contacts/${c.contactId}`, { body: { contactId: "CR-8000" } });
    expectStatus(res, 200);
    expect(res.json.contactId).toBe("CR-8000");
    const { contactId, updatedAt, version, ...rest } = res.json;
    const { contactId: _c, updatedAt: _u, version: _v, ...before } = c;
    expect(rest).toEqual(before);
  });
});
