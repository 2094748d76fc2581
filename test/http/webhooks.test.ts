/**
 * Webhook subscriptions, black box (docs/api.md §13.1, §13.2, docs/webhooks.md §1; docs/api.md §2, docs/webhooks.md §2, §2.2):
 * CRUD and validation, event payloads, signatures, the event log, tenant isolation and
 * scopes. A sandbox server delivers to loopback receivers. Deliveries, retries and
 * failures: webhooks-delivery.test.ts; Idempotency-Key and secrets at rest:
 * webhooks-rules.test.ts.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import Stripe from "stripe";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";
import { distinct, parseServiceSignature, serviceSignatureIndex, standardSignatureIndex } from "../helpers/receiver.ts";
import { walk } from "../helpers/server.ts";
import { expectVerified, nextMillisecond, SECRET_RE, stdHeaders, useWebhookServer } from "../helpers/webhook-fixture.ts";

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(30_000);

const fx = useWebhookServer({
  env: "sandbox",
  extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "2000" },
});
const api: typeof fx.api = (...args) => fx.api(...args);
const { receiver, createHook, getHook, waitForAttempts, untilOutboxDrained, newContact, eventsSince } = fx;
const stripe = new Stripe("sk_test_x");

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

// ---------------------------------------------------------------- CRUD

describe("subscription CRUD", () => {
  test("POST /webhooks answers 201 with an active subscription and a whsec_ secret of 32 random bytes", async () => {
    const rx = await receiver();
    const res = await api("POST", "/webhooks", {
      body: { url: rx.url, events: ["contact.created", "contact.updated"], description: "crm sync" },
    });
    expectStatus(res, 201);
    fx.track(res.json.id);
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
    const key = await fx.srv.newKey(["webhooks:manage"]);
    const body = { url: rx.url, events: ["contact.created"], description: `idem-${Date.now()}` };
    const headers = { "Idempotency-Key": `wh-${Date.now()}` };
    const first = await api("POST", "/webhooks", { body, headers, key });
    expectStatus(first, 201);
    fx.track(first.json.id);
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
    // Every delivery queued by the two events has been attempted: what arrived is all there is.
    await untilOutboxDrained();
    expect(rx1.requests).toHaveLength(0);
    expect(rx2.requests).toHaveLength(1);
    expect((await waitForAttempts(w.id, 1)).map((a) => a.eventId)).toEqual([req!.json.id]);
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
    // A delivery is queued with its event; none is pending once this holds, so none is coming.
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(0);
  });

  test("DELETE stops the retries of a subscription's pending deliveries", async () => {
    const rx = await receiver({ status: 500 });
    const witness = await receiver({ status: 500 });
    const w = await createHook(rx.url, ["contact.created"]);
    const other = await createHook(witness.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(1);
    expect((await api("DELETE", `/webhooks/${w.id}`)).status).toBe(204);
    // The same event's delivery to the other subscription fails on the same schedule (1 s,
    // 1 s, ±10 %). Once its third attempt is recorded (≥ 1.8 s after its first), the deleted
    // one's retry (due ≤ 1.1 s after its first) would long have been sent; and nothing is
    // pending any more, so nothing can be sent later.
    await fx.waitForHook(other.id, (h) => h.status === "disabled", "disabled by exhaustion");
    await untilOutboxDrained();
    expect(witness.requests).toHaveLength(3);
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
    ["an event outside the catalog", { events: ["contact.archived"] }, /^events(\.\d+)?$/],
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
    expect(body.projectId).toBe(fx.srv.projectId);
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
    await untilOutboxDrained(); // every queued delivery attempted: the lists below are complete
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

describe("GET /events", () => {
  test("lists the project's events from since, oldest first, in the list envelope, with cursor pagination", async () => {
    // Strictly after every earlier event, and one millisecond per event, so "oldest first"
    // has one answer.
    const since = await nextMillisecond();
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await newContact());
      await nextMillisecond();
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
      expect(e.projectId).toBe(fx.srv.projectId);
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
    const b = await fx.srv.newProject();
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
    await untilOutboxDrained();
    // The one request is that event's: B's /test (which would have sent before answering) sent no ping.
    expect(rx.requests.map((r) => r.headers["x-service-event"])).toEqual(["contact.created"]);
    expect(serviceSignatureIndex(w.secret, req!)).toBe(0);
    expect(parseServiceSignature(req!.headers["x-service-signature"]).v1).toHaveLength(1);
  });

  test("events stay in their project: B's GET /events lists none of A's events, A's subscription gets none of B's, and B cannot redeliver them", async () => {
    const b = await fx.srv.newProject();
    const rxA = await receiver();
    const rxB = await receiver();
    const wA = await createHook(rxA.url, ["*"]);
    const wB = await createHook(rxB.url, ["*"], undefined, b.api);
    const since = new Date(Date.now() - 60_000).toISOString();
    await newContact();
    await newContact({}, b.api);
    const [fromA] = await rxA.waitFor(1);
    const [fromB] = await rxB.waitFor(1);
    await untilOutboxDrained(); // every queued delivery attempted and recorded
    expect(rxA.requests).toHaveLength(1);
    expect(rxB.requests).toHaveLength(1);
    expect(fromA!.json.projectId).toBe(fx.srv.projectId);
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

    // B asks its own subscription to redeliver A's event: to B it is an unknown event id
    // (docs/decisions.md: unknown ids are 422 eventIds), and nothing is queued.
    const steal = await b.api("POST", `/webhooks/${wB.id}/redeliver`, { body: { eventIds: [fromA!.json.id] } });
    expectError(steal, "ERR_FORM_VALIDATION", "eventIds");
    await untilOutboxDrained();
    expect(rxB.requests.map((r) => r.json.id)).toEqual([fromB!.json.id]);
    expect((await fx.attempts(wB.id, b.api)).map((a) => a.eventId)).toEqual([fromB!.json.id]);
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
    limitedKey = await fx.srv.newKey(["contacts:read", "contacts:write", "interactions:write"]);
    managerKey = await fx.srv.newKey(["webhooks:manage"]);
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
    fx.track(res.json.id);
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

});
