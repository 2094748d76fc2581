/**
 * The change log (docs/api.md §19.1–§19.2), black box: one record per change from every
 * surface, in seq order without gaps, what each record says, a contact's history across
 * relabels, the feed's cursors (resume, empty pages, the object filter, Changes-Cursor on
 * lists), and `previous` on contact.updated.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readEvents } from "../helpers/events.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

/** Every change of the project, following nextCursor to the end. */
async function feed(p: ProjectInfo, query: Record<string, any> = {}) {
  const records: any[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await p.api("GET", "/changes", { query: { ...query, ...(after ? { after } : {}) } });
    expectStatus(res, 200);
    records.push(...res.json.data);
    expect(typeof res.json.pagination.nextCursor).toBe("string");
    after = res.json.pagination.nextCursor;
    if (!res.json.pagination.hasMore) return { records, cursor: after! };
  }
}

const seqs = (records: any[]) => records.map((r) => r.seq);
const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("one change record per change, in seq order without gaps", () => {
  test("create, PATCH, interaction log, relabel, delete and restore each append one record; seq runs 1..n", async () => {
    const p = await srv.newProject();
    const created = await p.api("POST", "/contacts", { body: { firstName: "Ada", email: "ada@example.com", tags: ["vip"] } });
    expectStatus(created, 201);
    const id = created.json.contactId;
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { email: "ada@new.example.com" } }), 200);
    expectStatus(await p.api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: "Called" } }), 201);
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { contactId: "CR-900" } }), 200);
    expectStatus(await p.api("DELETE", "/contacts/CR-900"), 204);
    expectStatus(await p.api("POST", "/contacts/CR-900/restore"), 200);
    const { records } = await feed(p);
    expect(seqs(records)).toEqual(oneToN(6));
    expect(records.map((r) => `${r.object} ${r.action}`)).toEqual([
      "contact created",
      "contact updated",
      "interaction_log created",
      "contact updated",
      "contact deleted",
      "contact restored",
    ]);
    expect(records.map((r) => r.id)).toEqual([id, id, expect.stringMatching(/^il_/), "CR-900", "CR-900", "CR-900"]);
  });

  test("a refused write leaves no gap: a 422, a 404 and a 412 between two changes, and the next change takes n + 1", async () => {
    const p = await srv.newProject();
    const id = (await p.api("POST", "/contacts", { body: { firstName: "A" } })).json.contactId;
    expectError(await p.api("PATCH", `/contacts/${id}`, { body: { email: "not an email" } }), "ERR_FORM_VALIDATION");
    expectError(await p.api("PATCH", "/contacts/CR-404", { body: { firstName: "B" } }), "ERR_NOT_FOUND");
    expectError(await p.api("PATCH", `/contacts/${id}`, { body: { firstName: "B" }, headers: { "If-Match": '"7"' } }), "ERR_PRECONDITION_FAILED");
    expectError(await p.api("DELETE", `/contacts/${id}`, { headers: { "If-Match": '"7"' } }), "ERR_PRECONDITION_FAILED");
    const batch = await p.api("POST", "/contacts/batch", { body: { operation: "create", atomic: true, items: [{ firstName: "C" }, { email: "bad" }] } });
    expectError(batch, "ERR_BATCH_REJECTED");
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { firstName: "B" } }), 200);
    expect(seqs((await feed(p)).records)).toEqual([1, 2]);
  });

  test("a PATCH that changes nothing records nothing", async () => {
    const p = await srv.newProject();
    const id = (await p.api("POST", "/contacts", { body: { firstName: "Same" } })).json.contactId;
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { firstName: "Same" } }), 200);
    expect(seqs((await feed(p)).records)).toEqual([1]);
  });

  test("a batch of 300 creates appends 300 records in item order, and seq goes on from there", async () => {
    const p = await srv.newProject();
    expectStatus(await p.api("POST", "/contacts", { body: { firstName: "First" } }), 201);
    const items = Array.from({ length: 300 }, (_, i) => ({ firstName: `Item${i}` }));
    const res = await p.api("POST", "/contacts/batch", { body: { operation: "create", items } });
    expectStatus(res, 200);
    expectStatus(await p.api("POST", "/contacts", { body: { firstName: "Last" } }), 201);
    const { records } = await feed(p, { limit: 1000 });
    expect(seqs(records)).toEqual(oneToN(302));
    expect(records.slice(1, 301).map((r) => r.id)).toEqual(res.json.results.map((r: any) => r.contactId));
  });

  test("projects count their own seqs: a change in one never moves the other's", async () => {
    const a = await srv.newProject();
    const b = await srv.newProject();
    for (let i = 0; i < 3; i++) expectStatus(await a.api("POST", "/contacts", { body: { firstName: `A${i}` } }), 201);
    expectStatus(await b.api("POST", "/contacts", { body: { firstName: "B" } }), 201);
    expect(seqs((await feed(a)).records)).toEqual([1, 2, 3]);
    expect(seqs((await feed(b)).records)).toEqual([1]);
  });
});

describe("what a record says", () => {
  test("created lists each set field from null; updated names each changed field with from and to (address parts, custom fields by id, tags by name)", async () => {
    const p = await srv.newProject();
    const field = await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Plan", "--type", "text", "--json"]);
    const created = await p.api("POST", "/contacts", {
      body: { firstName: "Ada", email: "ada@example.com", address: { city: "London" }, tags: ["vip", "beta"], customFields: { Plan: "Gold" } },
    });
    const id = created.json.contactId;
    const patched = await p.api("PATCH", `/contacts/${id}`, {
      body: { email: "ada@new.example.com", address: { city: "Paris" }, tags: ["vip"], customFields: { Plan: "Silver" }, subscribed: true },
    });
    expectStatus(patched, 200);
    const [first, second] = (await feed(p)).records;
    expect(first.changes).toEqual(
      expect.arrayContaining([
        { field: "firstName", from: null, to: "Ada" },
        { field: "email", from: null, to: "ada@example.com" },
        { field: "address.city", from: null, to: "London" },
        { field: `customFields.${field.id}`, from: null, to: "Gold" },
        { field: "tags", from: null, to: ["beta", "vip"] },
      ]),
    );
    expect(first.changes.find((c: any) => c.field === "lastName")).toBeUndefined();
    expect(second.changes).toEqual([
      { field: "email", from: "ada@example.com", to: "ada@new.example.com" },
      { field: "subscribed", from: false, to: true },
      { field: "address.city", from: "London", to: "Paris" },
      { field: `customFields.${field.id}`, from: "Gold", to: "Silver" },
      { field: "tags", from: ["beta", "vip"], to: ["vip"] },
    ]);
  });

  test("a relabel is the contactId field; the record's id is the new contactId", async () => {
    const p = await srv.newProject();
    const id = (await p.api("POST", "/contacts", { body: { firstName: "R" } })).json.contactId;
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { contactId: "CR-77" } }), 200);
    const record = (await feed(p)).records[1];
    expect(record).toMatchObject({ id: "CR-77", action: "updated", changes: [{ field: "contactId", from: id, to: "CR-77" }] });
  });

  test("the actor is the API key and requestId the answer's X-Request-Id; the CLI's and the form's writes name theirs", async () => {
    const p = await srv.newProject();
    const res = await p.api("POST", "/contacts", { body: { firstName: "Key" }, key: p.key });
    const form = await srv.cli(["form", "create", "--project", p.id, "--name", "Signup", "--fields", "email,firstName", "--json"]);
    const submitted = await fetch(`${srv.baseUrl}/forms/${form.id}/submissions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: "form@example.com", firstName: "Formy" }),
    });
    expect(submitted.status).toBeLessThan(300);
    await srv.cli(["contact", "erase", "--project", p.id, res.json.contactId, "--json"]);
    const records = (await feed(p)).records;
    expect(records[1]).toMatchObject({ action: "created", actor: { type: "form", id: form.id }, requestId: submitted.headers.get("x-request-id") });
    // The erasure's record, and the erased contact's earlier ones, keep seq, at, object, id and action only.
    expect(records[2]).toEqual({ seq: 3, at: expect.any(String), object: "contact", id: res.json.contactId, action: "erased" });
    expect(records[0]).toEqual({ seq: 1, at: expect.any(String), object: "contact", id: res.json.contactId, action: "created" });
  });

  test("the API key's own writes name it and the request", async () => {
    const p = await srv.newProject();
    const res = await p.api("POST", "/contacts", { body: { firstName: "Key" }, key: p.key });
    const [record] = (await feed(p)).records;
    expect(record.actor).toEqual({ type: "api_key", id: p.keyId });
    expect(record.requestId).toBe(res.headers.get("x-request-id"));
  });

  test("a CSV import's rows name the import", async () => {
    const p = await srv.newProject();
    const { writeFileSync } = await import("node:fs");
    const file = `${srv.dir}/people-${p.id}.csv`;
    writeFileSync(file, "First Name,Email\nIm,im@example.com\nPort,port@example.com\n");
    await srv.cli(["import", file, "--project", p.id, "--json"]);
    const records = (await feed(p)).records;
    expect(records.map((r) => `${r.action} ${r.actor.type}`)).toEqual(["created import", "created import"]);
  });
});

describe("contact.updated carries previous", () => {
  test("previous holds the changed fields' former values as the contact showed them", async () => {
    const p = await srv.newProject();
    const id = (await p.api("POST", "/contacts", { body: { firstName: "Ada", email: "a@example.com", tags: ["vip"], address: { city: "London" } } })).json.contactId;
    const before = (await p.api("GET", `/contacts/${id}`)).json;
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { email: "b@example.com", tags: [], address: { city: "Paris" } } }), 200);
    const [updated] = await readEvents(p.api, { type: "contact.updated" });
    expect(updated!.data.changedFields.sort()).toEqual(["address", "email", "tags"]);
    expect(updated!.data.previous).toEqual({ email: "a@example.com", tags: before.tags, address: before.address });
  });
});

describe("GET /contacts/{contactId}/history", () => {
  test("newest first, across a relabel, paged with its cursor, and filtered by field (a top-level name takes its parts)", async () => {
    const p = await srv.newProject();
    const id = (await p.api("POST", "/contacts", { body: { firstName: "H" } })).json.contactId;
    const other = (await p.api("POST", "/contacts", { body: { firstName: "Other" } })).json.contactId;
    for (let i = 0; i < 4; i++) expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { notes: `n${i}` } }), 200);
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { address: { city: "Oslo" } } }), 200);
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { contactId: "CR-500" } }), 200);
    expectStatus(await p.api("PATCH", `/contacts/${other}`, { body: { notes: "x" } }), 200);
    const all = await walk(p.api, "/contacts/CR-500/history", { limit: 3 });
    expect(all.items.map((r: any) => r.action)).toEqual(["updated", "updated", "updated", "updated", "updated", "updated", "created"]);
    expect(all.items.map((r: any) => r.seq)).toEqual([...all.items.map((r: any) => r.seq)].sort((a, b) => b - a));
    expect(all.items.at(-1).id).toBe(id);
    const notes = await p.api("GET", "/contacts/CR-500/history", { query: { field: "notes" } });
    expect(notes.json.data.map((r: any) => r.changes[0].to)).toEqual(["n3", "n2", "n1", "n0"]);
    const address = await p.api("GET", "/contacts/CR-500/history", { query: { field: ["address", "contactId"] } });
    // The created record sets contactId too.
    expect(address.json.data.map((r: any) => r.changes[0].field)).toEqual(["contactId", "address.city", "contactId"]);
    expectError(await p.api("GET", "/contacts/CR-500/history", { query: { field: "shoeSize" } }), "ERR_FORM_VALIDATION", "field");
  });

  test("404 for a contact that never existed, for an old label, and for an erased one; a contact in the trash has its history", async () => {
    const p = await srv.newProject();
    const id = (await p.api("POST", "/contacts", { body: { firstName: "T" } })).json.contactId;
    expectError(await p.api("GET", "/contacts/CR-999/history"), "ERR_NOT_FOUND");
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    const trashed = await p.api("GET", `/contacts/${id}/history`);
    expect(trashed.json.data.map((r: any) => r.action)).toEqual(["deleted", "created"]);
    await srv.cli(["contact", "erase", "--project", p.id, id, "--json"]);
    expectError(await p.api("GET", `/contacts/${id}/history`), "ERR_NOT_FOUND");
  });

  test("needs contacts:read", async () => {
    const key = await srv.newKey(["contacts:write"]);
    expectError(await srv.api("GET", "/contacts/CR-1/history", { key }), "ERR_FORBIDDEN");
    expectError(await srv.api("GET", "/changes", { key }), "ERR_FORBIDDEN");
  });
});

describe("GET /changes", () => {
  test("resumes from nextCursor; an empty page still gives a cursor to poll with, which then sees the next change", async () => {
    const p = await srv.newProject();
    const empty = await p.api("GET", "/changes");
    expectStatus(empty, 200);
    expect(empty.json).toEqual({ data: [], pagination: { nextCursor: expect.any(String), hasMore: false } });
    for (let i = 0; i < 5; i++) await p.api("POST", "/contacts", { body: { firstName: `F${i}` } });
    const first = await p.api("GET", "/changes", { query: { after: empty.json.pagination.nextCursor, limit: 2 } });
    expect(seqs(first.json.data)).toEqual([1, 2]);
    expect(first.json.pagination.hasMore).toBe(true);
    const rest = await p.api("GET", "/changes", { query: { after: first.json.pagination.nextCursor, limit: 1000 } });
    expect(seqs(rest.json.data)).toEqual([3, 4, 5]);
    const idle = await p.api("GET", "/changes", { query: { after: rest.json.pagination.nextCursor } });
    expect(idle.json.data).toEqual([]);
    await p.api("POST", "/contacts", { body: { firstName: "Later" } });
    const later = await p.api("GET", "/changes", { query: { after: idle.json.pagination.nextCursor } });
    expect(seqs(later.json.data)).toEqual([6]);
  });

  test("the object filter keeps contact or interaction_log records; limit is 1–1,000; a cursor of another project is 422", async () => {
    const p = await srv.newProject();
    const id = (await p.api("POST", "/contacts", { body: { firstName: "O" } })).json.contactId;
    await p.api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: "n" } });
    const logs = await p.api("GET", "/changes", { query: { object: "interaction_log" } });
    expect(logs.json.data.map((r: any) => `${r.seq} ${r.object}`)).toEqual(["2 interaction_log"]);
    // A log's record names its contact and fields, so a follower can place it.
    expect(logs.json.data[0].changes).toEqual([
      { field: "contactId", from: null, to: id },
      { field: "interactionType", from: null, to: { id: "note", name: "Note" } },
      { field: "note", from: null, to: "n" },
      { field: "date", from: null, to: expect.any(String) },
    ]);
    const both = await p.api("GET", "/changes", { query: { object: ["contact", "interaction_log"] } });
    expect(seqs(both.json.data)).toEqual([1, 2]);
    expectError(await p.api("GET", "/changes", { query: { limit: 1001 } }), "ERR_FORM_VALIDATION", "limit");
    expectError(await p.api("GET", "/changes", { query: { limit: 0 } }), "ERR_FORM_VALIDATION", "limit");
    expectError(await p.api("GET", "/changes", { query: { object: "tag" } }), "ERR_FORM_VALIDATION", "object");
    const other = await srv.newProject();
    const foreign = (await other.api("GET", "/changes")).json.pagination.nextCursor;
    expectError(await p.api("GET", "/changes", { query: { after: foreign } }), "ERR_FORM_VALIDATION", "after");
  });

  test("GET /contacts carries Changes-Cursor read before the page: a mirror that lists then follows from it misses nothing", async () => {
    const p = await srv.newProject();
    for (let i = 0; i < 3; i++) await p.api("POST", "/contacts", { body: { firstName: `M${i}` } });
    const list = await p.api("GET", "/contacts", { query: { limit: 2 } });
    const cursor = list.headers.get("changes-cursor");
    expect(cursor).toBeTruthy();
    const mirror = new Map<string, any>(list.json.data.map((c: any) => [c.contactId, c]));
    // Changes made while the pages are read come again from the feed.
    const late = (await p.api("POST", "/contacts", { body: { firstName: "Late" } })).json.contactId;
    const next = await p.api("GET", "/contacts", { query: { limit: 2, cursor: list.json.pagination.nextCursor } });
    for (const c of next.json.data) mirror.set(c.contactId, c);
    const changes = await p.api("GET", "/changes", { query: { after: cursor! } });
    expect(changes.json.data.map((r: any) => r.id)).toEqual([late]);
    for (const r of changes.json.data) mirror.set(r.id, (await p.api("GET", `/contacts/${r.id}`)).json);
    expect([...mirror.keys()].sort()).toEqual((await walk(p.api, "/contacts")).items.map((c: any) => c.contactId).sort());
  });
});
