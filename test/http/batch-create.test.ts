/**
 * Batch creates (docs/api.md §18.4) are written many items to a statement; these tests hold
 * that path to the single call's results: the same contacts, events, numbers in item order,
 * tags and unique values made by earlier items seen by later ones, the quota in item order,
 * and contacts searchable and delivered at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readEvents } from "../helpers/events.ts";
import { expectStatus } from "../helpers/expect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let rx: Receiver;
let run = 0;
const tagName = (name: string) => `${name}-${Date.now()}-${run++}`;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox", extraEnv: { CRM_OUTBOX_POLL_MS: "50" } });
  rx = await startReceiver({ status: 200 });
}, 60_000);

afterAll(async () => {
  await rx?.stop();
  await srv?.stop();
}, 60_000);

const numberOf = (contactId: string) => Number(contactId.slice(3));
const withoutIdentity = ({ contactId, createdAt, updatedAt, duplicateSignal, ...rest }: any) => rest;

describe("batch creates are the single calls' creates", () => {
  test("every field, tag, type and custom field comes out as POST /contacts makes it, and each contact.created carries the contact GET reads", async () => {
    const p = await srv.newProject();
    const type = await srv.cli(["contact-type", "create", "--project", p.id, "--name", "Lead", "--category", "Lead", "--json"]);
    await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Nickname", "--type", "text", "--json"]);
    const size = await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Size", "--type", "select", "--options", "S,M,L", "--json"]);
    expectStatus(await p.api("POST", "/contacts", { body: { firstName: "Seed", tags: ["VIP", "newsletter"] } }), 201);
    const items = [
      { firstName: "Ada", lastName: "Lovelace", email: "  ada@example.com ", phone: "+44 20 7946 0958", tags: ["vip"] },
      { businessName: "Acme Ltd", website: "https://acme.example", address: { city: "Paris", country: "FR" }, subscribed: true },
      { firstName: "Grace", contactTypeId: type.id, customFields: { Nickname: "Amazing", [size.id]: "M" }, tags: ["newsletter", "VIP"], notes: "n" },
      { lastName: "Hopper", phone: "(202) 555-0143", smsSubscribed: true, identityType: "personal" },
    ];
    const res = await p.api("POST", "/contacts/batch", { body: { operation: "create", items } });
    expectStatus(res, 200);
    expect(res.json.results.map((r: any) => r.error ?? r.status)).toEqual([201, 201, 201, 201]);
    const events = await readEvents(p.api, { type: "contact.created" });
    for (const [i, item] of items.entries()) {
      const single = await p.api("POST", "/contacts", { body: item });
      expectStatus(single, 201);
      const fromBatch = (await p.api("GET", `/contacts/${res.json.results[i].contactId}`)).json;
      expect(withoutIdentity(fromBatch)).toEqual(withoutIdentity(single.json));
      const event = events.find((e) => e.data.contact.contactId === fromBatch.contactId);
      const { duplicateSignal, ...asRead } = fromBatch;
      expect(event!.data.contact).toEqual(asRead);
    }
  });

  test("an item naming a new tag, or setting a unique value, is written in its turn: numbers follow the items, later items see what it made", async () => {
    const p = await srv.newProject();
    const unique = await srv.cli(["custom-field", "create", "--project", p.id, "--title", "External ID", "--type", "text", "--unique", "--json"]);
    const fresh = tagName("fresh");
    const items = [
      { firstName: "plain-1" },
      { firstName: "new-tag", tags: [fresh] },
      { firstName: "same-tag", tags: [fresh.toUpperCase()] },
      { firstName: "unique-1", customFields: { [unique.id]: "X-1" } },
      { firstName: "unique-again", customFields: { [unique.id]: " X-1 " } },
      { firstName: "plain-2" },
    ];
    const res = await p.api("POST", "/contacts/batch", { body: { operation: "create", items } });
    expectStatus(res, 200);
    expect(res.json.results.map((r: any) => r.status)).toEqual([201, 201, 201, 201, 409, 201]);
    expect(res.json.results[4].error).toMatchObject({ code: "ERR_CONFLICT", fieldName: `customFields.${unique.id}` });
    const numbers = res.json.results.filter((r: any) => r.contactId).map((r: any) => numberOf(r.contactId));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    const tagged = (await p.api("GET", "/contacts", { query: { tag: fresh } })).json.data;
    expect(tagged.map((c: any) => c.firstName).sort()).toEqual(["new-tag", "same-tag"]);
    expect(new Set(tagged.map((c: any) => c.tags[0].id)).size).toBe(1);
  });

  test("the quota is counted in item order across both kinds of item; an item that does not validate is 422 even past it", async () => {
    const p = await srv.newProject({ contactQuota: 3 });
    const unique = await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Ref", "--type", "text", "--unique", "--json"]);
    const items = [{ firstName: "a" }, { firstName: "b", customFields: { [unique.id]: "r" } }, { firstName: "c" }, { firstName: "d" }, { email: "no" }, { firstName: "e", customFields: { [unique.id]: "s" } }];
    const res = await p.api("POST", "/contacts/batch", { body: { operation: "create", items } });
    expect(res.json.results.map((r: any) => r.status)).toEqual([201, 201, 201, 402, 422, 402]);
    expect(res.json.results[3].error.code).toBe("ERR_QUOTA_EXCEEDED");
    expect((await p.api("GET", "/contacts")).json.data).toHaveLength(3);
    // The numbers given back are taken by the next create once the quota allows it.
    const before = Math.max(...res.json.results.filter((r: any) => r.contactId).map((r: any) => numberOf(r.contactId)));
    await srv.cli(["project", "update", p.id, "--contact-quota", "10", "--json"]);
    const next = await p.api("POST", "/contacts", { body: { firstName: "f" } });
    expect(numberOf(next.json.contactId)).toBe(before + 1);
  });

  test("contacts of a batch are found at once by search, email, phone and tag", async () => {
    const p = await srv.newProject();
    const tag = tagName("found");
    expectStatus(await p.api("POST", "/contacts", { body: { firstName: "Seed", tags: [tag] } }), 201);
    const items = Array.from({ length: 300 }, (_, i) => ({ firstName: `Zebulon${i}`, lastName: "Quarrington", email: `z${i}@found.example`, phone: `+1202555${String(1000 + i)}`, tags: [tag] }));
    expectStatus(await p.api("POST", "/contacts/batch", { body: { operation: "create", items } }), 200);
    expect((await p.api("GET", "/contacts", { query: { search: "zebulon299" } })).json.data.map((c: any) => c.email)).toEqual(["z299@found.example"]);
    expect((await p.api("GET", "/contacts", { query: { search: "quarrington", limit: 100 } })).json.data).toHaveLength(100);
    expect((await p.api("GET", "/contacts", { query: { email: "Z7@FOUND.example" } })).json.data).toHaveLength(1);
    expect((await p.api("GET", "/contacts", { query: { phone: "+12025551007" } })).json.data[0].firstName).toBe("Zebulon7");
    let count = 0;
    for (let cursor: string | null = null, page = 0; page < 10; page++) {
      const res: any = await p.api("GET", "/contacts", { query: { tag, limit: 100, ...(cursor ? { cursor } : {}) } });
      count += res.json.data.length;
      cursor = res.json.pagination.nextCursor;
      if (!cursor) break;
    }
    expect(count).toBe(301);
  });

  test("each created contact's event is delivered to the subscribed webhook, once", async () => {
    const p = await srv.newProject();
    expectStatus(await p.api("POST", "/webhooks", { body: { url: rx.url, events: ["contact.created"] } }), 201);
    rx.clear();
    const res = await p.api("POST", "/contacts/batch", { body: { operation: "create", items: Array.from({ length: 120 }, (_, i) => ({ firstName: `Hook${i}` })) } });
    expectStatus(res, 200);
    const got = await rx.waitFor(120, 20_000);
    const delivered = got.map((r) => r.json.data.contact.contactId).sort();
    expect(delivered).toEqual(res.json.results.map((r: any) => r.contactId).sort());
  });

  test("upsert: new values are created in item order, an item repeating an earlier item's value updates that contact, and each result is PUT's", async () => {
    const p = await srv.newProject();
    const existing = (await p.api("POST", "/contacts", { body: { firstName: "Old", email: "b@up.example" } })).json;
    const items = [
      { firstName: "A", email: "a@up.example" },
      { lastName: "Bee", email: "B@UP.example" },
      { firstName: "C", email: "c@up.example" },
      { lastName: "Again", email: " a@up.example" },
      { firstName: "No email" },
      { firstName: "D", email: "d@up.example", website: "not a url" },
    ];
    const res = await p.api("POST", "/contacts/batch", { body: { operation: "upsert", matchOn: "email", items } });
    expectStatus(res, 200);
    expect(res.json.results.map((r: any) => [r.status, r.result])).toEqual([
      [201, "created"],
      [200, "updated"],
      [201, "created"],
      [200, "updated"],
      [422, "error"],
      [422, "error"],
    ]);
    const single = await p.api("PUT", "/contacts", { query: { matchOn: "email" }, body: { firstName: "No email" } });
    expect(res.json.results[4].error).toEqual({ code: single.json.code, message: single.json.message, fieldName: single.json.fieldName });
    expect(res.json.results[1].contactId).toBe(existing.contactId);
    expect(res.json.results[3].contactId).toBe(res.json.results[0].contactId);
    expect(numberOf(res.json.results[2].contactId)).toBeGreaterThan(numberOf(res.json.results[0].contactId));
    const a = (await p.api("GET", `/contacts/${res.json.results[0].contactId}`)).json;
    expect([a.firstName, a.lastName, a.version]).toEqual(["A", "Again", 2]);
    expect(res.json.summary).toEqual({ created: 2, updated: 2, unchanged: 0, failed: 2 });
  });

  test("upsert: a value two contacts hold is 409 ERR_AMBIGUOUS_MATCH for its item only", async () => {
    const p = await srv.newProject();
    for (const firstName of ["One", "Two"]) expectStatus(await p.api("POST", "/contacts", { body: { firstName, email: "twice@up.example" } }), 201);
    const res = await p.api("POST", "/contacts/batch", { body: { operation: "upsert", matchOn: "email", items: [{ email: "twice@up.example" }, { email: "once@up.example" }] } });
    expect(res.json.results.map((r: any) => r.status)).toEqual([409, 201]);
    expect(res.json.results[0].error).toMatchObject({ code: "ERR_AMBIGUOUS_MATCH", fieldName: "matchOn" });
  });

  test("upsert: concurrent batches sending the same new values make one contact per value", async () => {
    const p = await srv.newProject();
    const items = Array.from({ length: 50 }, (_, i) => ({ firstName: `R${i}`, email: `race${i}@up.example` }));
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => p.api("POST", "/contacts/batch", { body: { operation: "upsert", matchOn: "email", items } })),
    );
    for (const a of answers) expectStatus(a, 200);
    const created = answers.flatMap((a) => a.json.results.filter((r: any) => r.result === "created"));
    expect(created).toHaveLength(50);
    for (let i = 0; i < 50; i += 7) expect((await p.api("GET", "/contacts", { query: { email: `race${i}@up.example` } })).json.data).toHaveLength(1);
  });
});
