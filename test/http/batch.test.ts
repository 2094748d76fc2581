/**
 * Batch writes (docs/api.md §18.4): POST /contacts/batch and POST /interactions/batch apply
 * their items in order, each exactly as its single call would, in one transaction.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type Api, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { readEvents } from "../helpers/events.ts";

let srv: ServerHandle;
let api: Api;
let run = 0;
const email = (name: string) => `${name}-${Date.now()}-${run++}@example.com`;

beforeAll(async () => {
  srv = await startServer();
  api = srv.api;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const batch = (body: unknown, opts: { headers?: Record<string, string>; key?: string } = {}) =>
  api("POST", "/contacts/batch", { body, ...opts });
const logs = (body: unknown) => api("POST", "/interactions/batch", { body });
const byEmail = async (address: string) => (await api("GET", "/contacts", { query: { email: address } })).json.data;

describe("POST /contacts/batch", () => {
  test("create: every item created in order, one contact.created each, and the summary counts them", async () => {
    const emails = [email("b1"), email("b2"), email("b3")];
    const res = await batch({ operation: "create", items: emails.map((e, i) => ({ firstName: `B${i}`, email: e })) });
    expectStatus(res, 200);
    expect(res.json.summary).toEqual({ created: 3, updated: 0, unchanged: 0, failed: 0 });
    expect(res.json.results.map((r: any) => [r.index, r.status, r.result])).toEqual([
      [0, 201, "created"],
      [1, 201, "created"],
      [2, 201, "created"],
    ]);
    const numbers = res.json.results.map((r: any) => Number(r.contactId.slice(3)));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    for (const [i, e] of emails.entries()) expect((await byEmail(e))[0].contactId).toBe(res.json.results[i].contactId);
    const created = await readEvents(api, { type: "contact.created" });
    for (const r of res.json.results) expect(created.filter((e) => e.data.contact.contactId === r.contactId)).toHaveLength(1);
  });

  test("a failing item answers what its single call answers (status, code, message, fieldName without an item prefix); the others are written", async () => {
    const single = await api("POST", "/contacts", { body: { email: "ada.@example" } });
    const good = email("good");
    const res = await batch({ operation: "create", items: [{ email: "ada.@example" }, { email: good }, { firstName: 5 }, "text", { nope: 1 }] });
    expectStatus(res, 200);
    const [bad, ok, typed, notObject, unknown] = res.json.results;
    expect(bad).toEqual({
      index: 0,
      status: single.status,
      result: "error",
      error: { code: single.json.code, message: single.json.message, fieldName: single.json.fieldName },
    });
    expect(ok).toMatchObject({ index: 1, status: 201, result: "created" });
    expect(typed.error).toMatchObject({ code: "ERR_FORM_VALIDATION", fieldName: "firstName" });
    expect(notObject.error).toMatchObject({ code: "ERR_FORM_VALIDATION", fieldName: "body" });
    expect(unknown.error).toMatchObject({ code: "ERR_FORM_VALIDATION", fieldName: "nope" });
    expect(res.json.summary).toEqual({ created: 1, updated: 0, unchanged: 0, failed: 4 });
    expect(await byEmail(good)).toHaveLength(1);
  });

  test("1 to 1,000 items, else 422 items", async () => {
    expectError(await batch({ operation: "create", items: [] }), "ERR_FORM_VALIDATION", "items");
    const many = Array.from({ length: 1001 }, () => ({ firstName: "x" }));
    expectError(await batch({ operation: "create", items: many }), "ERR_FORM_VALIDATION", "items");
    expectError(await batch({ operation: "create" }), "ERR_FORM_VALIDATION", "items");
    expectError(await batch({ operation: "merge", items: [{}] }), "ERR_FORM_VALIDATION", "operation");
  });

  test("a 1,000-item batch over 1 MiB is taken (the route's limit is 5 MiB) and creates them all", async () => {
    const notes = "n".repeat(1500);
    const items = Array.from({ length: 1000 }, (_, i) => ({ firstName: `Bulk${i}`, notes }));
    const res = await batch({ operation: "create", items });
    expectStatus(res, 200);
    expect(res.json.summary.created).toBe(1000);
  });

  test("upsert: matchOn is required; an item may update a contact an earlier item of the batch created", async () => {
    expectError(await batch({ operation: "upsert", items: [{ email: email("m") }] }), "ERR_FORM_VALIDATION", "matchOn");
    expectError(await batch({ operation: "create", matchOn: "email", items: [{ email: email("m") }] }), "ERR_FORM_VALIDATION", "matchOn");
    const e = email("chain");
    const res = await batch({
      operation: "upsert",
      matchOn: "email",
      items: [{ email: e, firstName: "First" }, { email: e, lastName: "Second" }, { email: e, lastName: "Second" }, { firstName: "NoEmail" }],
    });
    expectStatus(res, 200);
    expect(res.json.results.map((r: any) => r.result)).toEqual(["created", "updated", "unchanged", "error"]);
    expect(res.json.results.map((r: any) => r.status)).toEqual([201, 200, 200, 422]);
    expect(res.json.results[3].error.fieldName).toBe("email");
    const [contact] = await byEmail(e);
    expect(contact).toMatchObject({ firstName: "First", lastName: "Second", version: 2 });
  });

  test("update: items carry their contactId; missing is 422 contactId, unknown is 404", async () => {
    const created = (await api("POST", "/contacts", { body: { firstName: "Upd" } })).json;
    const res = await batch({
      operation: "update",
      items: [{ contactId: created.contactId, lastName: "Done" }, { lastName: "x" }, { contactId: "CR-999999999", lastName: "x" }, { contactId: created.contactId, bad: 1 }],
    });
    expectStatus(res, 200);
    expect(res.json.results.map((r: any) => [r.status, r.result])).toEqual([
      [200, "updated"],
      [422, "error"],
      [404, "error"],
      [422, "error"],
    ]);
    expect(res.json.results[1].error.fieldName).toBe("contactId");
    expect(res.json.results[3].error.fieldName).toBe("bad");
    expect((await api("GET", `/contacts/${created.contactId}`)).json.lastName).toBe("Done");
  });

  test("atomic: one failing item rejects the batch with 422 ERR_BATCH_REJECTED, the results say skipped, nothing is written and no event fires", async () => {
    const a = email("atomic-a");
    const before = (await readEvents(api)).length;
    const res = await batch({ operation: "create", atomic: true, items: [{ email: a }, { email: "not-an-email" }] });
    expectError(res, "ERR_BATCH_REJECTED");
    expect(res.json.results.map((r: any) => r.result)).toEqual(["skipped", "error"]);
    expect(res.json.results[0].contactId).toBeUndefined();
    expect(res.json.results[1].error.fieldName).toBe("email");
    expect(await byEmail(a)).toHaveLength(0);
    expect((await readEvents(api)).length).toBe(before);
    expectStatus(await batch({ operation: "create", atomic: true, items: [{ email: a }] }), 200);
  });

  test("quota: each created item counts; past it the item is 402, and an atomic batch is 422", async () => {
    const project = await srv.newProject({ contactQuota: 2 });
    const res = await project.api("POST", "/contacts/batch", { body: { operation: "create", items: [{ firstName: "1" }, { firstName: "2" }, { firstName: "3" }] } });
    expectStatus(res, 200);
    expect(res.json.results.map((r: any) => r.status)).toEqual([201, 201, 402]);
    expect(res.json.results[2].error.code).toBe("ERR_QUOTA_EXCEEDED");
    const other = await srv.newProject({ contactQuota: 1 });
    const atomic = await other.api("POST", "/contacts/batch", { body: { operation: "create", atomic: true, items: [{ firstName: "1" }, { firstName: "2" }] } });
    expectError(atomic, "ERR_BATCH_REJECTED");
    expect((await other.api("GET", "/contacts")).json.data).toHaveLength(0);
  });

  test("an Idempotency-Key replays the batch's answer without writing again", async () => {
    const key = await srv.newKey(["contacts:read", "contacts:write"]);
    const e = email("idem-batch");
    const body = { operation: "create", items: [{ email: e }] };
    const headers = { "Idempotency-Key": `batch-${e}` };
    const first = await batch(body, { key, headers });
    const again = await batch(body, { key, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await byEmail(e)).toHaveLength(1);
  });

  test("the key's scope is contacts:write", async () => {
    const key = await srv.newKey(["contacts:read"]);
    expectError(await batch({ operation: "create", items: [{ firstName: "x" }] }, { key }), "ERR_FORBIDDEN");
  });
});

describe("POST /interactions/batch", () => {
  test("creates logs on their contacts; sent again, uniqueIdentifier replays them and writes nothing", async () => {
    const contact = (await api("POST", "/contacts", { body: { firstName: "Logs" } })).json;
    const items = [
      { contactId: contact.contactId, type: "note", note: "one", uniqueIdentifier: `u1-${run}` },
      { contactId: contact.contactId, type: "note", note: "two", date: "2024-03-01T10:00:00Z", uniqueIdentifier: `u2-${run}` },
    ];
    const first = await logs({ items });
    expectStatus(first, 200);
    expect(first.json.results.map((r: any) => [r.status, r.result])).toEqual([
      [201, "created"],
      [201, "created"],
    ]);
    expect(first.json.summary).toEqual({ created: 2, replayed: 0, failed: 0 });
    const again = await logs({ items });
    expect(again.json.results.map((r: any) => r.result)).toEqual(["replayed", "replayed"]);
    expect(again.json.results.map((r: any) => r.id)).toEqual(first.json.results.map((r: any) => r.id));
    const list = await api("GET", `/contacts/${contact.contactId}/interactions`);
    expect(list.json.data).toHaveLength(2);
  });

  test("a failing item answers its single call's error: unknown contact 404, no type 422, missing contactId 422", async () => {
    const contact = (await api("POST", "/contacts", { body: { firstName: "LogErr" } })).json;
    const res = await logs({
      items: [{ contactId: "CR-999999999", type: "note" }, { contactId: contact.contactId, note: "no type" }, { type: "note" }],
    });
    expect(res.json.results.map((r: any) => r.status)).toEqual([404, 422, 422]);
    expect(res.json.results[1].error.fieldName).toBe("interactionTypeId");
    expect(res.json.results[2].error.fieldName).toBe("contactId");
    const atomic = await logs({ atomic: true, items: [{ contactId: contact.contactId, type: "note" }, { contactId: "CR-999999999", type: "note" }] });
    expectError(atomic, "ERR_BATCH_REJECTED");
    expect((await api("GET", `/contacts/${contact.contactId}/interactions`)).json.data).toHaveLength(0);
  });
});
