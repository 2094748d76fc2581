/**
 * PUT /contacts?matchOn=… (docs/api.md §18.2): create or update the one contact holding a
 * value, race-safe; contact versions, ETag and If-Match (docs/api.md §18.1).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type Api, type ServerHandle } from "../helpers/server.ts";
import { expectContactShape, expectError, expectStatus } from "../helpers/expect.ts";
import { readEvents } from "../helpers/events.ts";

let srv: ServerHandle;
let api: Api;
let run = 0;
const unique = (name: string) => `${name}-${Date.now()}-${run++}@example.com`;

beforeAll(async () => {
  srv = await startServer();
  api = srv.api;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const put = (body: unknown, query: Record<string, string> = { matchOn: "email" }, headers: Record<string, string> = {}) =>
  api("PUT", "/contacts", { body, query, headers });
const count = async (email: string) => (await api("GET", "/contacts", { query: { email } })).json.data.length;

describe("PUT /contacts: create or update by matchOn", () => {
  test("no contact holds the value: created as by POST, 201 with Location, ETag and Upsert-Result created", async () => {
    const email = unique("new");
    const res = await put({ firstName: "Ada", email });
    expectStatus(res, 201);
    expectContactShape(res.json);
    expect(res.headers.get("upsert-result")).toBe("created");
    expect(res.headers.get("location")).toBe(`/v1/contacts/${res.json.contactId}`);
    expect(res.json.version).toBe(1);
    expect(res.headers.get("etag")).toBe('"1"');
    const events = await readEvents(api, { type: "contact.created" });
    expect(events.find((e) => e.data.contact.contactId === res.json.contactId)?.data.contact.version).toBe(1);
  });

  test("one contact holds it (email case ignored): updated as by PATCH, 200 updated, version + 1", async () => {
    const email = unique("one");
    const first = await put({ firstName: "Ada", email });
    const res = await put({ lastName: "Lovelace", email: email.toUpperCase() });
    expectStatus(res, 200);
    expect(res.headers.get("upsert-result")).toBe("updated");
    expect(res.json.contactId).toBe(first.json.contactId);
    expect(res.json).toMatchObject({ firstName: "Ada", lastName: "Lovelace", version: 2 });
    expect(res.headers.get("etag")).toBe('"2"');
    expect(res.headers.get("location")).toBeNull();
    expect(await count(email)).toBe(1);
  });

  test("a change of nothing is 200 unchanged, keeps updatedAt and version, and fires no contact.updated", async () => {
    const email = unique("same");
    const first = await put({ firstName: "Same", email });
    const res = await put({ firstName: "Same", email });
    expectStatus(res, 200);
    expect(res.headers.get("upsert-result")).toBe("unchanged");
    expect(res.json.updatedAt).toBe(first.json.updatedAt);
    expect(res.json.version).toBe(1);
    const updates = await readEvents(api, { type: "contact.updated" });
    expect(updates.filter((e) => e.data.contact.contactId === first.json.contactId)).toHaveLength(0);
  });

  test("phone matches by its normalised form", async () => {
    const first = await put({ firstName: "Phone", phone: "+1 415 555 0199" }, { matchOn: "phone" });
    expectStatus(first, 201);
    const res = await put({ notes: "called", phone: "(415) 555-0199" }, { matchOn: "phone" });
    expectStatus(res, 200);
    expect(res.json.contactId).toBe(first.json.contactId);
  });

  test("the body must hold the matchOn value: 422 naming that field", async () => {
    expectError(await put({ firstName: "NoEmail" }), "ERR_FORM_VALIDATION", "email");
    expectError(await put({ firstName: "NoPhone", email: unique("x") }, { matchOn: "phone" }), "ERR_FORM_VALIDATION", "phone");
    expectError(await put({ firstName: "Null", email: null }), "ERR_FORM_VALIDATION", "email");
  });

  test("matchOn is required and must be email, phone or a unique custom field", async () => {
    expectError(await put({ email: unique("m") }, {}), "ERR_FORM_VALIDATION", "matchOn");
    expectError(await put({ email: unique("m") }, { matchOn: "firstName" }), "ERR_FORM_VALIDATION", "matchOn");
    expectError(await put({ email: unique("m") }, { matchOn: "customFields.nope" }), "ERR_FORM_VALIDATION", "matchOn");
    const field = await srv.cli(["custom-field", "create", "--project", srv.projectId, "--title", "Plain text", "--type", "text", "--json"]);
    const res = await put({ email: unique("m"), customFields: { [field.id]: "x" } }, { matchOn: `customFields.${field.id}` });
    expectError(res, "ERR_FORM_VALIDATION", "matchOn");
  });

  test("several contacts hold it: 409 ERR_AMBIGUOUS_MATCH with fieldName matchOn and their contactIds; nothing written", async () => {
    const email = unique("twice");
    const a = await api("POST", "/contacts", { body: { firstName: "A", email } });
    const b = await api("POST", "/contacts", { body: { firstName: "B", email } });
    const res = await put({ lastName: "Changed", email });
    expectError(res, "ERR_AMBIGUOUS_MATCH", "matchOn");
    expect(res.json.matches.sort()).toEqual([a.json.contactId, b.json.contactId].sort());
    for (const c of [a, b]) expect((await api("GET", `/contacts/${c.json.contactId}`)).json.lastName).toBeNull();
  });

  test("update=fill writes only the fields empty on the stored contact", async () => {
    const email = unique("fill");
    await put({ firstName: "Kept", email, address: { city: "London" }, tags: ["a"] });
    const res = await put(
      { firstName: "Other", lastName: "Filled", email, address: { city: "Paris", zip: "75001" }, tags: ["b"] },
      { matchOn: "email", update: "fill" },
    );
    expectStatus(res, 200);
    expect(res.json).toMatchObject({ firstName: "Kept", lastName: "Filled" });
    expect(res.json.address).toMatchObject({ city: "London", zip: "75001" });
    expect(res.json.tags.map((t: any) => t.name)).toEqual(["a"]);
  });

  test("tags=add joins the body's tags to the stored ones; the default replaces them", async () => {
    const email = unique("tags");
    await put({ email, tags: ["one"] });
    const added = await put({ email, tags: ["two"] }, { matchOn: "email", tags: "add" });
    expect(added.json.tags.map((t: any) => t.name).sort()).toEqual(["one", "two"]);
    const replaced = await put({ email, tags: ["three"] });
    expect(replaced.json.tags.map((t: any) => t.name)).toEqual(["three"]);
  });

  test("100 concurrent PUTs of one new email make exactly one contact: one 201, the rest 200", async () => {
    const email = unique("race");
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => put({ firstName: `Racer${i % 3}`, email })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(99);
    expect(new Set(answers.map((r) => r.json.contactId)).size).toBe(1);
    expect(await count(email)).toBe(1);
  });

  test("an Idempotency-Key replays the first answer", async () => {
    const email = unique("idem");
    const headers = { "Idempotency-Key": `upsert-${email}` };
    const key = await srv.newKey(["contacts:read", "contacts:write"]);
    const send = (matchOn: string) => api("PUT", "/contacts", { key, body: { firstName: "Idem", email }, query: { matchOn }, headers });
    const first = await send("email");
    const again = await send("email");
    expectStatus(again, 201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("upsert-result")).toBe("created");
    expect(again.json.contactId).toBe(first.json.contactId);
    // The query is part of the request: another matchOn with the same key is another request.
    expectError(await send("phone"), "ERR_IDEMPOTENCY_KEY_REUSED", "Idempotency-Key");
  });

  test("only an upsert that creates takes a token of the creates-per-hour bucket", async () => {
    const project = await srv.newProject({ contactCreatesPerHour: 1 });
    const send = (body: unknown) => project.api("PUT", "/contacts", { query: { matchOn: "email" }, body });
    const email = unique("creates");
    expectStatus(await send({ email }), 201);
    for (let i = 0; i < 3; i++) expectStatus(await send({ email, notes: `update ${i}` }), 200);
    const refused = await send({ email: unique("creates2") });
    expectError(refused, "ERR_RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await project.api("GET", "/contacts")).json.data).toHaveLength(1);
  });

  test("PATCH and PUT take application/merge-patch+json", async () => {
    const email = unique("merge-patch");
    const headers = { "Content-Type": "application/merge-patch+json" };
    const created = await api("PUT", "/contacts", { query: { matchOn: "email" }, rawBody: JSON.stringify({ email }), headers });
    expectStatus(created, 201);
    const patched = await api("PATCH", `/contacts/${created.json.contactId}`, { rawBody: JSON.stringify({ lastName: "MP" }), headers });
    expectStatus(patched, 200);
    expect(patched.json.lastName).toBe("MP");
    const post = await api("POST", "/contacts", { rawBody: JSON.stringify({ email: unique("mp") }), headers });
    expectError(post, "ERR_UNSUPPORTED_MEDIA_TYPE");
  });

  test("an upsert never matches a contact of another project: the same email creates one in the key's own", async () => {
    const email = unique("tenant");
    const a = await put({ email, firstName: "Mine" });
    const other = await srv.newProject();
    const b = await other.api("PUT", "/contacts", { query: { matchOn: "email" }, body: { email, lastName: "Theirs" } });
    expectStatus(b, 201);
    expect((await api("GET", `/contacts/${a.json.contactId}`)).json.lastName).toBeNull();
  });

  test("a create past the contact quota is 402; an update is not", async () => {
    const project = await srv.newProject({ contactQuota: 1 });
    const email = unique("quota");
    expectStatus(await project.api("PUT", "/contacts", { query: { matchOn: "email" }, body: { email } }), 201);
    expectStatus(await project.api("PUT", "/contacts", { query: { matchOn: "email" }, body: { email, firstName: "Q" } }), 200);
    const over = await project.api("PUT", "/contacts", { query: { matchOn: "email" }, body: { email: unique("quota2") } });
    expectError(over, "ERR_QUOTA_EXCEEDED");
  });
});

describe("versions, ETag and If-Match", () => {
  test("GET one answers ETag of its version; every change adds one", async () => {
    const created = await api("POST", "/contacts", { body: { firstName: "V" } });
    expect(created.json.version).toBe(1);
    expect(created.headers.get("etag")).toBe('"1"');
    const id = created.json.contactId;
    expect((await api("GET", `/contacts/${id}`)).headers.get("etag")).toBe('"1"');
    const patched = await api("PATCH", `/contacts/${id}`, { body: { lastName: "Two" } });
    expect(patched.json.version).toBe(2);
    expect(patched.headers.get("etag")).toBe('"2"');
    const same = await api("PATCH", `/contacts/${id}`, { body: { lastName: "Two" } });
    expect(same.json.version).toBe(2);
    expect((await api("GET", `/contacts/${id}`)).headers.get("etag")).toBe('"2"');
  });

  test("PATCH with a stale If-Match is 412 ERR_PRECONDITION_FAILED and writes nothing; the current one passes", async () => {
    const id = (await api("POST", "/contacts", { body: { firstName: "Cond" } })).json.contactId;
    await api("PATCH", `/contacts/${id}`, { body: { lastName: "B" } });
    const stale = await api("PATCH", `/contacts/${id}`, { body: { lastName: "C" }, headers: { "If-Match": '"1"' } });
    expectError(stale, "ERR_PRECONDITION_FAILED");
    expect((await api("GET", `/contacts/${id}`)).json.lastName).toBe("B");
    const weak = await api("PATCH", `/contacts/${id}`, { body: { lastName: "C" }, headers: { "If-Match": 'W/"2"' } });
    expectError(weak, "ERR_PRECONDITION_FAILED");
    const fresh = await api("PATCH", `/contacts/${id}`, { body: { lastName: "C" }, headers: { "If-Match": '"5", "2"' } });
    expectStatus(fresh, 200);
    expect(fresh.json.version).toBe(3);
    expectStatus(await api("PATCH", `/contacts/${id}`, { body: { lastName: "D" }, headers: { "If-Match": "*" } }), 200);
  });

  test("concurrent PATCHes with the same If-Match: exactly one passes", async () => {
    const id = (await api("POST", "/contacts", { body: { firstName: "Race" } })).json.contactId;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api("PATCH", `/contacts/${id}`, { body: { notes: `n${i}` }, headers: { "If-Match": '"1"' } })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 412)).toHaveLength(9);
    expect((await api("GET", `/contacts/${id}`)).json.version).toBe(2);
  });

  test("PUT honours If-Match on the matched contact; one that would create is 412", async () => {
    const email = unique("ifmatch");
    expectError(await put({ email }, { matchOn: "email" }, { "If-Match": '"1"' }), "ERR_PRECONDITION_FAILED");
    expect(await count(email)).toBe(0);
    await put({ email });
    expectError(await put({ email, firstName: "X" }, { matchOn: "email" }, { "If-Match": '"7"' }), "ERR_PRECONDITION_FAILED");
    expectStatus(await put({ email, firstName: "X" }, { matchOn: "email" }, { "If-Match": '"1"' }), 200);
  });

  test("contact.updated carries the contact's version", async () => {
    const id = (await api("POST", "/contacts", { body: { firstName: "Evt" } })).json.contactId;
    await api("PATCH", `/contacts/${id}`, { body: { lastName: "Evt" } });
    const updates = (await readEvents(api, { type: "contact.updated" })).filter((e) => e.data.contact.contactId === id);
    expect(updates.map((e) => e.data.contact.version)).toEqual([2]);
  });
});
