/**
 * A key never receives contact data it could not read (docs/security.md §3):
 * an answer to a contact write by a key without contacts:read is `{ contactId, createdAt,
 * updatedAt }` (docs/api.md §18.1's version joins it), and a uniqueIdentifier replay of an
 * interaction log is `{ id, contactId, createdAt }`. Statuses, headers, the write itself and
 * the events it fires are the same as for any key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startServer, type Api, type ServerHandle } from "../helpers/server.ts";

const CONTACT_RECEIPT = ["contactId", "createdAt", "updatedAt", "version"];
const LOG_RECEIPT = ["contactId", "createdAt", "id"];
const LOG_KEYS = ["contactId", "createdAt", "date", "fields", "id", "interactionType", "note", "uniqueIdentifier"];

let srv: ServerHandle;
/** Request functions bound to one key each: contacts:write only, interactions:write only, and with contacts:read too. */
let writeOnly: Api;
let logOnly: Api;
let readWrite: Api;
let readLog: Api;
let n = 0;
const uniq = (what: string) => `${what}-${process.pid}-${Date.now()}-${++n}`;
const keysOf = (body: object) => Object.keys(body).sort();

async function withKey(scopes: string[]): Promise<Api> {
  const key = await srv.newKey(scopes);
  return (method, path, opts = {}) => srv.api(method, path, { ...opts, key });
}

/** A contact made by an every-scope key, as GET shows it. */
async function existingContact(extra: Record<string, unknown> = {}) {
  const res = await srv.api("POST", "/contacts", { body: { firstName: "Stored", lastName: "Person", email: `${uniq("stored")}@example.com`, ...extra } });
  expectStatus(res, 201);
  return res.json;
}

beforeAll(async () => {
  // Sandbox: the webhook receiver listens on a loopback http URL (docs/api.md §2).
  srv = await startServer({ env: "sandbox" });
  writeOnly = await withKey(["contacts:write"]);
  logOnly = await withKey(["interactions:write"]);
  readWrite = await withKey(["contacts:read", "contacts:write"]);
  readLog = await withKey(["contacts:read", "interactions:write"]);
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

describe("contact writes by a key with contacts:write and without contacts:read", () => {
  test("POST /contacts answers 201 with Location and exactly contactId, createdAt, updatedAt", async () => {
    const email = `${uniq("receipt")}@example.com`;
    const res = await writeOnly("POST", "/contacts", { body: { firstName: "Receipt", lastName: "Only", email } });
    expectStatus(res, 201);
    expect(keysOf(res.json)).toEqual(CONTACT_RECEIPT);
    expect(res.json.contactId).toMatch(/^CR-\d+$/);
    expect(res.json.createdAt).toMatch(ISO_RE);
    expect(res.headers.get("location")).toBe(`/v1/contacts/${res.json.contactId}`);
    // The contact was created whole: the receipt is only what the answer shows.
    const got = await srv.api("GET", `/contacts/${res.json.contactId}`);
    expectStatus(got, 200);
    expect(got.json).toMatchObject({ firstName: "Receipt", lastName: "Only", email, createdAt: res.json.createdAt, updatedAt: res.json.updatedAt });
  });

  test("PATCH with changes answers 200 with exactly contactId, createdAt, updatedAt, and the change is made", async () => {
    const contact = await existingContact();
    const res = await writeOnly("PATCH", `/contacts/${contact.contactId}`, { body: { phone: "+1 415 555 0199", notes: "changed by a write-only key" } });
    expectStatus(res, 200);
    expect(keysOf(res.json)).toEqual(CONTACT_RECEIPT);
    const got = (await srv.api("GET", `/contacts/${contact.contactId}`)).json;
    expect(got.notes).toBe("changed by a write-only key");
    expect(res.json).toEqual({ contactId: contact.contactId, version: got.version, createdAt: got.createdAt, updatedAt: got.updatedAt });
  });

  test("PATCH {} of an existing contact answers exactly contactId, createdAt, updatedAt (no name, no email); a missing contact is still 404", async () => {
    const contact = await existingContact();
    const res = await writeOnly("PATCH", `/contacts/${contact.contactId}`, { body: {} });
    expectStatus(res, 200);
    expect(res.json).toEqual({ contactId: contact.contactId, version: contact.version, createdAt: contact.createdAt, updatedAt: contact.updatedAt });
    expect(res.text).not.toContain(contact.email);
    expect(res.text).not.toContain("Stored");
    expectError(await writeOnly("PATCH", "/contacts/CR-999999999", { body: {} }), "ERR_NOT_FOUND");
    expectError(await writeOnly("PATCH", "/contacts/CR-999999999", { body: { notes: "x" } }), "ERR_NOT_FOUND");
  });

  test("a relabel (PATCH contactId) answers the receipt under the new contactId", async () => {
    const contact = await existingContact();
    const relabel = `CR-${700_000_000 + Math.floor(Math.random() * 1_000_000)}`;
    const res = await writeOnly("PATCH", `/contacts/${contact.contactId}`, { body: { contactId: relabel } });
    expectStatus(res, 200);
    expect(keysOf(res.json)).toEqual(CONTACT_RECEIPT);
    expect(res.json.contactId).toBe(relabel);
  });

  test("a key with contacts:read and contacts:write gets the whole contact from POST and PATCH, where the write-only key gets the receipt", async () => {
    const created = await readWrite("POST", "/contacts", { body: { firstName: "Whole", email: `${uniq("whole")}@example.com` } });
    expectStatus(created, 201);
    expect(created.json).toMatchObject({ firstName: "Whole", identityType: "personal", tags: [] });
    const patched = await readWrite("PATCH", `/contacts/${created.json.contactId}`, { body: { lastName: "Answer" } });
    expectStatus(patched, 200);
    expect(patched.json).toMatchObject({ contactId: created.json.contactId, firstName: "Whole", lastName: "Answer" });
    const same = await writeOnly("PATCH", `/contacts/${created.json.contactId}`, { body: {} });
    expect(same.json).toEqual({ contactId: created.json.contactId, version: patched.json.version, createdAt: patched.json.createdAt, updatedAt: patched.json.updatedAt });
  });

  test("an Idempotency-Key replay of a write-only key's POST answers the same receipt with Idempotent-Replayed: true", async () => {
    const idem = { "Idempotency-Key": uniq("idem") };
    const body = { firstName: "Replayed", email: `${uniq("replayed")}@example.com` };
    const first = await writeOnly("POST", "/contacts", { body, headers: idem });
    expectStatus(first, 201);
    expect(keysOf(first.json)).toEqual(CONTACT_RECEIPT);
    const again = await writeOnly("POST", "/contacts", { body, headers: idem });
    expectStatus(again, 201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(`/v1/contacts/${first.json.contactId}`);
    expect(again.json).toEqual(first.json);
    // The stored answer belongs to the key that made it: the same value from a key that
    // may read runs anew (docs/api.md §11) and answers its own, whole, contact.
    const other = await readWrite("POST", "/contacts", { body, headers: idem });
    expectStatus(other, 201);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(other.json.contactId).not.toBe(first.json.contactId);
    expect(other.json).toMatchObject({ firstName: "Replayed", email: body.email });
  });
});

describe("interaction logs by a key with interactions:write and without contacts:read", () => {
  test("a first POST answers 201 with the whole log; its replay by uniqueIdentifier answers 200 with exactly id, contactId, createdAt", async () => {
    const contact = await existingContact();
    const path = `/contacts/${contact.contactId}/interactions`;
    const uniqueIdentifier = uniq("call");
    const first = await logOnly("POST", path, { body: { type: "note", note: "private words", fields: { outcome: "secret" }, uniqueIdentifier } });
    expectStatus(first, 201);
    expect(keysOf(first.json)).toEqual(LOG_KEYS);
    expect(first.json).toMatchObject({ note: "private words", fields: { outcome: "secret" }, uniqueIdentifier });

    const replay = await logOnly("POST", path, { body: { type: "note", note: "other words", uniqueIdentifier } });
    expectStatus(replay, 200);
    expect(keysOf(replay.json)).toEqual(LOG_RECEIPT);
    expect(replay.json).toEqual({ id: first.json.id, contactId: contact.contactId, createdAt: first.json.createdAt });
    expect(replay.text).not.toContain("private words");
  });

  test("a replay of a log another key wrote gives the write-only key only the receipt, and a key with contacts:read the whole stored log", async () => {
    const contact = await existingContact();
    const path = `/contacts/${contact.contactId}/interactions`;
    const uniqueIdentifier = uniq("meeting");
    const stored = await srv.api("POST", path, { body: { type: "note", note: "written by someone else", uniqueIdentifier } });
    expectStatus(stored, 201);

    const probe = await logOnly("POST", path, { body: { type: "note", uniqueIdentifier } });
    expectStatus(probe, 200);
    expect(probe.json).toEqual({ id: stored.json.id, contactId: contact.contactId, createdAt: stored.json.createdAt });

    const reader = await readLog("POST", path, { body: { type: "note", uniqueIdentifier } });
    expectStatus(reader, 200);
    expect(reader.json).toEqual(stored.json);
  });

  test("an Idempotency-Key replay of a write-only key's interaction replay answers the same receipt", async () => {
    const contact = await existingContact();
    const path = `/contacts/${contact.contactId}/interactions`;
    const uniqueIdentifier = uniq("sms");
    expectStatus(await srv.api("POST", path, { body: { type: "note", note: "first", uniqueIdentifier } }), 201);
    const headers = { "Idempotency-Key": uniq("idem-log") };
    const body = { type: "note", uniqueIdentifier };
    const a = await logOnly("POST", path, { body, headers });
    const b = await logOnly("POST", path, { body, headers });
    expectStatus(b, 200);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(keysOf(b.json)).toEqual(LOG_RECEIPT);
    expect(b.json).toEqual(a.json);
  });
});

describe("what else stays the same", () => {
  let rx: Receiver;
  let hookId: string;

  beforeAll(async () => {
    rx = await startReceiver();
    const hook = await srv.api("POST", "/webhooks", { body: { url: rx.url, events: ["contact.created", "contact.updated", "interaction_log.created"] } });
    expectStatus(hook, 201);
    hookId = hook.json.id;
  });

  afterAll(async () => {
    if (hookId) await srv.api("DELETE", `/webhooks/${hookId}`);
    await rx?.stop();
  });

  test("contact events of a write-only key's writes are delivered whole, while its answers are receipts", async () => {
    const email = `${uniq("event")}@example.com`;
    const created = await writeOnly("POST", "/contacts", { body: { firstName: "Evented", email } });
    expectStatus(created, 201);
    expect(keysOf(created.json)).toEqual(CONTACT_RECEIPT);
    const patched = await writeOnly("PATCH", `/contacts/${created.json.contactId}`, { body: { lastName: "Changed" } });
    expect(keysOf(patched.json)).toEqual(CONTACT_RECEIPT);
    const log = await logOnly("POST", `/contacts/${created.json.contactId}/interactions`, { body: { type: "note", note: "evented note" } });
    expectStatus(log, 201);

    const of = (type: string) => rx.requests.map((r) => r.json).find((e) => e?.event === type && (e.data.contact?.contactId ?? e.data.interactionLog?.contactId) === created.json.contactId);
    await rx.waitUntil(() => Boolean(of("contact.created") && of("contact.updated") && of("interaction_log.created")), 20_000, "the three events");
    expect(of("contact.created").data.contact).toMatchObject({ contactId: created.json.contactId, firstName: "Evented", email, identityType: "personal" });
    expect(of("contact.updated").data).toMatchObject({ contact: { firstName: "Evented", lastName: "Changed", email }, changedFields: ["lastName"] });
    expect(of("interaction_log.created").data).toMatchObject({
      interactionLog: log.json,
      contact: { contactId: created.json.contactId, firstName: "Evented", lastName: "Changed", email },
    });
  });

  test("the OpenAPI document describes both answers: a oneOf of the whole object and its receipt, whose fields are those answered", async () => {
    const doc = (await srv.api("GET", "/openapi.json", { key: null })).json;
    const schemaOf = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content["application/json"].schema;
    const refs = (schema: any) => schema.oneOf.map((s: any) => s.$ref.split("/").pop());
    // The erased shapes: a stored answer replayed after its contact was erased (docs/import-export.md §3).
    expect(refs(schemaOf("/contacts", "post", "201"))).toEqual(["Contact", "ContactReceipt", "ErasedContact", "ErasedContactReceipt"]);
    expect(refs(schemaOf("/contacts/{contactId}", "patch", "200"))).toEqual(["Contact", "ContactReceipt", "ErasedContact", "ErasedContactReceipt"]);
    expect(refs(schemaOf("/contacts/{contactId}/interactions", "post", "200"))).toEqual([
      "InteractionLog",
      "InteractionLogReceipt",
      "ErasedInteractionLog",
      "ErasedInteractionLogReceipt",
    ]);
    expect(refs(schemaOf("/contacts/{contactId}/interactions", "post", "201"))).toEqual(["InteractionLog", "ErasedInteractionLog"]);
    const receipt = doc.components.schemas.ContactReceipt;
    expect({ keys: Object.keys(receipt.properties).sort(), required: [...receipt.required].sort(), closed: receipt.additionalProperties }).toEqual({
      keys: CONTACT_RECEIPT,
      required: CONTACT_RECEIPT,
      closed: false,
    });
    const logReceipt = doc.components.schemas.InteractionLogReceipt;
    expect({ keys: Object.keys(logReceipt.properties).sort(), required: [...logReceipt.required].sort(), closed: logReceipt.additionalProperties }).toEqual({
      keys: LOG_RECEIPT,
      required: LOG_RECEIPT,
      closed: false,
    });
    expect(doc.paths["/contacts"].post.responses["201"].description).toContain("without contacts:read");
  });
});
