/**
 * The client's syncing-in helpers against the real server (docs/api.md §18.2, §18.4):
 * `upsertContact` over PUT /contacts, and `batchContacts` / `batchInteractions`, which cut an
 * input of any length into chunks of at most 1,000, each with its own Idempotency-Key, and
 * merge the answers with indexes over the whole input.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BatchError, createClient, CrmApiError, unwrap, type CrmClient } from "@crm-service/client";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { recordingFetch } from "./recording-fetch.ts";

let srv: ServerHandle;
beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 30_000);
afterAll(async () => {
  await srv?.stop();
}, 30_000);

let seq = 0;
const uniqueEmail = () => `sync${++seq}.${Date.now()}@example.com`;

async function projectClient() {
  const project = await srv.newProject();
  const recorder = recordingFetch();
  const crm: CrmClient = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch: recorder.fetch });
  return { project, crm, sent: recorder.sent };
}

async function contactCount(crm: CrmClient): Promise<number> {
  let n = 0;
  for await (const _ of crm.paginate("/contacts", { params: { query: { limit: 200 } } })) n++;
  return n;
}

describe("upsertContact", () => {
  test("created (201), then unchanged, then updated; the query holds only the options given; each call carries an Idempotency-Key", async () => {
    const { crm, sent } = await projectClient();
    const email = uniqueEmail();
    const first = await crm.upsertContact({ email, firstName: "Ada", tags: ["vip"] }, { matchOn: "email" });
    expect([first.result, first.response.status]).toEqual(["created", 201]);
    expect(first.response.headers.get("location")).toBe(`/v1/contacts/${first.contact.contactId}`);
    const again = await crm.upsertContact({ email, firstName: "Ada", tags: ["vip"] }, { matchOn: "email" });
    expect([again.result, again.response.status, again.contact.contactId]).toEqual(["unchanged", 200, first.contact.contactId]);
    const changed = await crm.upsertContact({ email, lastName: "Lovelace", tags: ["newsletter"] }, { matchOn: "email", update: "merge", tags: "add" });
    expect(changed.result).toBe("updated");
    const contact = unwrap(await crm.GET("/contacts/{contactId}", { params: { path: { contactId: first.contact.contactId } } }));
    expect(contact.tags.map((t) => t.name).sort()).toEqual(["newsletter", "vip"]);

    expect(sent.slice(0, 3).map((s) => [s.method, s.url.pathname, s.url.search])).toEqual([
      ["PUT", "/v1/contacts", "?matchOn=email"],
      ["PUT", "/v1/contacts", "?matchOn=email"],
      ["PUT", "/v1/contacts", "?matchOn=email&update=merge&tags=add"],
    ]);
    const keys = sent.slice(0, 3).map((s) => s.headers.get("idempotency-key"));
    expect(new Set(keys).size).toBe(3);
  });

  test("update=fill writes only empty fields; ifMatch and idempotencyKey are sent as their headers", async () => {
    const { crm, sent } = await projectClient();
    const email = uniqueEmail();
    const made = await crm.upsertContact({ email, firstName: "Grace" }, { matchOn: "email" });
    const filled = await crm.upsertContact({ email, firstName: "Other", lastName: "Hopper" }, { matchOn: "email", update: "fill", ifMatch: '"1"', idempotencyKey: `fill-${email}` });
    expect(filled.result).toBe("updated");
    expect(filled.contact).toMatchObject({ firstName: "Grace", lastName: "Hopper" });
    expect(sent[1]!.headers.get("if-match")).toBe('"1"');
    expect(sent[1]!.headers.get("idempotency-key")).toBe(`fill-${email}`);
    const stale = await crm.upsertContact({ email, notes: "x" }, { matchOn: "email", ifMatch: '"1"' }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(CrmApiError);
    expect((stale as CrmApiError).status).toBe(412);
    expect(made.contact.contactId).toBe(filled.contact.contactId);
  });

  test("two contacts holding the email: CrmApiError 409 ERR_AMBIGUOUS_MATCH with matches", async () => {
    const { crm } = await projectClient();
    const email = uniqueEmail();
    const a = unwrap(await crm.POST("/contacts", { body: { firstName: "A", email } }));
    const b = unwrap(await crm.POST("/contacts", { body: { firstName: "B", email } }));
    const error = await crm.upsertContact({ email, firstName: "C" }, { matchOn: "email" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmApiError);
    const apiError = error as CrmApiError;
    expect([apiError.status, apiError.code, apiError.fieldName]).toEqual([409, "ERR_AMBIGUOUS_MATCH", "matchOn"]);
    expect([...apiError.envelope!.matches!].sort()).toEqual([a.contactId, b.contactId].sort());
  });
});

describe("batchContacts and batchInteractions", () => {
  test("2,001 items: three requests of 1,000, 1,000 and 1; indexes over the whole input; summaries summed", async () => {
    const { crm, sent } = await projectClient();
    const stamp = Date.now();
    const items = Array.from({ length: 2001 }, (_, i) => ({ firstName: `Bulk${i}`, email: i === 1500 ? "not-an-email" : `bulk${i}.${stamp}@example.com` }));
    const answer = await crm.batchContacts({ operation: "create", items });
    expect(sent.map((s) => JSON.parse(s.body).items.length)).toEqual([1000, 1000, 1]);
    expect(new Set(sent.map((s) => s.headers.get("idempotency-key"))).size).toBe(3);
    expect(answer.results.map((r) => r.index)).toEqual(items.map((_, i) => i));
    expect(answer.summary).toEqual({ created: 2000, updated: 0, unchanged: 0, failed: 1 });
    expect(answer.results[1500]).toMatchObject({ index: 1500, status: 422, result: "error", error: { code: "ERR_FORM_VALIDATION", fieldName: "email" } });
    expect(answer.results[2000]).toMatchObject({ index: 2000, status: 201, result: "created" });
  }, 60_000);

  test("an empty input sends nothing; chunkSize outside 1..1000 is a RangeError", async () => {
    const { crm, sent } = await projectClient();
    expect(await crm.batchContacts({ operation: "create", items: [] })).toEqual({ results: [], summary: { created: 0, updated: 0, unchanged: 0, failed: 0 } });
    expect(sent).toHaveLength(0);
    expect(crm.batchContacts({ operation: "create", items: [{ firstName: "x" }] }, { chunkSize: 1001 })).rejects.toBeInstanceOf(RangeError);
  });

  test("atomic holds per chunk: the chunks before a rejected one stay written, the rest are not sent; BatchError says how far it got", async () => {
    const { crm, sent } = await projectClient();
    const e = uniqueEmail();
    const items = [{ email: `a.${e}` }, { email: `b.${e}` }, { email: `c.${e}` }, { email: "bad" }, { email: `d.${e}` }];
    const error = await crm.batchContacts({ operation: "upsert", matchOn: "email", atomic: true, items }, { chunkSize: 2 }).catch((x: unknown) => x);
    expect(error).toBeInstanceOf(BatchError);
    const batchError = error as BatchError;
    expect([batchError.status, batchError.code, batchError.completed, batchError.chunk]).toEqual([422, "ERR_BATCH_REJECTED", 2, 1]);
    expect(batchError.results.map((r) => [r.index, r.result])).toEqual([
      [0, "created"],
      [1, "created"],
      [2, "skipped"],
      [3, "error"],
    ]);
    expect(batchError.summary).toEqual({ created: 2, updated: 0, unchanged: 0, failed: 0 });
    expect(sent).toHaveLength(2);
    expect(await contactCount(crm)).toBe(2);
  });

  test("idempotencyKey: chunk n sends <key>-<n>; the same input sent again is replayed and writes nothing twice", async () => {
    const { crm, sent } = await projectClient();
    const e = uniqueEmail();
    const items = [{ email: `a.${e}` }, { email: `b.${e}` }, { email: `c.${e}` }];
    const progress: number[] = [];
    const first = await crm.batchContacts({ operation: "create", items }, { chunkSize: 2, idempotencyKey: `load-${e}`, onChunk: (p) => progress.push(p.completed) });
    const again = await crm.batchContacts({ operation: "create", items }, { chunkSize: 2, idempotencyKey: `load-${e}` });
    expect(again).toEqual(first);
    expect(progress).toEqual([2, 3]);
    expect(sent.map((s) => s.headers.get("idempotency-key"))).toEqual([`load-${e}-0`, `load-${e}-1`, `load-${e}-0`, `load-${e}-1`]);
    expect(sent.slice(2).every((s) => s.status === 200)).toBe(true);
    expect(await contactCount(crm)).toBe(3);
  });

  test("update items carry their contactId; interactions in chunks: created, then replayed by uniqueIdentifier", async () => {
    const { crm } = await projectClient();
    const contact = unwrap(await crm.POST("/contacts", { body: { firstName: "Logs", email: uniqueEmail() } }));
    const updated = await crm.batchContacts({ operation: "update", items: [{ contactId: contact.contactId, notes: "from the batch" }] });
    expect(updated.results[0]).toMatchObject({ index: 0, result: "updated", contactId: contact.contactId });
    const items = [0, 1, 2].map((i) => ({ contactId: contact.contactId, type: "note" as const, note: `n${i}`, uniqueIdentifier: `import-${i}-${contact.contactId}` }));
    const first = await crm.batchInteractions({ items }, { chunkSize: 2 });
    expect(first.summary).toEqual({ created: 3, replayed: 0, failed: 0 });
    const again = await crm.batchInteractions({ items }, { chunkSize: 2 });
    expect(again.results.map((r) => [r.index, r.result])).toEqual([
      [0, "replayed"],
      [1, "replayed"],
      [2, "replayed"],
    ]);
  });

  test("a 429 of the batch-items bucket whose Retry-After is past the retry cap stops the batch: BatchError 429, completed", async () => {
    const { project, crm } = await projectClient();
    await srv.cli(["project", "update", project.id, "--batch-items-per-hour", "3"]);
    const e = uniqueEmail();
    const items = [{ email: `a.${e}` }, { email: `b.${e}` }, { email: `c.${e}` }, { email: `d.${e}` }];
    const error = await crm.batchContacts({ operation: "create", items }, { chunkSize: 2 }).catch((x: unknown) => x);
    expect(error).toBeInstanceOf(BatchError);
    const batchError = error as BatchError;
    expect([batchError.status, batchError.code, batchError.completed]).toEqual([429, "ERR_RATE_LIMITED", 2]);
    expect(batchError.results.map((r) => r.index)).toEqual([0, 1]);
  });
});
