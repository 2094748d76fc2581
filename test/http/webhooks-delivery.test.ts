/**
 * Webhook delivery, black box (docs/api.md §13.4, docs/webhooks.md §1, §2, §2.2, §4.4): retries and
 * their signatures, failures and what they do to the subscription, the test ping,
 * redelivery, the attempt log, delivery metrics and the per-subscription cap. A sandbox
 * server with a compressed retry schedule delivers to loopback receivers; "nothing more
 * arrives" is proven by the outbox being drained, never by a sleep.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import Stripe from "stripe";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";
import { readMetrics } from "../helpers/metrics.ts";
import { startServer } from "../helpers/server.ts";
import {
  distinct,
  parseServiceSignature,
  serviceHmacHex,
  standardHmacBase64,
  type ReceivedRequest,
} from "../helpers/receiver.ts";
import { expectVerified, nextMillisecond, stdHeaders, useWebhookServer, WAIT_MS } from "../helpers/webhook-fixture.ts";

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(60_000);

const SCHEDULE = "1s,1s"; // k = 2 entries → 1 + 2 = 3 attempts (docs/webhooks.md §2.2)
const ATTEMPTS = 3;
// Long: a request a receiver holds stays one attempt in flight for as long as a test needs
// (the timeout rule has a server of its own below).
const TIMEOUT_MS = 30_000;

const fx = useWebhookServer({
  env: "sandbox",
  extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: SCHEDULE, CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
});
const api: typeof fx.api = (...args) => fx.api(...args);
const { receiver, createHook, getHook, waitForHook, attempts, waitForAttempts, untilOutboxDrained, newContact, eventsSince } = fx;
const stripe = new Stripe("sk_test_x");

/** The `t` a delivery was signed with (X-Service-Signature), checked equal to webhook-timestamp. */
function signedAt(req: ReceivedRequest): number {
  const { t } = parseServiceSignature(req.headers["x-service-signature"]);
  expect(req.headers["webhook-timestamp"]).toBe(String(t));
  return t;
}

const sec = (ms: number) => Math.floor(ms / 1000);

// ---------------------------------------------------------------- retries and failures

describe("retries and failures", () => {
  test("a retry after a 500 sends the identical body bytes with the same delivery id, signed with its own t", async () => {
    const rx = await receiver();
    await rx.script([{ status: 500, body: "boom" }], { status: 200 });
    const w = await createHook(rx.url);
    await newContact();
    const [a, b] = await rx.waitFor(2, WAIT_MS);
    expect(Buffer.from(b!.raw).equals(Buffer.from(a!.raw))).toBe(true);
    expect(b!.headers["x-service-delivery"]).toBe(a!.headers["x-service-delivery"]!);
    expect(b!.headers["webhook-id"]).toBe(a!.headers["webhook-id"]!);
    expect(b!.json.id).toBe(a!.json.id);
    expectVerified(w.secret, a!);
    expectVerified(w.secret, b!);
    await stripe.webhooks.constructEventAsync(b!.raw, b!.headers["x-service-signature"]!, w.secret);
    // The retry is sent once the first answer is recorded plus the schedule's first step
    // (1 s less its 10 % jitter): at least 900 ms after the first arrived.
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(900);
    // Each t is its attempt's send time, bounded by what caused it and by its arrival (one
    // clock, one machine): the first after the event existed, the retry ≥ 900 ms after the
    // first arrived.
    const [ta, tb] = [signedAt(a!), signedAt(b!)];
    expect(ta).toBeGreaterThanOrEqual(sec(Date.parse(a!.json.createdAt)));
    expect(ta).toBeLessThanOrEqual(sec(a!.at));
    expect(tb).toBeGreaterThanOrEqual(sec(a!.at + 900));
    expect(tb).toBeLessThanOrEqual(sec(b!.at));
    // Acknowledged: nothing is pending, so no further attempt is coming.
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(2);
  });

  test("each attempt is signed with its own send time: a retry 3 s later carries a t 3 s later, and each signature verifies only with its own t", async () => {
    const rx = await receiver();
    await rx.script([{ status: 429, retryAfter: 3 }], { status: 200 });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    const [a, b] = await rx.waitFor(2, WAIT_MS);
    const [ta, tb] = [signedAt(a!), signedAt(b!)];
    // The retry was sent ≥ 3 s after the first answer, which came after the first was signed.
    expect(tb - ta).toBeGreaterThanOrEqual(3);
    expect(ta).toBeLessThanOrEqual(sec(a!.at));
    expect(tb).toBeLessThanOrEqual(sec(b!.at));
    expect(tb).toBeGreaterThanOrEqual(sec(a!.at + 3000));
    const id = a!.headers["webhook-id"]!;
    for (const [req, own, other] of [
      [a!, ta, tb],
      [b!, tb, ta],
    ] as const) {
      const v1 = parseServiceSignature(req.headers["x-service-signature"]).v1;
      expect(v1).toEqual([serviceHmacHex(w.secret, own, req.raw)]);
      expect(v1).not.toContain(serviceHmacHex(w.secret, other, req.raw));
      expect(req.headers["webhook-signature"]).toBe(`v1,${standardHmacBase64(w.secret, id, own, req.raw)}`);
      expect(req.headers["webhook-signature"]).not.toContain(standardHmacBase64(w.secret, id, other, req.raw));
    }
    // A receiver's library refuses the retry's signature under the first attempt's t.
    const swapped = { ...stdHeaders(b!), "webhook-timestamp": String(ta) };
    expect(() => new StandardWebhook(w.secret).verify(b!.text, swapped)).toThrow();
  });

  test("a success after failures resets consecutiveFailures to 0 and sets lastSuccessAt", async () => {
    const rx = await receiver();
    // The retry is held at the receiver: the failure before it is recorded by then.
    await rx.script([{ status: 502 }], { status: 204, hold: true });
    const w = await createHook(rx.url);
    await newContact();
    await rx.waitFor(2, WAIT_MS);
    const failing = await getHook(w.id);
    expect(failing).toMatchObject({ status: "active", consecutiveFailures: 1, lastSuccessAt: null });
    expect(failing.lastFailureReason).toContain("502");
    await rx.release();
    const ok = await waitForHook(w.id, (h) => h.lastSuccessAt !== null, "lastSuccessAt");
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
    await rx.waitFor(2, WAIT_MS); // retried, so the 302 counted as a failure
    await waitForHook(w.id, (h) => h.lastSuccessAt !== null, "lastSuccessAt"); // the 200 is recorded
    await untilOutboxDrained();
    expect(target.requests).toHaveLength(0);
    expect((await attempts(w.id)).map((a) => a.statusCode)).toEqual([200, 302]);
  });

  test("an answer slower than the attempt timeout is a failed attempt with no status code and an error", async () => {
    const short = await startServer({
      env: "sandbox",
      extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "1000" },
    });
    try {
      const rx = await receiver();
      // The first answer is held past the 1 s limit (and let go after the second arrived).
      await rx.script([{ status: 200, hold: true }], { status: 200 });
      const created = await short.api("POST", "/webhooks", { body: { url: rx.url, events: ["contact.created"] } });
      expectStatus(created, 201);
      const w = created.json; // gone with its server: not left to the fixture's cleanup
      await newContact({}, short.api);
      await rx.waitFor(2, WAIT_MS);
      await rx.release();
      await waitForHook(w.id, (h) => h.lastSuccessAt !== null, "lastSuccessAt", short.api);
      const list = await attempts(w.id, short.api);
      expect(list).toHaveLength(2);
      expect(list[1].attempt).toBe(1);
      expect(list[1].statusCode).toBeNull();
      expect(list[1].error).toContain("timed out");
      expect(list[0].statusCode).toBe(200);
    } finally {
      await short.stop();
    }
  });

  test("a 429 with Retry-After delays the next attempt at least that long", async () => {
    const rx = await receiver();
    await rx.script([{ status: 429, retryAfter: 2 }], { status: 200 });
    await createHook(rx.url, ["contact.created"]);
    await newContact();
    const [a, b] = await rx.waitFor(2, WAIT_MS);
    // The schedule alone would retry after ~1 s; Retry-After: 2 asks for 2 s (counted from
    // the answer, which came after the request arrived).
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(2000);
    expect(b!.headers["x-service-delivery"]).toBe(a!.headers["x-service-delivery"]!);
  });

  test("a 429's Retry-After of 3 s on a 1 s schedule step is honoured in full (docs/webhooks.md §2: at least Retry-After)", async () => {
    const rx = await receiver();
    await rx.script([{ status: 429, retryAfter: 3 }], { status: 200 });
    await createHook(rx.url, ["contact.created"]);
    await newContact();
    const [a, b] = await rx.waitFor(2, WAIT_MS);
    // Twice the step would be 2 s; the full Retry-After is 3 s.
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(3000);
  });

  test(`a delivery that fails all ${ATTEMPTS} attempts (1 + k schedule entries) disables the subscription with consecutiveFailures ${ATTEMPTS} and lastFailureReason`, async () => {
    const rx = await receiver({ status: 500, body: "down" });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    // The last attempt's outcome and the disabling are written together.
    const h = await waitForHook(w.id, (x) => x.status === "disabled", "disabled");
    // consecutiveFailures counts failed attempts since the last success (docs/decisions.md).
    expect(h.consecutiveFailures).toBe(ATTEMPTS);
    expect(h.lastFailureReason).toContain("500");
    expect(h.lastSuccessAt).toBeNull();
    const list = await attempts(w.id);
    expect(list.map((a) => [a.attempt, a.statusCode])).toEqual([
      [3, 500],
      [2, 500],
      [1, 500],
    ]);
    // Exhausted, nothing is pending: no fourth attempt is coming.
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(ATTEMPTS);
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(1);
  });

  test("an exhausted delivery does not disable the subscription when another delivery succeeded meanwhile", async () => {
    // The doomed delivery's first attempt is held at the receiver while another succeeds.
    const rx = await receiver([{ when: { bodyIncludes: "FailMe" }, reply: { status: 500, hold: true } }, { reply: { status: 200 } }]);
    const w = await createHook(rx.url, ["contact.created"]);
    const doomed = await newContact({ firstName: "FailMe" });
    await rx.waitFor(1);
    await newContact({ firstName: "Fine" });
    await waitForHook(w.id, (h) => h.lastSuccessAt !== null, "the other delivery's success");
    await rx.release(); // answers the held 500; its two retries fail at once
    await waitForAttempts(w.id, ATTEMPTS + 1);
    await untilOutboxDrained();
    expect(rx.requests.filter((r) => r.json.data.contact.contactId === doomed.contactId)).toHaveLength(ATTEMPTS);
    const h = await getHook(w.id);
    expect(h.status).toBe("active");
    expect(h.lastSuccessAt).not.toBeNull();
    // Its three failures came after the success.
    expect(h.consecutiveFailures).toBe(ATTEMPTS);
  });

  test("a 410 Gone disables the subscription at once, without retries", async () => {
    const rx = await receiver({ status: 410, body: "gone" });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    const h = await waitForHook(w.id, (x) => x.status === "disabled", "disabled");
    expect(h.consecutiveFailures).toBe(1);
    expect(h.lastFailureReason).toContain("410");
    expect((await attempts(w.id)).map((a) => [a.attempt, a.statusCode])).toEqual([[1, 410]]);
    // An event fired while disabled is not queued; the gone delivery is finished: nothing is pending.
    await newContact();
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(1);
    expect((await getHook(w.id)).consecutiveFailures).toBe(1);
  });

  test("events fired while disabled are not delivered but stay in GET /events; PATCH status active resets consecutiveFailures and deliveries resume", async () => {
    const rx = await receiver();
    await rx.script([{ status: 410 }], { status: 200 });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(1);
    await waitForHook(w.id, (x) => x.status === "disabled", "disabled");

    const since = await nextMillisecond();
    const missed = await newContact();
    await untilOutboxDrained();
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
    await untilOutboxDrained();
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
    const [req] = await rx.waitFor(1);
    expect(rx.requests).toHaveLength(1);
    expect(req!.headers["x-service-event"]).toBe("ping");
    expect(req!.json.event).toBe("ping");
    expect(req!.json.apiVersion).toBe("v1");
    expect(req!.json.projectId).toBe(fx.srv.projectId);
    expect(req!.json.data.webhookId).toBe(w.id);
    expect(typeof req!.json.data.message).toBe("string");
    expectVerified(w.secret, req!);
    await stripe.webhooks.constructEventAsync(req!.raw, req!.headers["x-service-signature"]!, w.secret);
    new StandardWebhook(w.secret).verify(req!.text, stdHeaders(req!));
  });

  test("the test ping to a 500 receiver answers delivered false with the status and an error, is not retried, and does not count as a failure", async () => {
    const rx = await receiver({ status: 500, body: "nope" });
    const w = await createHook(rx.url, ["contact.created"]);
    const res = await api("POST", `/webhooks/${w.id}/test`);
    expectStatus(res, 200);
    expect(res.json).toMatchObject({ delivered: false, statusCode: 500 });
    expect(res.json.error).toContain("500");
    // Outside the outbox: nothing queued, nothing recorded, the subscription untouched
    // (docs/decisions.md: the ping is not an attempt and never changes the state).
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(1);
    expect(await attempts(w.id)).toEqual([]);
    expect(await getHook(w.id)).toMatchObject({ status: "active", consecutiveFailures: 0, lastFailureReason: null, lastSuccessAt: null });
  });

  test("the test ping to an endpoint that refuses connections answers delivered false, statusCode null and an error", async () => {
    // Port 1 is privileged: nothing of the tests' listens there, so the connection is refused.
    const w = await createHook("http://127.0.0.1:1/hook", ["contact.created"]);
    const res = await api("POST", `/webhooks/${w.id}/test`);
    expectStatus(res, 200);
    expect(res.json.delivered).toBe(false);
    expect(res.json.statusCode).toBeNull();
    expect(typeof res.json.error).toBe("string");
    expect(res.json.error.length).toBeGreaterThan(0);
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
    // Recorded, so no longer pending: a pending event is not queued twice (docs/webhooks.md §4.4).
    await waitForAttempts(w.id, 2);
    const res = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: ids } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ queued: 2 });
    const all = await rx.waitFor(4);
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(4);
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
    // The window's ends (inclusive) fall strictly between events: the first two are in it,
    // the third is a millisecond past its end (one clock: the server's and this process's).
    const since = await nextMillisecond();
    await newContact();
    await newContact();
    const untilIso = new Date().toISOString();
    await nextMillisecond();
    await newContact();
    const first = await rx.waitFor(3);
    const byCreation = [...first].sort((a, b) => a.json.createdAt.localeCompare(b.json.createdAt));
    await untilOutboxDrained(); // recorded, so none is pending (a pending one is not queued again)

    const windowed = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { since, until: untilIso } });
    expect(windowed.status).toBe(202);
    expect(windowed.json).toEqual({ queued: 2 });
    await rx.waitFor(5);
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(5);
    const again = rx.requests.slice(3).map((r) => r.json.id).sort();
    expect(again).toEqual(byCreation.slice(0, 2).map((r) => r.json.id).sort());

    const open = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { since } });
    expect(open.status).toBe(202);
    expect(open.json).toEqual({ queued: 3 });
    await rx.waitFor(8);
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(8);
    expect(distinct(rx.requests.map((r) => r.json.id))).toHaveLength(3);
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(8);
  });

  test("redeliver can bring a disabled subscription's missed events once it is active again", async () => {
    const rx = await receiver({ status: 200 });
    const w = await createHook(rx.url, ["contact.created"]);
    expectStatus(await api("PATCH", `/webhooks/${w.id}`, { body: { status: "disabled" } }), 200);
    const since = await nextMillisecond();
    const missed = await newContact();
    await untilOutboxDrained(); // not queued for the disabled subscription
    expect(rx.requests).toHaveLength(0);
    const ev = (await eventsSince(since)).find((e) => e.data?.contact?.contactId === missed.contactId);
    expect(ev).toBeDefined();
    expectStatus(await api("PATCH", `/webhooks/${w.id}`, { body: { status: "active" } }), 200);
    const res = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: [ev.id] } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ queued: 1 });
    const [req] = await rx.waitFor(1);
    expect(req!.json).toEqual(ev);
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(1);
  });

  test("redeliver refuses a body with neither eventIds nor since, and a since that is not a time (422)", async () => {
    const rx = await receiver();
    const w = await createHook(rx.url);
    const none = await api("POST", `/webhooks/${w.id}/redeliver`, { body: {} });
    expectError(none, "ERR_FORM_VALIDATION", undefined, { anyFieldName: true });
    const bad = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { since: "last tuesday" } });
    expectError(bad, "ERR_FORM_VALIDATION", "since");
    // docs/decisions.md: unknown ids are 422 eventIds.
    const unknown = await api("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: ["evt_doesnotexist"] } });
    expectError(unknown, "ERR_FORM_VALIDATION", "eventIds");
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(0);
    expect(await attempts(w.id)).toEqual([]);
  });
});

describe("delivery attempts", () => {
  test("GET /webhooks/{id}/attempts lists attempts newest first with statusCode, error, durationMs and at most 1 KiB of the answer", async () => {
    const long = "x".repeat(600) + "y".repeat(3000);
    const rx = await receiver();
    await rx.script([{ status: 503, body: long }], { status: 200, body: "thanks" });
    const w = await createHook(rx.url, ["contact.created"]);
    await newContact();
    const [req] = await rx.waitFor(2, WAIT_MS);
    await waitForHook(w.id, (h) => h.lastSuccessAt !== null, "lastSuccessAt");
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

describe("metrics", () => {
  test("/metrics counts each attempt's outcome exactly and shows the outbox depth", async () => {
    const rx = await receiver();
    await rx.script([{ status: 500 }], { status: 200 });
    await untilOutboxDrained();
    const outcomes = async () => {
      const m = await readMetrics(fx.srv.origin);
      const v = (outcome: string) => m.value("crm_webhook_deliveries_total", { outcome }) ?? 0;
      return { succeeded: v("succeeded"), failed: v("failed"), exhausted: v("exhausted"), pending: m.value("crm_outbox_pending") };
    };
    const before = await outcomes();
    expect(before.pending).toBe(0);
    await createHook(rx.url, ["contact.created"]);
    await newContact();
    await rx.waitFor(2, WAIT_MS);
    await untilOutboxDrained();
    // The counter moves when the outcome is written, which is what drained the outbox.
    const after = await outcomes();
    expect({ succeeded: after.succeeded - before.succeeded, failed: after.failed - before.failed, exhausted: after.exhausted - before.exhausted }).toEqual({
      succeeded: 1,
      failed: 1,
      exhausted: 0,
    });
    expect(after.pending).toBe(0);
  });
});

// ---------------------------------------------------------------- concurrency

describe("concurrency", () => {
  test("exactly 4 deliveries of one subscription are in flight at once while 10 are due: it reaches 4 and never 5", async () => {
    const busy = await receiver({ status: 200, hold: true });
    const witness = await receiver();
    const w = await createHook(busy.url, ["contact.created"]);
    const other = await createHook(witness.url, ["interaction_log.created"]);
    const contacts = [];
    for (let i = 0; i < 10; i++) contacts.push(await newContact());
    await busy.waitUntil(() => busy.inFlight() >= 4, WAIT_MS, "4 deliveries held");
    // A later event of another subscription is sent and recorded: the dispatcher has had
    // its turns since the 10 were due, and gave this subscription no fifth slot.
    const il = await api("POST", `/contacts/${contacts[0].contactId}/interactions`, { body: { type: "note", note: "witness" } });
    expectStatus(il, 201);
    await witness.waitFor(1);
    await waitForAttempts(other.id, 1);
    expect(busy.requests).toHaveLength(4);
    expect(busy.inFlight()).toBe(4);
    await busy.release();
    const got = await busy.waitFor(10, WAIT_MS);
    expect(distinct(got.map((r) => r.json.id))).toHaveLength(10);
    await waitForAttempts(w.id, 10);
    expect(busy.maxConcurrent()).toBe(4);
    expect(Math.max(...got.map((r) => r.concurrentAtArrival))).toBe(4);
  });

  test("a slow subscriber does not hold back another subscription", async () => {
    const slow = await receiver({ status: 200, hold: true });
    const fast = await receiver({ status: 200 });
    await createHook(slow.url, ["contact.created"]);
    await createHook(fast.url, ["contact.created"]);
    for (let i = 0; i < 10; i++) await newContact();
    // The slow subscription's 4 slots are taken and held; all 10 still reach the other one.
    await slow.waitUntil(() => slow.inFlight() >= 4, WAIT_MS, "4 requests held");
    await fast.waitFor(10, WAIT_MS);
    expect(slow.inFlight()).toBe(4);
    expect(slow.requests.every((r) => r.answeredAt === undefined)).toBe(true);
    await slow.release();
    await slow.waitFor(10, WAIT_MS);
  });
});
