/**
 * Per-contact ordering and redelivery of deliveries in flight, black box (docs/webhooks.md
 * §8.2, §5; docs/api.md §19.5). With `ordering: "per-contact"` a contact's deliveries to the
 * subscription are attempted one at a time in the order of their changes: a later one waits
 * while an earlier one is pending (retrying included), other contacts' go meanwhile, and a
 * delivery that ends failed lets the next go. Redeliver queues an event again unless its
 * delivery still waits for a first attempt: one being sent right now is queued again.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectStatus } from "../helpers/expect.ts";
import type { ReceivedRequest } from "../helpers/receiver.ts";
import { useWebhookServer } from "../helpers/webhook-fixture.ts";

setDefaultTimeout(90_000);

// Three attempts, 3 s apart: room to look at the receiver between a failure and its retry.
const fx = useWebhookServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "3s,3s", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "30000" } });
const { receiver, newContact, untilOutboxDrained, waitForAttempts } = fx;
const api: typeof fx.api = (method, path, opts) => fx.api(method, path, opts);

async function subscribe(url: string, body: Record<string, unknown>) {
  const res = await api("POST", "/webhooks", { body: { url, events: ["contact.created", "contact.updated"], ...body } });
  expectStatus(res, 201);
  fx.track(res.json.id);
  return res.json;
}

const patch = async (contactId: string, body: Record<string, unknown>) => expectStatus(await api("PATCH", `/contacts/${contactId}`, { body }), 200);

/** A contact's requests as `<event> v<version>`, in arrival order. */
const of = (reqs: ReceivedRequest[], contactId: string) =>
  reqs.filter((r) => r.json?.data?.contact?.contactId === contactId).map((r) => `${r.json.event} v${r.json.data.contact.version}`);

describe("ordering per-contact (docs/webhooks.md §8.2)", () => {
  test("a contact's later events wait while its first delivery is retrying, other contacts' arrive, and after success they arrive in order", async () => {
    const a = await newContact();
    const marker = a.email as string;
    // Every delivery about contact A fails until the test says otherwise; the rest succeed.
    const rules = [{ when: { bodyIncludes: marker }, reply: { status: 500 } }, { reply: { status: 200 } }];
    const ordered = await receiver(rules);
    const unordered = await receiver(rules);
    const hook = await subscribe(ordered.url, { events: ["contact.updated"], ordering: "per-contact" });
    await subscribe(unordered.url, { events: ["contact.updated"] });

    await patch(a.contactId, { firstName: "A1" }); // v2: fails, then retries
    await patch(a.contactId, { firstName: "A2" }); // v3: waits behind v2
    await patch(a.contactId, { firstName: "A3" }); // v4
    const b = await newContact();
    await patch(b.contactId, { firstName: "B1" });
    await patch(b.contactId, { firstName: "B2" });

    // The other contact's events arrive while A's first delivery is failing.
    await ordered.waitUntil((reqs) => of(reqs, b.contactId).length === 2, 20_000, "B's two updates");
    expect(of(ordered.requests, b.contactId)).toEqual(["contact.updated v2", "contact.updated v3"]);
    await waitForAttempts(hook.id, 3); // A's failure and B's two successes are recorded
    // Without ordering, A's later events went out at once (and failed) meanwhile.
    await unordered.waitUntil((reqs) => of(reqs, a.contactId).length >= 3, 20_000, "A's three updates, unordered");
    // With it, only A's first was attempted: the later ones wait behind its retry.
    expect(of(ordered.requests, a.contactId)).toEqual(["contact.updated v2"]);

    await ordered.respond({ status: 200 });
    await ordered.waitUntil((reqs) => of(reqs, a.contactId).length === 4, 20_000, "A's retry and its two later updates");
    expect(of(ordered.requests, a.contactId)).toEqual(["contact.updated v2", "contact.updated v2", "contact.updated v3", "contact.updated v4"]);
    // One at a time: each of A's requests arrived after the one before it was answered.
    const aReqs = ordered.requests.filter((r) => r.json?.data?.contact?.contactId === a.contactId);
    for (let i = 1; i < aReqs.length; i++) expect(aReqs[i]!.at).toBeGreaterThanOrEqual(aReqs[i - 1]!.answeredAt!);
    await unordered.respond({ status: 200 });
    await untilOutboxDrained();
  });

  test("a contact's deliveries are never in flight together, in the order of its changes, while other contacts' overlap", async () => {
    const ordered = await receiver({ status: 200, delayMs: 150 });
    await subscribe(ordered.url, { ordering: "per-contact" });
    const a = await newContact();
    const b = await newContact();
    for (let i = 1; i <= 4; i++) {
      await patch(a.contactId, { firstName: `A${i}` });
      await patch(b.contactId, { firstName: `B${i}` });
    }
    await untilOutboxDrained();
    for (const c of [a, b]) {
      const reqs = ordered.requests.filter((r) => r.json?.data?.contact?.contactId === c.contactId);
      expect(reqs.map((r) => r.json.data.contact.version)).toEqual([1, 2, 3, 4, 5]);
      for (let i = 1; i < reqs.length; i++) expect(reqs[i]!.at).toBeGreaterThanOrEqual(reqs[i - 1]!.answeredAt!);
    }
    // The two contacts were sent side by side, not one after the other.
    expect(ordered.maxConcurrent()).toBeGreaterThanOrEqual(2);
  });

  test("a delivery that ends failed lets the contact's next one go", async () => {
    const a = await newContact();
    // Only the update of notes fails (its changedFields say so; the later update's body names other fields).
    const ordered = await receiver([{ when: { bodyIncludes: `"changedFields":["notes"]` }, reply: { status: 500 } }, { reply: { status: 200 } }]);
    const hook = await subscribe(ordered.url, { events: ["contact.updated"], ordering: "per-contact" });
    await patch(a.contactId, { notes: "doomed" });
    await patch(a.contactId, { phone: "+15555550123" });
    // Another contact's success keeps the subscription active when A's delivery is exhausted (docs/webhooks.md §4.3).
    const b = await newContact();
    await patch(b.contactId, { firstName: "B" });
    await untilOutboxDrained();
    expect(of(ordered.requests, a.contactId)).toEqual(["contact.updated v2", "contact.updated v2", "contact.updated v2", "contact.updated v3"]);
    expect((await api("GET", `/webhooks/${hook.id}`)).json.status).toBe("active");
  });
});

describe("redeliver while a delivery is in flight (docs/webhooks.md §5)", () => {
  test("an event whose delivery is being sent is queued again and arrives a second time", async () => {
    const rx = await receiver({ status: 200, hold: true });
    const hook = await subscribe(rx.url, { events: ["contact.created"] });
    await newContact();
    const [first] = await rx.waitFor(1); // the receiver has it; its answer is held
    const res = await api("POST", `/webhooks/${hook.id}/redeliver`, { body: { eventIds: [first!.json.id] } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ queued: 1 });
    await rx.release();
    const [, second] = await rx.waitFor(2);
    expect(second!.json.id).toBe(first!.json.id);
    expect(second!.headers["x-service-delivery"]).not.toBe(first!.headers["x-service-delivery"]);
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(2);
  });

  test("an event whose delivery is retrying is queued again", async () => {
    const rx = await receiver({ status: 500 });
    const hook = await subscribe(rx.url, { events: ["contact.created"] });
    await newContact();
    const [first] = await rx.waitFor(1);
    await waitForAttempts(hook.id, 1); // failed once, due again in 3 s
    const res = await api("POST", `/webhooks/${hook.id}/redeliver`, { body: { eventIds: [first!.json.id] } });
    expect(res.json).toEqual({ queued: 1 });
    await rx.respond({ status: 200 });
    await untilOutboxDrained();
    expect(new Set(rx.requests.map((r) => r.headers["x-service-delivery"])).size).toBe(2);
  });

  test("an event whose delivery still waits for its first attempt is not queued twice", async () => {
    // Per-contact: the contact's first delivery is held at the receiver, so its second waits,
    // never attempted and not in flight.
    const rx = await receiver({ status: 200, hold: true });
    const hook = await subscribe(rx.url, { ordering: "per-contact" });
    const since = new Date().toISOString();
    const c = await newContact();
    await patch(c.contactId, { firstName: "Later" });
    const [held] = await rx.waitFor(1);
    const events = (await api("GET", "/events", { query: { since } })).json.data.filter((e: any) => e.data.contact?.contactId === c.contactId);
    const waiting = events.find((e: any) => e.id !== held!.json.id);
    expect(waiting.event).toBe("contact.updated");
    expect((await api("POST", `/webhooks/${hook.id}/redeliver`, { body: { eventIds: [waiting.id] } })).json).toEqual({ queued: 0 });
    // The one being sent is queued again, in its contact's order (before the update).
    expect((await api("POST", `/webhooks/${hook.id}/redeliver`, { body: { eventIds: [held!.json.id] } })).json).toEqual({ queued: 1 });
    await rx.release();
    await untilOutboxDrained();
    expect(of(rx.requests, c.contactId)).toEqual(["contact.created v1", "contact.created v1", "contact.updated v2"]);
  });
});
