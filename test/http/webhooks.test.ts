/**
 * Webhooks, black box (interface §2.3, §3, §4.5, §6, §7, §8; decisions §2, §7, §12):
 * a sandbox server with a compressed retry schedule delivers to loopback receivers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import Stripe from "stripe";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";
import {
  distinct,
  parseServiceSignature,
  serviceSignatureIndex,
  standardSignatureIndex,
  startReceiver,
  type Receiver,
  type ReceivedRequest,
  type Reply,
  type Rule,
} from "../helpers/receiver.ts";
import { freePort, sleep, startServer, walk, type Api, type ServerHandle } from "../helpers/server.ts";

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(30_000);

const SCHEDULE = "1s,1s"; // k = 2 entries → 1 + 2 = 3 attempts (decisions §12)
const ATTEMPTS = 3;
const TIMEOUT_MS = 2000;

let srv: ServerHandle;
let api: Api;
const receivers: Receiver[] = [];
const scratchHooks: string[] = [];
const stripe = new Stripe("sk_test_x");

const SECRET_RE = /^whsec_[A-Za-z0-9+/]{43}=$/;
const WEBHOOK_KEYS = [
  "id",
  "url",
  "events",
  "description",
  "status",
  "consecutiveFailures",
  "lastSuccessAt",
  "lastFailureReason",
];

beforeAll(async () => {
  srv = await startServer({
    env: "sandbox",
    extraEnv: {
      CRM_WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
      CRM_OUTBOX_POLL_MS: "50",
      CRM_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
  api = srv.api;
}, 30_000);

afterEach(async () => {
  // Each test owns its subscriptions and receivers; nothing leaks into the next one.
  for (const id of scratchHooks.splice(0)) await api("DELETE", `/webhooks/${id}`);
  for (const r of receivers.splice(0)) await r.stop();
});

afterAll(async () => {
  await srv?.stop();
}, 30_000);

// ---------------------------------------------------------------- helpers

async function receiver(initial: Reply | Rule[] = {}, path = "/hook"): Promise<Receiver> {
  const r = await startReceiver(initial, path);
  receivers.push(r);
  return r;
}

async function createHook(url: string, events: string[] = ["*"], description?: string, call: Api = api) {
  const body: Record<string, unknown> = { url, events };
  if (description !== undefined) body.description = description;
  const res = await call("POST", "/webhooks", { body });
  expectStatus(res, 201);
  if (call === api) scratchHooks.push(res.json.id);
  return res.json as { id: string; secret: string; [k: string]: any };
}

async function getHook(id: string, call: Api = api) {
  const res = await call("GET", `/webhooks/${id}`);
  expectStatus(res, 200);
  return res.json;
}

async function waitForHook(id: string, pred: (h: any) => boolean, timeoutMs = 8000, what = "state") {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = await getHook(id);
    if (pred(last)) return last;
    await sleep(150);
  }
  throw new Error(`subscription ${id} never reached ${what}; last: ${JSON.stringify(last)}`);
}

/** Waits until `n` attempts of the subscription are recorded (its deliveries are no longer pending). */
async function waitForAttempts(id: string, n: number, timeoutMs = 8000) {
  const deadline = Date.now() + timeoutMs;
  let last: any[] = [];
  while (Date.now() < deadline) {
    last = (await api("GET", `/webhooks/${id}/attempts`, { query: { limit: 200 } })).json.data;
    if (last.length >= n) return last;
    await sleep(50);
  }
  throw new Error(`subscription ${id} has ${last.length} attempts recorded, not ${n}`);
}

let seq = 0;
async function newContact(extra: Record<string, unknown> = {}, call: Api = api) {
  const n = ++seq;
  const res = await call("POST", "/contacts", {
    body: { firstName: `Hook${n}`, lastName: "Tester", email: `hook${n}.${Date.now()}@example.com`, ...extra },
  });
  expectStatus(res, 201);
  return res.json;
}

/** Event ids of the project, oldest first, created at or after `since`. */
async function eventsSince(since: string, call: Api = api) {
  const { items } = await walk(call, "/events", { since, limit: 200 });
  return items;
}

function expectVerified(secret: string, req: ReceivedRequest) {
  expect(serviceSignatureIndex(secret, req), "own HMAC check of X-Service-Signature").toBeGreaterThanOrEqual(0);
  expect(standardSignatureIndex(secret, req), "own HMAC check of webhook-signature").toBeGreaterThanOrEqual(0);
}

const stdHeaders = (req: ReceivedRequest) => ({
  "webhook-id": req.headers["webhook-id"]!,
  "webhook-timestamp": req.headers["webhook-timestamp"]!,
  "webhook-signature": req.headers["webhook-signature"]!,
});

// ---------------------------------------------------------------- CRUD

describe("subscription CRUD", () => {
  test("POST /webhooks answers 201 with an active subscription and a whsec_ secret of 32 random bytes", async () => {
    const rx = await receiver();
    const res = await api("POST", "/webhooks", {
      body: { url: rx.url, events: ["contact.created", "contact.updated"], description: "crm sync" },
    });
    expectStatus(res, 201);
    scratchHooks.push(res.json.id);
    const w = res.json;
    for (const k of [...WEBHOOK_KEYS, "secret"]) expect(Object.keys(w), `missing ${k}`).toContain(k);
    expect(w.id).toMatch(/^wh_/);
    expect(w.url).toBe(rx.url);
    expect(w.events).toEqual(["contact.created", "contact.updated"]);
    expect(w.description).toBe("crm sync");
    expect(w.status).toBe("active");
    expect(w.consecutiveFailures).toBe(0);
    expect(w.lastSuccessAt).toBeNull();
    expect(w.lastFailureReason).toBeNull();
    expect(w.secret).toMatch(SECRET_RE);
    expect(Buffer.from(w.secret.slice("whsec_".length), "base64").length).toBe(32);

    const other = await createHook(rx.url);
    expect(other.secret).toMatch(SECRET_RE);
    expect(other.secret).not.toBe(w.secret);
    expect(other.id).not.toBe(w.id);
  });

  test("the secret is never shown again: not by GET, the list, PATCH, nor attempts", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    const answers = [
      await api("GET", `/webhooks/${w.id}`),
      await api("GET", "/webhooks", { query: { limit: 200 } }),
      await api("PATCH", `/webhooks/${w.id}`, { body: { description: "changed" } }),
      await api("GET", `/webhooks/${w.id}/attempts`),
    ];
    for (const res of answers) {
      expectStatus(res, 200);
      expect(res.text).not.toContain(w.secret);
      expect(res.text).not.toContain(w.secret.slice("whsec_".length, 30));
      expect(res.text).not.toContain("whsec_");
    }
    expect(answers[0]!.json.secret).toBeUndefined();
    expect(answers[2]!.json.secret).toBeUndefined();
    for (const item of answers[1]!.json.data) expect(item.secret).toBeUndefined();
  });

  test("GET /webhooks/{id} answers the subscription as created, without its secret", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url, ["interaction_log.created"], "one");
    const got = await getHook(w.id);
    const { secret: _secret, ...rest } = w;
    expect(got).toEqual(rest);
  });

  test("GET /webhooks answers the list envelope and pages through every subscription with limit and cursor", async () => {
    const rx = await receiver();
    const made = [await createHook(rx.url), await createHook(rx.url), await createHook(rx.url)];
    const first = await api("GET", "/webhooks", { query: { limit: 1 } });
    expectStatus(first, 200);
    expect(Object.keys(first.json).sort()).toEqual(["data", "pagination"]);
    expect(first.json.data).toHaveLength(1);
    expect(first.json.pagination.hasMore).toBe(true);
    expect(typeof first.json.pagination.nextCursor).toBe("string");
    const { items, pages } = await walk(api, "/webhooks", { limit: 1 });
    const ids = items.map((w) => w.id);
    expect(distinct(ids)).toHaveLength(ids.length);
    for (const m of made) expect(ids).toContain(m.id);
    const last = pages[pages.length - 1].pagination;
    expect(last).toEqual({ nextCursor: null, hasMore: false });
  });

  test("a replayed POST /webhooks with the same Idempotency-Key answers the same subscription and secret and creates one", async () => {
    const rx = await receiver();
    const key = await srv.newKey(["webhooks:manage"]);
    const body = { url: rx.url, events: ["contact.created"], description: `idem-${Date.now()}` };
    const headers = { "Idempotency-Key": `wh-${Date.now()}` };
    const first = await api("POST", "/webhooks", { body, headers, key });
    expectStatus(first, 201);
    scratchHooks.push(first.json.id);
    const again = await api("POST", "/webhooks", { body, headers, key });
    expectStatus(again, 201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(first.json.id);
    expect(again.json.secret).toBe(first.json.secret);
    const { items } = await walk(api, "/webhooks", { limit: 200 });
    expect(items.filter((w) => w.description === body.description)).toHaveLength(1);
  });

  test("PATCH /webhooks/{id} changes url, events and description and answers the subscription", async () => {
    const rx1 = await receiver();
    const rx2 = await receiver();
    const w = await createHook(rx1.url, ["contact.created"], "before");
    const res = await api("PATCH", `/webhooks/${w.id}`, {
      body: { url: rx2.url, events: ["contact.updated"], description: "after" },
    });
    expectStatus(res, 200);
    expect(res.json).toMatchObject({ id: w.id, url: rx2.url, events: ["contact.updated"], description: "after", status: "active" });
    expect(await getHook(w.id)).toMatchObject({ url: rx2.url, events: ["contact.updated"], description: "after" });
    // The change governs deliveries: a create goes nowhere, an update goes to the new url.
    const c = await newContact();
    const p = await api("PATCH", `/contacts/${c.contactId}`, { body: { notes: "patched" } });
    expectStatus(p, 200);
    const [req] = await rx2.waitFor(1);
    expect(req!.headers["x-service-event"]).toBe("contact.updated");
    await sleep(500);
    expect(rx1.requests).toHaveLength(0);
    expect(rx2.requests).toHaveLength(1);
  });

  const idRoutes: [string, string, unknown][] = [
    ["GET", "", undefined],
    ["PATCH", "", { description: "x" }],
    ["DELETE", "", undefined],
    ["POST", "/test", undefined],
    ["POST", "/rotate-secret", undefined],
    ["POST", "/redeliver", { since: "2020-01-01T00:00:00Z" }],
    ["GET", "/attempts", undefined],
  ];
  for (const [method, suffix, body] of idRoutes)
    test(`${method} /webhooks/{id}${suffix} answers 404 for an id that does not exist`, async () => {
      const res = await api(method, `/webhooks/wh_doesnotexist000000000${suffix}`, { body });
      expectError(res, "ERR_NOT_FOUND");
    });

  test("DELETE /webhooks/{id} answers 204 with no body; the subscription is then 404, gone from the list, and gets no deliveries", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    const del = await api("DELETE", `/webhooks/${w.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expectError(await api("GET", `/webhooks/${w.id}`), "ERR_NOT_FOUND");
    expectError(await api("DELETE", `/webhooks/${w.id}`), "ERR_NOT_FOUND");
    expectError(await api("GET", `/webhooks/${w.id}/attempts`), "ERR_NOT_FOUND");
    const { items } = await walk(api, "/webhooks", { limit: 200 });
    expect(items.map((x) => x.id)).not.toContain(w.id);
    await newContact();
    await sleep(700);
    expect(rx.requests).toHaveLength(0);
  });

  test("DELETE stops the retries of a subscription's pending deliveries", async () => {
    const rx = await receiver({ status: 500 });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(1);
    expect((await api("DELETE", `/webhooks/${w.id}`)).status).toBe(204);
    await sleep(1800); // past the schedule's first 1 s step
    expect(rx.requests).toHaveLength(1);
  });
});

describe("subscription validation (422 with fieldName)", () => {
  const good = () => ({ url: "http://127.0.0.1:9/hook", events: ["contact.created"] });
  const cases: [string, Record<string, unknown>, string | RegExp][] = [
    ["a url that is not a URL", { url: "not a url" }, "url"],
    ["an empty url", { url: "" }, "url"],
    ["a url that is not a string", { url: 42 }, "url"],
    ["an ftp:// url", { url: "ftp://example.com/hook" }, "url"],
    ["a javascript: url", { url: "javascript:alert(1)" }, "url"],
    ["an event outside the catalog", { events: ["contact.deleted"] }, /^events(\.\d+)?$/],
    ["a misspelt event name", { events: ["Contact.Created"] }, /^events(\.\d+)?$/],
    ['"*" mixed with an event name', { events: ["*", "contact.created"] }, /^events(\.\d+)?$/],
    ["an empty events array", { events: [] }, "events"],
    ["events given as a string", { events: "contact.created" }, "events"],
    ["an unknown body field", { colour: "blue" }, "colour"],
    ["a client-chosen secret (unknown field)", { secret: "whsec_mine" }, "secret"],
    ["a description that is not a string", { description: 7 }, "description"],
  ];
  for (const [name, patch, field] of cases)
    test(`POST /webhooks refuses ${name}`, async () => {
      const before = (await walk(api, "/webhooks", { limit: 200 })).items.length;
      const res = await api("POST", "/webhooks", { body: { ...good(), ...patch } });
      expectError(res, "ERR_FORM_VALIDATION", field);
      expect((await walk(api, "/webhooks", { limit: 200 })).items.length).toBe(before);
    });

  test("POST /webhooks without url or without events is refused naming the missing field", async () => {
    expectError(await api("POST", "/webhooks", { body: { events: ["*"] } }), "ERR_FORM_VALIDATION", "url");
    expectError(await api("POST", "/webhooks", { body: { url: good().url } }), "ERR_FORM_VALIDATION", "events");
  });

  const patchCases: [string, Record<string, unknown>, string | RegExp][] = [
    ["a status outside active/disabled", { status: "paused" }, "status"],
    ["an event outside the catalog", { events: ["nope"] }, /^events(\.\d+)?$/],
    ['"*" mixed with an event name', { events: ["contact.updated", "*"] }, /^events(\.\d+)?$/],
    ["a bad url", { url: "::::" }, "url"],
    ["an unknown field", { secret: "whsec_x" }, "secret"],
    ["a change of consecutiveFailures (read-only)", { consecutiveFailures: 0 }, "consecutiveFailures"],
  ];
  for (const [name, body, field] of patchCases)
    test(`PATCH /webhooks/{id} refuses ${name} and changes nothing`, async () => {
      const rx = await receiver();
      const w = await createHook(rx.url, ["contact.created"], "keep");
      const res = await api("PATCH", `/webhooks/${w.id}`, { body });
      expectError(res, "ERR_FORM_VALIDATION", field);
      expect(await getHook(w.id)).toMatchObject({ url: rx.url, events: ["contact.created"], description: "keep", status: "active" });
    });
});

// ---------------------------------------------------------------- payloads

describe("event payloads", () => {
  test("contact.created arrives as a JSON POST whose envelope is complete and whose data.contact equals the API's answer", async () => {
    const rx = await receiver({}, "/in/crm?source=test");
    const w = await createHook(rx.url, ["contact.created"]);
    const c = await newContact({ phone: "+14155550100", tags: ["vip"] });
    const [req] = await rx.waitFor(1);
    expect(req!.method).toBe("POST");
    expect(req!.path).toBe("/in/crm?source=test");
    expect(req!.headers["content-type"]).toMatch(/^application\/json/);
    expect(req!.headers["x-service-event"]).toBe("contact.created");
    const deliveryId = req!.headers["x-service-delivery"];
    expect(deliveryId && deliveryId.length).toBeGreaterThan(0);
    expect(req!.headers["webhook-id"]).toBe(deliveryId!);
    const sig = parseServiceSignature(req!.headers["x-service-signature"]);
    expect(req!.headers["webhook-timestamp"]).toBe(String(sig.t));
    const body = req!.json;
    expect(Object.keys(body).sort()).toEqual(["apiVersion", "createdAt", "data", "event", "id", "projectId"]);
    expect(body.id).toMatch(/^evt_/);
    expect(body.event).toBe("contact.created");
    expect(body.apiVersion).toBe("v1");
    expect(body.projectId).toBe(srv.projectId);
    expect(body.createdAt).toMatch(ISO_RE);
    expect(body.data).toEqual({ contact: c });
    expect(body.data.contact.duplicateSignal).toBeUndefined();
    expectVerified(w.secret, req!);
  });

  test("contact.updated carries the contact as PATCH answered it, changedFields, and previousContactId on a relabel", async () => {
    const rx = await receiver();
    await createHook(rx.url, ["contact.updated"]);
    const c = await newContact();
    const p1 = await api("PATCH", `/contacts/${c.contactId}`, { body: { notes: "first note", phone: "+14155550101" } });
    expectStatus(p1, 200);
    const [r1] = await rx.waitFor(1);
    expect(r1!.headers["x-service-event"]).toBe("contact.updated");
    expect(r1!.json.event).toBe("contact.updated");
    expect(r1!.json.data.contact).toEqual(p1.json);
    expect([...r1!.json.data.changedFields].sort()).toEqual(["notes", "phone"]);
    expect(r1!.json.data.previousContactId).toBeUndefined();

    const newId = `CR-${900000 + Math.floor(Math.random() * 90000)}`;
    const p2 = await api("PATCH", `/contacts/${c.contactId}`, { body: { contactId: newId } });
    expectStatus(p2, 200);
    const reqs = await rx.waitFor(2);
    const r2 = reqs.find((r) => r.json.data.contact.contactId === newId)!;
    expect(r2).toBeDefined();
    expect(r2.json.data.contact).toEqual(p2.json);
    expect(r2.json.data.changedFields).toContain("contactId");
    expect(r2.json.data.previousContactId).toBe(c.contactId);
  });

  test("interaction_log.created carries the log as the API answered it and a contact summary", async () => {
    const rx = await receiver();
    await createHook(rx.url, ["interaction_log.created"]);
    const c = await newContact({ firstName: "Ida", lastName: "Log" });
    const il = await api("POST", `/contacts/${c.contactId}/interactions`, {
      body: { type: "note", note: "called back", fields: { outcome: "ok" } },
    });
    expectStatus(il, 201);
    const [req] = await rx.waitFor(1);
    expect(req!.headers["x-service-event"]).toBe("interaction_log.created");
    expect(req!.json.event).toBe("interaction_log.created");
    expect(req!.json.data).toEqual({
      interactionLog: il.json,
      contact: { contactId: c.contactId, firstName: "Ida", lastName: "Log", email: c.email },
    });
  });

  test("a subscription receives only the events it lists; [\"*\"] receives every event; a no-op PATCH sends nothing", async () => {
    const onlyUpdates = await receiver();
    const onlyLogs = await receiver();
    const all = await receiver();
    await createHook(onlyUpdates.url, ["contact.updated"]);
    await createHook(onlyLogs.url, ["interaction_log.created"]);
    await createHook(all.url, ["*"]);
    const c = await newContact();
    expectStatus(await api("PATCH", `/contacts/${c.contactId}`, { body: { notes: "x" } }), 200);
    expectStatus(await api("PATCH", `/contacts/${c.contactId}`, { body: { notes: "x" } }), 200); // no change: no event
    expectStatus(await api("POST", `/contacts/${c.contactId}/interactions`, { body: { type: "note", note: "n" } }), 201);
    await all.waitFor(3);
    await onlyUpdates.waitFor(1);
    await onlyLogs.waitFor(1);
    await sleep(600);
    expect(all.requests.map((r) => r.headers["x-service-event"]).sort()).toEqual([
      "contact.created",
      "contact.updated",
      "interaction_log.created",
    ]);
    expect(onlyUpdates.requests.map((r) => r.headers["x-service-event"])).toEqual(["contact.updated"]);
    expect(onlyLogs.requests.map((r) => r.headers["x-service-event"])).toEqual(["interaction_log.created"]);
    // One event, two subscriptions: same event id, a different delivery id each.
    const a = all.requests.find((r) => r.json.event === "contact.updated")!;
    const b = onlyUpdates.requests[0]!;
    expect(a.json.id).toBe(b.json.id);
    expect(a.headers["x-service-delivery"]).not.toBe(b.headers["x-service-delivery"]);
  });

  test("the delivered envelope is the same event GET /events lists", async () => {
    const rx = await receiver();
    await createHook(rx.url, ["contact.created"]);
    const since = new Date().toISOString();
    await newContact();
    const [req] = await rx.waitFor(1);
    const listed = (await eventsSince(since)).find((e) => e.id === req!.json.id);
    expect(listed).toEqual(req!.json);
  });
});

// ---------------------------------------------------------------- signatures

describe("signatures", () => {
  test("X-Service-Signature is our own HMAC-SHA256 of '<t>.<raw body>' keyed with the whole whsec_ secret, t within 300 s", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    await newContact();
    const [req] = await rx.waitFor(1);
    const sig = parseServiceSignature(req!.headers["x-service-signature"]);
    expect(Math.abs(Date.now() / 1000 - sig.t)).toBeLessThanOrEqual(300);
    expect(sig.v1).toHaveLength(1);
    expect(sig.v1[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(serviceSignatureIndex(w.secret, req!)).toBe(0);
    // Keyed with the whole string: the base64 part alone, or its decoded bytes, do not produce it.
    expect(serviceSignatureIndex(w.secret.slice("whsec_".length), req!)).toBe(-1);
  });

  test("the signature fails for a tampered body, another secret or another t (the check can fail)", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    const other = await createHook(rx.url, ["interaction_log.created"]);
    await newContact();
    const [req] = await rx.waitFor(1);
    const tampered = { ...req!, raw: new TextEncoder().encode(req!.text.replace("Hook", "Hack")) };
    expect(serviceSignatureIndex(w.secret, tampered)).toBe(-1);
    expect(standardSignatureIndex(w.secret, tampered)).toBe(-1);
    expect(serviceSignatureIndex(other.secret, req!)).toBe(-1);
    expect(standardSignatureIndex(other.secret, req!)).toBe(-1);
    const sig = parseServiceSignature(req!.headers["x-service-signature"]);
    const shifted = { ...req!, headers: { ...req!.headers, "x-service-signature": `t=${sig.t + 1},v1=${sig.v1[0]}` } };
    expect(serviceSignatureIndex(w.secret, shifted)).toBe(-1);
    await expect(stripe.webhooks.constructEventAsync(tampered.raw, req!.headers["x-service-signature"]!, w.secret)).rejects.toThrow();
    expect(() => new StandardWebhook(other.secret).verify(req!.text, stdHeaders(req!))).toThrow();
  });

  test("the official stripe package verifies X-Service-Signature over the raw bytes", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    await newContact();
    const [req] = await rx.waitFor(1);
    const event: any = await stripe.webhooks.constructEventAsync(req!.raw, req!.headers["x-service-signature"]!, w.secret);
    expect(event.id).toBe(req!.json.id);
    expect(event.event).toBe("contact.created");
  });

  test("the standardwebhooks package verifies webhook-id / webhook-timestamp / webhook-signature with the whsec_ secret", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    await newContact();
    const [req] = await rx.waitFor(1);
    expect(req!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload: any = new StandardWebhook(w.secret).verify(req!.text, stdHeaders(req!));
    expect(payload.id).toBe(req!.json.id);
    expect(standardSignatureIndex(w.secret, req!)).toBe(0);
  });

  test("after rotate-secret, deliveries carry two signatures, the new one first, and both secrets verify", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    const rot = await api("POST", `/webhooks/${w.id}/rotate-secret`);
    expectStatus(rot, 200);
    const fresh = rot.json.secret;
    expect(fresh).toMatch(SECRET_RE);
    expect(fresh).not.toBe(w.secret);
    expect(rot.json.id).toBe(w.id);
    const got = await api("GET", `/webhooks/${w.id}`);
    expect(got.text).not.toContain(fresh);
    expect(got.json.secret).toBeUndefined();

    await newContact();
    const [req] = await rx.waitFor(1);
    const sig = parseServiceSignature(req!.headers["x-service-signature"]);
    expect(sig.v1).toHaveLength(2);
    expect(serviceSignatureIndex(fresh, req!)).toBe(0);
    expect(serviceSignatureIndex(w.secret, req!)).toBe(1);
    expect(req!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(standardSignatureIndex(fresh, req!)).toBe(0);
    expect(standardSignatureIndex(w.secret, req!)).toBe(1);
    for (const secret of [fresh, w.secret]) {
      const e: any = await stripe.webhooks.constructEventAsync(req!.raw, req!.headers["x-service-signature"]!, secret);
      expect(e.id).toBe(req!.json.id);
      expect((new StandardWebhook(secret).verify(req!.text, stdHeaders(req!)) as any).id).toBe(req!.json.id);
    }
  });
});

// ---------------------------------------------------------------- retries and failures

describe("retries and failures", () => {
  test("a retry after a 500 sends the identical body bytes with the same delivery id, signed with its own t", async () => {
    const rx = await receiver();
    await rx.script([{ status: 500, body: "boom" }], { status: 200 });
    const w = await createHook(rx.url);
    await newContact();
    const [a, b] = await rx.waitFor(2, 8000);
    expect(Buffer.from(b!.raw).equals(Buffer.from(a!.raw))).toBe(true);
    expect(b!.headers["x-service-delivery"]).toBe(a!.headers["x-service-delivery"]!);
    expect(b!.headers["webhook-id"]).toBe(a!.headers["webhook-id"]!);
    expect(b!.json.id).toBe(a!.json.id);
    expectVerified(w.secret, a!);
    expectVerified(w.secret, b!);
    await stripe.webhooks.constructEventAsync(b!.raw, b!.headers["x-service-signature"]!, w.secret);
    // The retry waited for the schedule's first step (1 s, ±10 %).
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(850);
    await sleep(1500);
    expect(rx.requests).toHaveLength(2); // acknowledged: no further attempt
  });

  test("a success after failures resets consecutiveFailures to 0 and sets lastSuccessAt", async () => {
    const rx = await receiver();
    await rx.script([{ status: 502 }], { status: 204 });
    const w = await createHook(rx.url);
    await newContact();
    await rx.waitFor(1);
    const failing = await waitForHook(w.id, (h) => h.consecutiveFailures > 0, 4000, "a failure count");
    expect(typeof failing.lastFailureReason).toBe("string");
    await rx.waitFor(2, 6000);
    const ok = await waitForHook(w.id, (h) => h.lastSuccessAt !== null, 4000, "lastSuccessAt");
    expect(ok.consecutiveFailures).toBe(0);
    expect(ok.status).toBe("active");
    expect(ok.lastSuccessAt).toMatch(ISO_RE);
  });

  test("a 3xx answer is a failed attempt and its Location is not followed", async () => {
    const target = await receiver();
    const rx = await receiver();
    await rx.script([{ status: 302, headers: { Location: target.url } }], { status: 200 });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(2, 8000); // retried, so the 302 counted as a failure
    await waitForHook(w.id, (h) => h.lastSuccessAt !== null, 4000, "lastSuccessAt"); // the 200 is recorded
    expect(target.requests).toHaveLength(0);
    const attempts = (await api("GET", `/webhooks/${w.id}/attempts`)).json.data;
    expect(attempts.map((a: any) => a.statusCode)).toEqual([200, 302]);
  });

  test("an answer slower than the attempt timeout is a failed attempt with no status code and an error", async () => {
    const rx = await receiver();
    await rx.script([{ status: 200, delayMs: TIMEOUT_MS + 1500 }], { status: 200 });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(2, 10_000);
    await waitForHook(w.id, (h) => h.lastSuccessAt !== null, 4000, "lastSuccessAt");
    const attempts = (await api("GET", `/webhooks/${w.id}/attempts`)).json.data;
    expect(attempts).toHaveLength(2);
    expect(attempts[1].attempt).toBe(1);
    expect(attempts[1].statusCode).toBeNull();
    expect(typeof attempts[1].error).toBe("string");
    expect(attempts[1].error.length).toBeGreaterThan(0);
    expect(attempts[0].statusCode).toBe(200);
  });

  test("a 429 with Retry-After delays the next attempt at least that long", async () => {
    const rx = await receiver();
    await rx.script([{ status: 429, retryAfter: 2 }], { status: 200 });
    await createHook(rx.url, ["contact.created"]);
    await newContact();
    const [a, b] = await rx.waitFor(2, 10_000);
    // The schedule alone would retry after ~1 s; Retry-After: 2 asks for 2 s.
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(1950);
    expect(b!.headers["x-service-delivery"]).toBe(a!.headers["x-service-delivery"]!);
  });

  test("a 429's Retry-After of 3 s on a 1 s schedule step is honoured in full (decisions §7: at least Retry-After)", async () => {
    const rx = await receiver();
    await rx.script([{ status: 429, retryAfter: 3 }], { status: 200 });
    await createHook(rx.url, ["contact.created"]);
    await newContact();
    const [a, b] = await rx.waitFor(2, 10_000);
    // Twice the step would be 2 s; the full Retry-After is 3 s.
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(2950);
  });

  test(`a delivery that fails all ${ATTEMPTS} attempts (1 + k schedule entries) disables the subscription with consecutiveFailures and lastFailureReason`, async () => {
    const rx = await receiver({ status: 500, body: "down" });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(ATTEMPTS, 8000);
    const h = await waitForHook(w.id, (x) => x.status === "disabled", 5000, "disabled");
    expect(h.consecutiveFailures).toBeGreaterThan(0);
    expect(typeof h.lastFailureReason).toBe("string");
    expect(h.lastFailureReason.length).toBeGreaterThan(0);
    await sleep(1800);
    expect(rx.requests).toHaveLength(ATTEMPTS);
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(1);
  });

  test("an exhausted delivery does not disable the subscription when another delivery succeeded meanwhile", async () => {
    const rx = await receiver([{ when: { bodyIncludes: "FailMe" }, reply: { status: 500 } }, { reply: { status: 200 } }]);
    const w = await createHook(rx.url, ["contact.created"]);
    const doomed = await newContact({ firstName: "FailMe" });
    await rx.waitFor(1);
    await sleep(300);
    await newContact({ firstName: "Fine" }); // succeeds while the first one is still being retried
    await rx.waitUntil(
      (reqs) => reqs.filter((r) => r.json?.data?.contact?.contactId === doomed.contactId).length >= ATTEMPTS,
      8000,
      `${ATTEMPTS} attempts of the failing event`,
    );
    await sleep(800);
    const h = await getHook(w.id);
    expect(h.status).toBe("active");
    expect(h.lastSuccessAt).not.toBeNull();
  });

  test("a 410 Gone disables the subscription at once, without retries", async () => {
    const rx = await receiver({ status: 410, body: "gone" });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(1);
    const h = await waitForHook(w.id, (x) => x.status === "disabled", 3000, "disabled");
    expect(h.consecutiveFailures).toBeGreaterThan(0);
    expect(typeof h.lastFailureReason).toBe("string");
    await newContact();
    await sleep(2200); // longer than the schedule's first step
    expect(rx.requests).toHaveLength(1);
  });

  test("events fired while disabled are not delivered but stay in GET /events; PATCH status active resets consecutiveFailures and deliveries resume", async () => {
    const rx = await receiver();
    await rx.script([{ status: 410 }], { status: 200 });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(1);
    await waitForHook(w.id, (x) => x.status === "disabled", 3000, "disabled");

    const since = new Date().toISOString();
    const missed = await newContact();
    await sleep(800);
    expect(rx.requests).toHaveLength(1);
    const listed = await eventsSince(since);
    const missedEvent = listed.find((e) => e.event === "contact.created" && e.data.contact.contactId === missed.contactId);
    expect(missedEvent).toBeDefined();

    const res = await api("PATCH", `/webhooks/${w.id}`, { body: { status: "active" } });
    expectStatus(res, 200);
    expect(res.json.status).toBe("active");
    expect(res.json.consecutiveFailures).toBe(0);
    expect((await getHook(w.id)).consecutiveFailures).toBe(0);

    const after = await newContact();
    await rx.waitFor(2);
    await sleep(600);
    // Only the new event: the one fired while disabled was never queued.
    expect(rx.requests).toHaveLength(2);
    expect(rx.requests[1]!.json.data.contact.contactId).toBe(after.contactId);
  });

  test("the test ping (POST /webhooks/{id}/test) to a 200 receiver answers delivered true and sends a signed ping event", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"]);
    const res = await api("POST", `/webhooks/${w.id}/test`);
    expectStatus(res, 200);
    expect(res.json).toEqual({ delivered: true, statusCode: 200, error: null });
    expect(rx.requests).toHaveLength(1); // sent at once, before the answer
    const req = rx.requests[0]!;
    expect(req.headers["x-service-event"]).toBe("ping");
    expect(req.json.event).toBe("ping");
    expect(req.json.apiVersion).toBe("v1");
    expect(req.json.projectId).toBe(srv.projectId);
    expect(req.json.data.webhookId).toBe(w.id);
    expect(typeof req.json.data.message).toBe("string");
    expectVerified(w.secret, req);
    await stripe.webhooks.constructEventAsync(req.raw, req.headers["x-service-signature"]!, w.secret);
    new StandardWebhook(w.secret).verify(req.text, stdHeaders(req));
  });

  test("the test ping to a 500 receiver answers delivered false with the status and an error, and is not retried", async () => {
    const rx = await receiver({ status: 500, body: "nope" });
    const w = await createHook(rx.url, ["contact.created"]);
    const res = await api("POST", `/webhooks/${w.id}/test`);
    expectStatus(res, 200);
    expect(res.json.delivered).toBe(false);
    expect(res.json.statusCode).toBe(500);
    expect(typeof res.json.error).toBe("string");
    expect(res.json.error.length).toBeGreaterThan(0);
    await sleep(1500);
    expect(rx.requests).toHaveLength(1);
    // A ping is outside the subscription's schedule: it does not count as a failed delivery.
    const h = await getHook(w.id);
    expect(h.status).toBe("active");
  });

  test("the test ping to an endpoint that refuses connections answers delivered false, statusCode null and an error", async () => {
    const port = freePort();
    const w = await createHook(`http://127.0.0.1:${port}/hook`, ["contact.created"]);
    const res = await api("POST", `/webhooks/${w.id}/test`);
    expectStatus(res, 200);
    expect(res.json.delivered).toBe(false);
    expect(res.json.statusCode).toBeNull();
    expect(typeof res.json.error).toBe("string");
  });
});

// ---------------------------------------------------------------- redeliver, attempts, events

describe("redeliver", () => {
  test("redeliver by eventIds answers 202 {queued} and re-sends the same event id with a new delivery id", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await newContact();
    const first = await rx.waitFor(2);
    const ids = first.map((r) => r.json.id);
    // Recorded, so no longer pending: a pending event is not queued twice (decisions §16).
    await waitForAttempts(w.id, 2);
    const res = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: ids } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ queued: 2 });
    const all = await rx.waitFor(4);
    for (const id of ids) {
      const got = rx.forEvent(id);
      expect(got).toHaveLength(2);
      expect(got[1]!.text).toBe(got[0]!.text);
      expect(got[1]!.headers["x-service-delivery"]).not.toBe(got[0]!.headers["x-service-delivery"]!);
      expectVerified(w.secret, got[1]!);
    }
    expect(distinct(all.map((r) => r.headers["x-service-delivery"]))).toHaveLength(4);
  });

  test("redeliver by since and until queues the events of that window only", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url, ["*"]);
    const since = new Date().toISOString();
    await sleep(5);
    await newContact();
    await newContact();
    await sleep(30);
    const until = new Date().toISOString();
    await sleep(30);
    await newContact();
    const first = await rx.waitFor(3);
    const byCreation = [...first].sort((a, b) => a.json.createdAt.localeCompare(b.json.createdAt));
    await waitForAttempts(w.id, 3);

    const windowed = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { since, until } });
    expect(windowed.status).toBe(202);
    expect(windowed.json).toEqual({ queued: 2 });
    await rx.waitFor(5);
    await waitForAttempts(w.id, 5);
    expect(rx.requests).toHaveLength(5);
    const again = rx.requests.slice(3).map((r) => r.json.id).sort();
    expect(again).toEqual(byCreation.slice(0, 2).map((r) => r.json.id).sort());

    const open = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { since } });
    expect(open.status).toBe(202);
    expect(open.json).toEqual({ queued: 3 });
    await rx.waitFor(8);
    expect(distinct(rx.requests.map((r) => r.json.id))).toHaveLength(3);
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(8);
  });

  test("redeliver can bring a disabled subscription's missed events once it is active again", async () => {
    const rx = await receiver({ status: 200 });
    const w = await createHook(rx.url, ["contact.created"]);
    expectStatus(await api("PATCH", `/webhooks/${w.id}`, { body: { status: "disabled" } }), 200);
    const since = new Date().toISOString();
    const missed = await newContact();
    await sleep(500);
    expect(rx.requests).toHaveLength(0);
    const ev = (await eventsSince(since)).find((e) => e.data?.contact?.contactId === missed.contactId);
    expect(ev).toBeDefined();
    expectStatus(await api("PATCH", `/webhooks/${w.id}`, { body: { status: "active" } }), 200);
    const res = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: [ev.id] } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ queued: 1 });
    const [req] = await rx.waitFor(1);
    expect(req!.json).toEqual(ev);
  });

  test("redeliver refuses a body with neither eventIds nor since, and a since that is not a time (422)", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    const none = await api("POST", `/webhooks/${w.id}/redeliver`, { body: {} });
    expectError(none, "ERR_FORM_VALIDATION", undefined, { anyFieldName: true });
    const bad = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { since: "last tuesday" } });
    expectError(bad, "ERR_FORM_VALIDATION", "since");
    const unknown = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: ["evt_doesnotexist"] } });
    expect([404, 422]).toContain(unknown.status);
    await sleep(300);
    expect(rx.requests).toHaveLength(0);
  });
});

describe("delivery attempts", () => {
  test("GET /webhooks/{id}/attempts lists attempts newest first with statusCode, error, durationMs and at most 1 KiB of the answer", async () => {
    const long = "x".repeat(600) + "y".repeat(3000);
    const rx = await receiver();
    await rx.script([{ status: 503, body: long }], { status: 200, body: "thanks" });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    const [req] = await rx.waitFor(2, 8000);
    await waitForHook(w.id, (h) => h.lastSuccessAt !== null, 4000, "lastSuccessAt");
    const res = await api("GET", `/webhooks/${w.id}/attempts`);
    expectStatus(res, 200);
    expect(Object.keys(res.json).sort()).toEqual(["data", "pagination"]);
    const [ok, failed] = res.json.data;
    expect(res.json.data).toHaveLength(2);
    for (const a of [ok, failed]) {
      expect(Object.keys(a).sort()).toEqual(
        ["at", "attempt", "deliveryId", "durationMs", "error", "eventId", "id", "responseSnippet", "statusCode"].sort(),
      );
      expect(a.eventId).toBe(req!.json.id);
      expect(a.deliveryId).toBe(req!.headers["x-service-delivery"]!);
      expect(a.at).toMatch(ISO_RE);
      expect(Number.isInteger(a.durationMs)).toBe(true);
      expect(a.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(ok.attempt).toBe(2);
    expect(ok.statusCode).toBe(200);
    expect(ok.error).toBeNull();
    expect(ok.responseSnippet).toBe("thanks");
    expect(failed.attempt).toBe(1);
    expect(failed.statusCode).toBe(503);
    expect(typeof failed.error).toBe("string");
    expect(Buffer.byteLength(failed.responseSnippet)).toBeLessThanOrEqual(1024);
    expect(failed.responseSnippet.length).toBeGreaterThan(0);
    expect(long.startsWith(failed.responseSnippet)).toBe(true);
    expect(Date.parse(ok.at)).toBeGreaterThanOrEqual(Date.parse(failed.at));

    const page = await api("GET", `/webhooks/${w.id}/attempts`, { query: { limit: 1 } });
    expect(page.json.data).toEqual([ok]);
    expect(page.json.pagination.hasMore).toBe(true);
    const next = await api("GET", `/webhooks/${w.id}/attempts`, { query: { limit: 1, cursor: page.json.pagination.nextCursor } });
    expect(next.json.data).toEqual([failed]);
    expect(next.json.pagination).toEqual({ nextCursor: null, hasMore: false });
  });
});

describe("GET /events", () => {
  test("lists the project's events from since, oldest first, in the list envelope, with cursor pagination", async () => {
    const since = new Date().toISOString();
    await sleep(5);
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await newContact());
      await sleep(3);
    }
    const first = await api("GET", "/events", { query: { since, limit: 2 } });
    expectStatus(first, 200);
    expect(Object.keys(first.json).sort()).toEqual(["data", "pagination"]);
    expect(first.json.data).toHaveLength(2);
    expect(first.json.pagination.hasMore).toBe(true);
    const { items, pages } = await walk(api, "/events", { since, limit: 2 });
    expect(pages.map((p) => p.data.length)).toEqual([2, 2, 1]);
    expect(pages[2].pagination).toEqual({ nextCursor: null, hasMore: false });
    expect(items.map((e) => e.data.contact.contactId)).toEqual(made.map((c) => c.contactId));
    for (const e of items) {
      expect(Object.keys(e).sort()).toEqual(["apiVersion", "createdAt", "data", "event", "id", "projectId"]);
      expect(e.id).toMatch(/^evt_/);
      expect(e.event).toBe("contact.created");
      expect(e.projectId).toBe(srv.projectId);
      expect(Date.parse(e.createdAt)).toBeGreaterThanOrEqual(Date.parse(since));
    }
    const times = items.map((e) => Date.parse(e.createdAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  test("refuses a since that is not a time and a limit outside 1–200 (422 naming the parameter)", async () => {
    expectError(await api("GET", "/events", { query: { since: "yesterday" } }), "ERR_FORM_VALIDATION", "since");
    expectError(await api("GET", "/events", { query: { limit: 0 } }), "ERR_FORM_VALIDATION", "limit");
    expectError(await api("GET", "/events", { query: { limit: 201 } }), "ERR_FORM_VALIDATION", "limit");
  });
});

// ---------------------------------------------------------------- tenancy and scopes

describe("tenant isolation", () => {
  test("project B sees none of project A's subscriptions: its list lacks them and every route on A's id is 404", async () => {
    const b = await srv.newProject();
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"], "tenant A");
    const list = await walk(b.api, "/webhooks", { limit: 200 });
    expect(list.items.map((x) => x.id)).not.toContain(w.id);
    expect(list.items).toEqual([]);
    const routes: [string, string, unknown][] = [
      ["GET", "", undefined],
      ["PATCH", "", { description: "hijack" }],
      ["POST", "/test", undefined],
      ["POST", "/rotate-secret", undefined],
      ["POST", "/redeliver", { since: "2020-01-01T00:00:00Z" }],
      ["GET", "/attempts", undefined],
      ["DELETE", "", undefined],
    ];
    for (const [method, suffix, body] of routes) {
      const res = await b.api(method, `/webhooks/${w.id}${suffix}`, { body });
      expect(`${method} ${suffix} → ${res.status}`).toBe(`${method} ${suffix} → 404`);
      expectError(res, "ERR_NOT_FOUND");
    }
    expect(rx.requests).toHaveLength(0); // B's /test sent nothing to A's endpoint
    expect(await getHook(w.id)).toMatchObject({ description: "tenant A", status: "active" });
    // A's secret still signs: B's rotate-secret did nothing.
    await newContact();
    const [req] = await rx.waitFor(1);
    expect(serviceSignatureIndex(w.secret, req!)).toBe(0);
    expect(parseServiceSignature(req!.headers["x-service-signature"]).v1).toHaveLength(1);
  });

  test("events stay in their project: B's GET /events lists none of A's events, A's subscription gets none of B's, and B cannot redeliver them", async () => {
    const b = await srv.newProject();
    const rxA = await receiver();
    const rxB = await receiver();
    const wA = await createHook(rxA.url, ["*"]);
    const wB = await createHook(rxB.url, ["*"], undefined, b.api);
    const since = new Date(Date.now() - 60_000).toISOString();
    await newContact();
    await newContact({}, b.api);
    const [fromA] = await rxA.waitFor(1);
    const [fromB] = await rxB.waitFor(1);
    await sleep(500);
    expect(rxA.requests).toHaveLength(1);
    expect(rxB.requests).toHaveLength(1);
    expect(fromA!.json.projectId).toBe(srv.projectId);
    expect(fromB!.json.projectId).toBe(b.id);

    const bEvents = await eventsSince(since, b.api);
    expect(bEvents.map((e) => e.id)).toContain(fromB!.json.id);
    expect(bEvents.map((e) => e.id)).not.toContain(fromA!.json.id);
    for (const e of bEvents) expect(e.projectId).toBe(b.id);

    const aEvents = await eventsSince(since);
    expect(aEvents.map((e) => e.id)).not.toContain(fromB!.json.id);

    const attemptsB = await b.api("GET", `/webhooks/${wB.id}/attempts`);
    expect(attemptsB.json.data.map((a: any) => a.eventId)).toEqual([fromB!.json.id]);
    const attemptsA = await api("GET", `/webhooks/${wA.id}/attempts`);
    expect(attemptsA.json.data.map((a: any) => a.eventId)).not.toContain(fromB!.json.id);

    // B asks its own subscription to redeliver A's event: nothing is queued.
    const steal = await b.api("POST", `/webhooks/${wB.id}/redeliver`, { body: { eventIds: [fromA!.json.id] } });
    expect([404, 422]).toContain(steal.status);
    await sleep(500);
    expect(rxB.requests.map((r) => r.json.id)).not.toContain(fromA!.json.id);
    await b.api("DELETE", `/webhooks/${wB.id}`);
  });
});

describe("scopes", () => {
  const routes: [string, string, unknown][] = [
    ["GET", "/webhooks", undefined],
    ["POST", "/webhooks", { url: "http://127.0.0.1:9/hook", events: ["*"] }],
    ["GET", "/webhooks/:id", undefined],
    ["PATCH", "/webhooks/:id", { description: "no scope" }],
    ["DELETE", "/webhooks/:id", undefined],
    ["POST", "/webhooks/:id/test", undefined],
    ["POST", "/webhooks/:id/rotate-secret", undefined],
    ["POST", "/webhooks/:id/redeliver", { since: "2020-01-01T00:00:00Z" }],
    ["GET", "/webhooks/:id/attempts", undefined],
    ["GET", "/events", undefined],
  ];
  let limitedKey: string;
  let managerKey: string;
  beforeAll(async () => {
    limitedKey = await srv.newKey(["contacts:read", "contacts:write", "interactions:write"]);
    managerKey = await srv.newKey(["webhooks:manage"]);
  });

  for (const [method, path, body] of routes)
    test(`${method} ${path} with a key lacking webhooks:manage is 403 naming the scope, and changes nothing`, async () => {
      const rx = await receiver();
      const w = await createHook(rx.url, ["contact.created"], "untouched");
      const res = await api(method, path.replace(":id", w.id), { body, key: limitedKey });
      expectError(res, "ERR_FORBIDDEN");
      expect(res.json.message).toContain("webhooks:manage");
      expect(res.text).not.toContain("whsec_");
      expect(await getHook(w.id)).toMatchObject({ description: "untouched", status: "active" });
      expect(rx.requests).toHaveLength(0);
    });

  test("a key with only webhooks:manage may use the webhook routes and GET /events", async () => {
    const rx = await receiver();
    const res = await api("POST", "/webhooks", { body: { url: rx.url, events: ["*"] }, key: managerKey });
    expectStatus(res, 201);
    scratchHooks.push(res.json.id);
    expectStatus(await api("GET", `/webhooks/${res.json.id}`, { key: managerKey }), 200);
    expectStatus(await api("GET", "/events", { key: managerKey }), 200);
    expectStatus(await api("GET", `/webhooks/${res.json.id}/attempts`, { key: managerKey }), 200);
  });
});

// ---------------------------------------------------------------- headers and metrics

describe("answers and metrics", () => {
  test("webhook routes answer with the RateLimit headers and X-Request-Id, errors and 204 included", async () => {
    const rx = await receiver();
    const created = await api("POST", "/webhooks", { body: { url: rx.url, events: ["*"] } });
    expectStatus(created, 201);
    const answers = [
      created,
      await api("GET", "/webhooks"),
      await api("GET", `/webhooks/${created.json.id}/attempts`),
      await api("GET", "/events", { query: { limit: 1 } }),
      await api("POST", "/webhooks", { body: { url: "nope", events: ["*"] } }),
      await api("GET", "/webhooks/wh_nothere"),
      await api("DELETE", `/webhooks/${created.json.id}`),
    ];
    expect(answers.map((r) => r.status)).toEqual([201, 200, 200, 200, 422, 404, 204]);
    for (const r of answers) {
      for (const h of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "x-request-id"])
        expect(r.headers.get(h), `${r.status} lacks ${h}`).not.toBeNull();
    }
  });

  test("/metrics counts delivery outcomes and shows the outbox depth", async () => {
    const rx = await receiver();
    await rx.script([{ status: 500 }], { status: 200 });
    await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(2, 8000);
    await sleep(200);
    const res = await fetch(`${srv.origin}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const value = (re: RegExp) => Number(text.match(re)?.[1] ?? NaN);
    expect(value(/^crm_webhook_deliveries_total\{[^}]*outcome="succeeded"[^}]*\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^crm_webhook_deliveries_total\{[^}]*outcome="failed"[^}]*\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^crm_outbox_pending (\d+)/m)).toBeGreaterThanOrEqual(0);
  });
});

// ---------------------------------------------------------------- concurrency

describe("concurrency", () => {
  test("at most 4 deliveries are in flight per subscription while 10 events are pending", async () => {
    const rx = await receiver({ status: 200, delayMs: 600 });
    await createHook(rx.url, ["contact.created"]);
    for (let i = 0; i < 10; i++) await newContact();
    const got = await rx.waitFor(10, 12_000);
    expect(distinct(got.map((r) => r.json.id))).toHaveLength(10);
    expect(rx.maxConcurrent()).toBeLessThanOrEqual(4);
    expect(Math.max(...got.map((r) => r.concurrentAtArrival))).toBeLessThanOrEqual(4);
  });

  test("a slow subscriber does not hold back another subscription", async () => {
    const slow = await receiver({ status: 200, delayMs: 1500 });
    const fast = await receiver({ status: 200 });
    await createHook(slow.url, ["contact.created"]);
    await createHook(fast.url, ["contact.created"]);
    for (let i = 0; i < 10; i++) await newContact();
    const fastGot = await fast.waitFor(10, 5000);
    const lastFast = Math.max(...fastGot.map((r) => r.at));
    // With at most 4 in flight, the slow one's 5th request can only start after a 1.5 s answer.
    await slow.waitFor(5, 8000);
    const fifthSlow = [...slow.requests].sort((a, b) => a.at - b.at)[4]!.at;
    expect(lastFast).toBeLessThan(fifthSlow);
    await slow.waitFor(10, 10_000);
  });
});
