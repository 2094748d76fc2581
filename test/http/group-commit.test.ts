/**
 * Concurrent writes through the real server (docs/decisions.md, group commit): write
 * requests that arrive together share one SQLite transaction, one savepoint each. Each
 * request is still all-or-nothing: a refused one leaves no trace, not even a used contact
 * number or quota slot, and its neighbours in the batch are written and answered. The
 * outcomes hold on both backends; that fewer transactions than requests were needed is
 * the SQLite group commit's own (skipped under CRM_TEST_BACKEND=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sqliteOnly } from "../helpers/postgres.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { readMetrics } from "../helpers/metrics.ts";

let srv: ServerHandle;
beforeAll(async () => {
  srv = await startServer();
}, 60_000);
afterAll(() => srv.stop());

const counter = async (name: string) => (await readMetrics(srv.origin)).value(name)!;

const limits = { rateLimitPerMinute: 100_000, contactCreatesPerHour: 100_000 };

describe("concurrent writes (group commit)", () => {
  test("60 concurrent creates, every third invalid: the valid ones get consecutive numbers, the invalid ones leave nothing", async () => {
    const p = await srv.newProject(limits);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        p.api("POST", "/contacts", { body: i % 3 === 2 ? { firstName: "Bad", email: "not-an-email" } : { firstName: `C${i}`, tags: [`t${i % 4}`] } }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(40);
    for (const [i, a] of answers.entries()) {
      if (i % 3 === 2) expectError(a, "ERR_FORM_VALIDATION", "email");
      else expect(a.json.firstName).toBe(`C${i}`);
    }
    const numbers = created.map((a) => Number(a.json.contactId.slice(3))).sort((x, y) => x - y);
    expect(numbers).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));

    const list = await p.api("GET", "/contacts", { query: { limit: 100 } });
    expectStatus(list, 200);
    expect(list.json.data.map((c: { contactId: string }) => c.contactId).sort()).toEqual(created.map((a) => a.json.contactId).sort());
    for (const a of created) expectStatus(await p.api("GET", `/contacts/${a.json.contactId}`), 200);
    const events = await p.api("GET", "/events", { query: { limit: 100 } });
    expect(events.json.data.filter((e: { event: string }) => e.event === "contact.created")).toHaveLength(40);
  });

  test.skipIf(sqliteOnly)("60 concurrent writes go through group commit in fewer SQLite transactions than requests", async () => {
    const p = await srv.newProject(limits);
    const batchesBefore = await counter("crm_write_batches_total");
    const requestsBefore = await counter("crm_write_batch_requests_total");
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        p.api("POST", "/contacts", { body: i % 3 === 2 ? { firstName: "Bad", email: "not-an-email" } : { firstName: `C${i}`, tags: [`t${i % 4}`] } }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(40);
    // The service's own units (a key's last-used flush, an outcome) share the queue and the
    // counter (src/storage/unit-of-work.ts), so one may land in this window too.
    const units = (await counter("crm_write_batch_requests_total")) - requestsBefore;
    expect(units).toBeGreaterThanOrEqual(60);
    expect((await counter("crm_write_batches_total")) - batchesBefore).toBeLessThan(units);
  });

  test("the contact quota holds under concurrency: exactly quota creates succeed, the rest are 402 and use no number", async () => {
    const p = await srv.newProject({ ...limits, contactQuota: 10 });
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => p.api("POST", "/contacts", { body: { firstName: `Q${i}` } })));
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(10);
    for (const a of answers.filter((a) => a.status !== 201)) expectError(a, "ERR_QUOTA_EXCEEDED");
    expect(created.map((a) => Number(a.json.contactId.slice(3))).sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    const list = await p.api("GET", "/contacts", { query: { limit: 100 } });
    expect(list.json.data).toHaveLength(10);
  });

  test("concurrent interactions, PATCHes and creates on one project all land, each answered after it is durable", async () => {
    const p = await srv.newProject(limits);
    const base = await p.api("POST", "/contacts", { body: { firstName: "Base" } });
    expectStatus(base, 201);
    const id = base.json.contactId;
    const answers = await Promise.all([
      ...Array.from({ length: 15 }, (_, i) => p.api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: `Call ${i}` } })),
      ...Array.from({ length: 10 }, (_, i) => p.api("PATCH", `/contacts/${id}`, { body: { notes: `note ${i}` } })),
      ...Array.from({ length: 15 }, (_, i) => p.api("POST", "/contacts", { body: { lastName: `L${i}` } })),
    ]);
    // 15 logs created (201), 10 PATCHes (200), 15 contacts created (201).
    expect(answers.map((a) => a.status)).toEqual([...Array(15).fill(201), ...Array(10).fill(200), ...Array(15).fill(201)]);
    const logs = await p.api("GET", `/contacts/${id}/interactions`, { query: { limit: 100 } });
    expect(logs.json.data).toHaveLength(15);
    const after = await p.api("GET", `/contacts/${id}`);
    // The last PATCH committed wins: one of the ten.
    expect(Array.from({ length: 10 }, (_, i) => `note ${i}`)).toContain(after.json.notes);
    const list = await p.api("GET", "/contacts", { query: { limit: 100 } });
    expect(list.json.data).toHaveLength(16);
  });
});
