import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, walk, type Api, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";

let srv: ServerHandle;
let api: Api;
let it: Record<string, any> = {}; // interaction types by name
let contactId: string;

async function newContact() {
  const res = await api("POST", "/contacts", { body: { firstName: "Timeline" } });
  expectStatus(res, 201);
  return res.json.contactId as string;
}
const log = (cid: string, body: unknown) => api("POST", `/contacts/${cid}/interactions`, { body });
const logs = (cid: string, query: Record<string, any> = {}) => api("GET", `/contacts/${cid}/interactions`, { query });

beforeAll(async () => {
  srv = await startServer();
  api = srv.api;
  const types = await api("GET", "/interaction-types");
  for (const t of types.json.data) it[t.name] = t;
  contactId = await newContact();
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

/** docs/api.md §12.1, plus uniqueIdentifier (docs/decisions.md: the log carries the key it was written with, or null). */
const LOG_KEYS = ["contactId", "createdAt", "date", "fields", "id", "interactionType", "note", "uniqueIdentifier"];

describe("POST /contacts/{contactId}/interactions", () => {
  test("a log of a configured interaction type is created with 201 and the log", async () => {
    const res = await log(contactId, { interactionTypeId: it.Call.id, note: "called", fields: { outcome: "answered" } });
    expectStatus(res, 201);
    expect(Object.keys(res.json).sort()).toEqual(LOG_KEYS);
    expect(res.json.uniqueIdentifier).toBeNull();
    expect(res.json.id).toMatch(/^il_/);
    expect(res.json.contactId).toBe(contactId);
    expect(res.json.interactionType).toEqual({ id: it.Call.id, name: "Call" });
    expect(res.json.note).toBe("called");
    expect(res.json.fields).toEqual({ outcome: "answered" });
    expect(res.json.date).toMatch(ISO_RE);
    expect(res.json.createdAt).toMatch(ISO_RE);
  });

  test('a generic note (type "note") has interactionType { id: "note", name: "Note" }', async () => {
    const res = await log(contactId, { type: "note", note: "just a note" });
    expectStatus(res, 201);
    expect(res.json.interactionType).toEqual({ id: "note", name: "Note" });
    expect(res.json.note).toBe("just a note");
  });

  test("note defaults to an empty string and fields to an empty object", async () => {
    const res = await log(contactId, { interactionTypeId: it.Meeting.id });
    expectStatus(res, 201);
    expect(res.json.note).toBe("");
    expect(res.json.fields).toEqual({});
  });

  test("date defaults to the current time", async () => {
    const before = Date.now();
    const res = await log(contactId, { type: "note", note: "now" });
    const after = Date.now();
    expectStatus(res, 201);
    expect(res.json.date).toBe(res.json.createdAt);
    // The server runs on this machine's clock: the stamp falls within the request.
    const d = Date.parse(res.json.date);
    expect(d).toBeGreaterThanOrEqual(before);
    expect(d).toBeLessThanOrEqual(after);
  });

  test("a given date is stored as that instant", async () => {
    const res = await log(contactId, { type: "note", date: "2021-03-04T05:06:07.000Z" });
    expectStatus(res, 201);
    expect(Date.parse(res.json.date)).toBe(Date.parse("2021-03-04T05:06:07.000Z"));
  });

  test("a date with an offset is accepted as that instant", async () => {
    const res = await log(contactId, { type: "note", date: "2021-03-04T07:06:07+02:00" });
    expectStatus(res, 201);
    expect(Date.parse(res.json.date)).toBe(Date.parse("2021-03-04T05:06:07Z"));
  });

  test.each([["yesterday"], ["2021-02-30T00:00:00Z"], [12345]])("a non-ISO date (%p) is 422 date", async (date) => {
    expectError(await log(contactId, { type: "note", date }), "ERR_FORM_VALIDATION", "date");
  });

  test("interactionTypeId and type together are 422 interactionTypeId", async () => {
    const res = await log(contactId, { interactionTypeId: it.Call.id, type: "note", note: "both" });
    expectError(res, "ERR_FORM_VALIDATION", "interactionTypeId");
  });

  test("neither interactionTypeId nor type is 422 interactionTypeId", async () => {
    const res = await log(contactId, { note: "neither" });
    expectError(res, "ERR_FORM_VALIDATION", "interactionTypeId");
  });

  test('a type other than "note" is 422 type', async () => {
    expectError(await log(contactId, { type: "call", note: "x" }), "ERR_FORM_VALIDATION", "type");
  });

  test("an unknown interactionTypeId is 422 interactionTypeId", async () => {
    expectError(await log(contactId, { interactionTypeId: "it_unknown" }), "ERR_FORM_VALIDATION", "interactionTypeId");
  });

  test("an interaction type created with the CLI is usable", async () => {
    const created = await srv.cli(["interaction-type", "create", "--project", srv.projectId, "--name", "Site Visit", "--json"]);
    expect(created.id).toMatch(/^it_/);
    // The server reads interaction types from the database on each request: usable at once.
    const res = await log(contactId, { interactionTypeId: created.id });
    expectStatus(res, 201);
    expect(res.json.interactionType).toEqual({ id: created.id, name: "Site Visit" });
  });

  test("an unknown body field is 422 naming it", async () => {
    expectError(await log(contactId, { type: "note", mood: "happy" }), "ERR_FORM_VALIDATION", "mood");
  });

  test("a note of exactly 65,535 characters is accepted", async () => {
    const res = await log(contactId, { type: "note", note: "n".repeat(65_535) });
    expectStatus(res, 201);
    expect(res.json.note.length).toBe(65_535);
  });

  test("a note of 65,536 characters is 422 note", async () => {
    expectError(await log(contactId, { type: "note", note: "n".repeat(65_536) }), "ERR_FORM_VALIDATION", "note");
  });

  test("a non-string note is 422 note", async () => {
    expectError(await log(contactId, { type: "note", note: 5 }), "ERR_FORM_VALIDATION", "note");
  });

  test("fields with exactly 50 keys are accepted", async () => {
    const fields = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, `v${i}`]));
    const res = await log(contactId, { type: "note", fields });
    expectStatus(res, 201);
    expect(res.json.fields).toEqual(fields);
  });

  test("fields with 51 keys are 422 fields", async () => {
    const fields = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, `v${i}`]));
    expectError(await log(contactId, { type: "note", fields }), "ERR_FORM_VALIDATION", "fields");
  });

  test("a fields key of exactly 64 characters is accepted", async () => {
    expectStatus(await log(contactId, { type: "note", fields: { ["k".repeat(64)]: "v" } }), 201);
  });

  test("a fields key of 65 characters is 422 fields.<key>", async () => {
    const key = "k".repeat(65);
    expectError(await log(contactId, { type: "note", fields: { [key]: "v" } }), "ERR_FORM_VALIDATION", `fields.${key}`);
  });

  test("an empty fields key is 422 fields.<key> (fields.)", async () => {
    expectError(await log(contactId, { type: "note", fields: { "": "v" } }), "ERR_FORM_VALIDATION", "fields.");
  });

  test("a fields value of exactly 2,000 characters is accepted", async () => {
    expectStatus(await log(contactId, { type: "note", fields: { long: "v".repeat(2000) } }), 201);
  });

  test("a fields value of 2,001 characters is 422 fields.<key>", async () => {
    expectError(await log(contactId, { type: "note", fields: { long: "v".repeat(2001) } }), "ERR_FORM_VALIDATION", "fields.long");
  });

  test.each([
    ["a number", 5],
    ["a boolean", true],
    ["null", null],
    ["an object", { a: "b" }],
    ["an array", ["a"]],
  ])("a fields value that is %s is 422 fields.<key>", async (_name, value) => {
    expectError(await log(contactId, { type: "note", fields: { bad: value, good: "ok" } }), "ERR_FORM_VALIDATION", "fields.bad");
  });

  test("fields that are not an object are 422 fields", async () => {
    expectError(await log(contactId, { type: "note", fields: ["a"] }), "ERR_FORM_VALIDATION", "fields");
  });

  test("POST to an unknown contact is 404 ERR_NOT_FOUND", async () => {
    expectError(await log("CR-99999999", { type: "note", note: "x" }), "ERR_NOT_FOUND");
  });

  test("a uniqueIdentifier of exactly 255 characters is accepted", async () => {
    expectStatus(await log(contactId, { type: "note", uniqueIdentifier: "u".repeat(255) }), 201);
  });

  test("a uniqueIdentifier of 256 characters is 422 uniqueIdentifier", async () => {
    expectError(await log(contactId, { type: "note", uniqueIdentifier: "u".repeat(256) }), "ERR_FORM_VALIDATION", "uniqueIdentifier");
  });
});

describe("uniqueIdentifier replay", () => {
  test("the first call with a uniqueIdentifier is 201; a later call is 200 with the same log and creates nothing", async () => {
    const cid = await newContact();
    const first = await log(cid, { interactionTypeId: it.Email.id, note: "first", uniqueIdentifier: "msg-1" });
    expectStatus(first, 201);
    const again = await log(cid, { interactionTypeId: it.Email.id, note: "first", uniqueIdentifier: "msg-1" });
    expectStatus(again, 200);
    expect(again.json).toEqual(first.json);
    expect(first.json.uniqueIdentifier).toBe("msg-1");
    const l = await logs(cid);
    expect(l.json.data).toEqual([first.json]);
  });

  test("a replay with a different body still returns the stored log with 200", async () => {
    const cid = await newContact();
    const first = await log(cid, { interactionTypeId: it.Email.id, note: "original", uniqueIdentifier: "msg-2" });
    const again = await log(cid, { type: "note", note: "different", fields: { x: "y" }, uniqueIdentifier: "msg-2" });
    expectStatus(again, 200);
    expect(again.json).toEqual(first.json);
    expect((await logs(cid)).json.data).toHaveLength(1);
  });

  test("the same uniqueIdentifier on another contact creates a new log (unique per contact)", async () => {
    const a = await newContact();
    const b = await newContact();
    const first = await log(a, { type: "note", uniqueIdentifier: "shared-id" });
    const second = await log(b, { type: "note", uniqueIdentifier: "shared-id" });
    expectStatus(first, 201);
    expectStatus(second, 201);
    expect(second.json.id).not.toBe(first.json.id);
    expect(second.json.contactId).toBe(b);
  });

  test("20 concurrent first calls with one uniqueIdentifier give exactly one 201 and 200s with the same log", async () => {
    const cid = await newContact();
    const key = await srv.newKey(["interactions:write", "contacts:read"]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api("POST", `/contacts/${cid}/interactions`, { key, body: { type: "note", note: `race ${i}`, uniqueIdentifier: "race" } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(19).fill(200), 201]);
    expect(new Set(results.map((r) => r.json.id)).size).toBe(1);
    expect((await api("GET", `/contacts/${cid}/interactions`, { key })).json.data).toHaveLength(1);
  });
});

describe("GET /contacts/{contactId}/interactions", () => {
  let cid: string;
  const byDate: Record<string, any> = {};
  const d1 = "2022-01-01T10:00:00.000Z";
  const d2 = "2022-01-02T10:00:00.000Z";
  const d3 = "2022-01-03T10:00:00.000Z";

  beforeAll(async () => {
    cid = await newContact();
    // created out of date order on purpose
    byDate.d2 = (await log(cid, { interactionTypeId: it.Call.id, date: d2, note: "two" })).json;
    byDate.d3 = (await log(cid, { type: "note", date: d3, note: "three" })).json;
    byDate.d1 = (await log(cid, { interactionTypeId: it.Call.id, date: d1, note: "one" })).json;
  }, 60_000);

  const lids = (res: any) => res.json.data.map((l: any) => l.id);

  test("the list answers { data, pagination } with logs newest first by date", async () => {
    const res = await logs(cid);
    expectStatus(res, 200);
    expect(Object.keys(res.json).sort()).toEqual(["data", "pagination"]);
    expect(lids(res)).toEqual([byDate.d3.id, byDate.d2.id, byDate.d1.id]);
    expect(res.json.pagination).toEqual({ nextCursor: null, hasMore: false });
    expect(res.json.data[0]).toEqual(byDate.d3);
  });

  test("since is inclusive", async () => {
    expect(lids(await logs(cid, { since: d2 }))).toEqual([byDate.d3.id, byDate.d2.id]);
  });

  test("until is inclusive", async () => {
    expect(lids(await logs(cid, { until: d2 }))).toEqual([byDate.d2.id, byDate.d1.id]);
  });

  test("since and until equal to one log's date select exactly that log", async () => {
    expect(lids(await logs(cid, { since: d2, until: d2 }))).toEqual([byDate.d2.id]);
  });

  test("interactionTypeId filters logs of that type", async () => {
    expect(lids(await logs(cid, { interactionTypeId: it.Call.id }))).toEqual([byDate.d2.id, byDate.d1.id]);
  });

  test("interactionTypeId combines with since (AND)", async () => {
    expect(lids(await logs(cid, { interactionTypeId: it.Call.id, since: d2 }))).toEqual([byDate.d2.id]);
  });

  test.each([["since"], ["until"]])("a non-ISO %s is 422 naming it", async (param) => {
    expectError(await logs(cid, { [param]: "last tuesday" }), "ERR_FORM_VALIDATION", param);
  });

  test("walking pages of one log each yields every log once, the last page with hasMore false and nextCursor null", async () => {
    const { items, pages } = await walk(api, `/contacts/${cid}/interactions`, { limit: 1 });
    expect(items.map((l) => l.id)).toEqual([byDate.d3.id, byDate.d2.id, byDate.d1.id]);
    expect(pages).toHaveLength(3);
    expect(pages[2].pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  test.each([["0"], ["201"], ["x"]])("limit=%s is 422 limit", async (limit) => {
    expectError(await logs(cid, { limit }), "ERR_FORM_VALIDATION", "limit");
  });

  test("a garbage cursor is 422 cursor", async () => {
    expectError(await logs(cid, { cursor: "garbage" }), "ERR_FORM_VALIDATION", "cursor");
  });

  test("a cursor reused with other filters is 422 cursor", async () => {
    const first = await logs(cid, { limit: 1 });
    expectError(await logs(cid, { limit: 1, since: d1, cursor: first.json.pagination.nextCursor }), "ERR_FORM_VALIDATION", "cursor");
  });

  test("GET of an unknown contact's logs is 404 ERR_NOT_FOUND", async () => {
    expectError(await logs("CR-99999999"), "ERR_NOT_FOUND");
  });

  test("a contact without logs has an empty list", async () => {
    const other = await newContact();
    expect((await logs(other)).json).toEqual({ data: [], pagination: { nextCursor: null, hasMore: false } });
  });

  test("logs follow a relabelled contact", async () => {
    const c = await newContact();
    const l = await log(c, { type: "note", note: "before relabel" });
    expectStatus(l, 201);
    expectStatus(await api("PATCH", `/contacts/${c}`, { body: { contactId: "CR-90000" } }), 200);
    expectError(await logs(c), "ERR_NOT_FOUND");
    const res = await logs("CR-90000");
    expect(res.json.data.map((x: any) => x.id)).toEqual([l.json.id]);
    expect(res.json.data[0].contactId).toBe("CR-90000");
  });
});
