/**
 * The outbox with several nodes on one PostgreSQL database (docs/webhooks.md §2, docs/scaling.md §6), black box:
 * every node's dispatcher polls the same deliveries table; a due delivery is claimed by one
 * node at a time (FOR UPDATE SKIP LOCKED with a 30 s lease), so in normal operation no
 * attempt is made twice, and a node killed with deliveries in flight loses none of them:
 * another node sends them once their lease ends. "Nothing more arrives" is proven by a
 * marker event delivered after the drained outbox, never by a sleep.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectStatus } from "../helpers/expect.ts";
import { distinct, serviceSignatureIndex, startReceiver, type Receiver } from "../helpers/receiver.ts";
import { walk, type Api } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";
import { deliveriesCounted, newCluster, startAll, untilOutboxDrained, type Cluster } from "./nodes.ts";

setDefaultTimeout(180_000);

/** Generous: every wait ends when its condition holds; only a broken service waits this long. */
const WAIT_MS = 60_000;

const ENV = {
  CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s",
  CRM_OUTBOX_POLL_MS: "100",
  // Long: a request the receiver holds stays in flight until the test lets it go.
  CRM_WEBHOOK_TIMEOUT_MS: "60000",
};

const clusters: Cluster[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close();
  for (const r of receivers.splice(0)) await r.stop();
});

async function setup(rxReply: Parameters<typeof startReceiver>[0]) {
  const c = await newCluster(ENV);
  clusters.push(c);
  const rx = await startReceiver(rxReply);
  receivers.push(rx);
  return { c, rx };
}

/** A subscription of `api`'s project to contact.created at `rx`; its id and secret. */
async function subscribe(api: Api, rx: Receiver) {
  const hook = await api("POST", "/webhooks", { body: { url: rx.url, events: ["contact.created"] } });
  expectStatus(hook, 201);
  return { id: hook.json.id as string, secret: hook.json.secret as string };
}

const deliveryId = (r: { headers: Record<string, string> }) => r.headers["x-service-delivery"];

describe("the outbox shared by several nodes", () => {
  test("at most 4 deliveries of one subscription are in flight across both nodes: with 10 due it reaches 4 and never 5", async () => {
    const { c, rx: busy } = await setup({ status: 200, hold: true });
    const witness = await startReceiver({ status: 200 });
    receivers.push(witness);
    const [a, b] = await startAll(c, ["A", "B"]);
    const p = await c.project({ rateLimitPerMinute: 10_000, contactCreatesPerHour: 10_000 });
    const apiA = a!.api(p.key);
    const apiB = b!.api(p.key);
    await subscribe(apiA, busy);
    const other = await apiB("POST", "/webhooks", { body: { url: witness.url, events: ["interaction_log.created"] } });
    expectStatus(other, 201);
    const contacts: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await (i % 2 === 0 ? apiA : apiB)("POST", "/contacts", { body: { firstName: `Capped${i}` } });
      expectStatus(r, 201);
      contacts.push(r.json.contactId);
    }
    await busy.waitUntil(() => busy.inFlight() >= 4, WAIT_MS, "4 deliveries held");
    // Later events of another subscription, one committed on each node, are sent and
    // recorded: both dispatchers have had their turns since the 10 were due, and neither
    // gave this subscription a fifth slot.
    for (const [i, api] of [apiA, apiB].entries()) {
      expectStatus(await api("POST", `/contacts/${contacts[i]}/interactions`, { body: { type: "note", note: "witness" } }), 201);
    }
    await witness.waitFor(2, WAIT_MS);
    await until(async () => (await apiA("GET", `/webhooks/${other.json.id}/attempts`)).json.data.length >= 2, { timeoutMs: WAIT_MS, what: "the witness attempts recorded" });
    expect(busy.requests).toHaveLength(4);
    expect(busy.inFlight()).toBe(4);
    await busy.release();
    const got = await busy.waitFor(10, WAIT_MS);
    expect(distinct(got.map((r) => r.json.id))).toHaveLength(10);
    expect(busy.maxConcurrent()).toBe(4);
  });

  test("with both nodes' dispatchers polling, each of 200 events is delivered exactly once (one attempt per delivery id)", async () => {
    const { c, rx } = await setup({ status: 200 });
    const [a, b] = await startAll(c, ["A", "B"]);
    const p = await c.project({ rateLimitPerMinute: 10_000, contactCreatesPerHour: 10_000 });
    const apiA = a!.api(p.key);
    const apiB = b!.api(p.key);
    const hook = await subscribe(apiA, rx);

    // 200 contacts, half on each node, 10 at a time: both nodes commit events and wake their dispatchers.
    const contactIds: string[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => {
          const n = batch * 10 + i;
          return (n % 2 === 0 ? apiA : apiB)("POST", "/contacts", { body: { firstName: `Once${n}`, email: `once${n}@example.com` } });
        }),
      );
      for (const r of results) {
        expectStatus(r, 201);
        contactIds.push(r.json.contactId);
      }
    }
    await rx.waitUntil((reqs) => distinct(reqs.map(deliveryId)).length >= 200, WAIT_MS, "200 distinct deliveries");
    await untilOutboxDrained(a!, WAIT_MS);

    // Marker: one more event, delivered after every earlier one was recorded.
    const marker = await apiB("POST", "/contacts", { body: { firstName: "Marker" } });
    expectStatus(marker, 201);
    contactIds.push(marker.json.contactId);
    await rx.waitUntil((reqs) => reqs.some((r) => r.json?.data?.contact?.contactId === marker.json.contactId), WAIT_MS, "the marker's delivery");
    await untilOutboxDrained(b!, WAIT_MS);

    // Exactly one request per delivery, one delivery per event.
    const byDelivery = new Map<string, number>();
    for (const r of rx.requests) byDelivery.set(deliveryId(r)!, (byDelivery.get(deliveryId(r)!) ?? 0) + 1);
    const twice = [...byDelivery].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
    expect(rx.requests).toHaveLength(201);
    expect(distinct(rx.requests.map((r) => r.json.id))).toHaveLength(201);
    expect(rx.requests.map((r) => r.json.data.contact.contactId).sort()).toEqual([...contactIds].sort());
    for (const r of rx.requests) expect(serviceSignatureIndex(hook.secret, r)).toBe(0);

    // The attempt log agrees: 201 first attempts, all succeeded; the nodes together made 201 attempts.
    const { items: attempts } = await walk(apiA, `/webhooks/${hook.id}/attempts`, { limit: 200 });
    expect(attempts).toHaveLength(201);
    expect(distinct(attempts.map((x) => x.deliveryId))).toHaveLength(201);
    expect(attempts.every((x) => x.attempt === 1 && x.statusCode === 200)).toBe(true);
    expect(await deliveriesCounted([a!, b!], "succeeded")).toBe(201);
    expect(await deliveriesCounted([a!, b!], "failed")).toBe(0);
  });

  test("kill -9 of a node with deliveries in flight loses none: another node sends them once their lease ends, every event arrives", async () => {
    // The receiver holds what it gets: when node A dies, exactly the subscription's 4 slots
    // are on the wire, unanswered, leased to A; the 6 other events were never claimed.
    const { c, rx } = await setup({ status: 200, hold: true });
    const a = await c.start("A", { expectKey: true });
    const p = await c.project();
    const apiA = a.api(p.key);
    const hook = await subscribe(apiA, rx);
    const contactIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await apiA("POST", "/contacts", { body: { firstName: `Lease${i}`, email: `lease${i}@example.com` } });
      expectStatus(res, 201); // acknowledged: its event must reach the subscriber
      contactIds.push(res.json.contactId);
    }
    await rx.waitUntil(() => rx.inFlight() >= 4, WAIT_MS, "4 deliveries on the wire");
    await a.kill9();
    const cut = [...rx.requests];
    expect(cut).toHaveLength(4);
    expect(cut.every((r) => r.answeredAt === undefined)).toBe(true);
    await rx.release(); // the answers go to a dead process; later requests are answered at once

    const killedAt = Date.now();
    const b = await c.start("B");
    // The 6 unclaimed events go at once; the 4 leased to A when their lease ends (≤ 30 s).
    await rx.waitUntil(
      (reqs) => distinct(reqs.map((r) => r.json?.id)).length >= 10 && cut.every((x) => reqs.some((r) => r.at >= killedAt && r.json?.id === x.json.id)),
      WAIT_MS,
      "every event, and the 4 cut ones again after the kill",
    );
    await untilOutboxDrained(b, WAIT_MS);

    expect(distinct(rx.requests.map((r) => r.json.data.contact.contactId)).sort()).toEqual([...contactIds].sort());
    // A delivery the dead node had claimed is sent again by B, once: the kill delayed it, never dropped it.
    for (const x of cut) {
      const copies = rx.forEvent(x.json.id);
      expect(copies).toHaveLength(2);
      expect(distinct(copies.map(deliveryId))).toHaveLength(1);
      expect(distinct(copies.map((r) => r.text))).toHaveLength(1);
    }
    // Every other event once; one delivery id per event.
    expect(rx.requests).toHaveLength(14);
    expect(distinct(rx.requests.map(deliveryId))).toHaveLength(10);
    for (const r of rx.requests) expect(serviceSignatureIndex(hook.secret, r)).toBe(0);
    // B recorded one successful attempt per delivery (A died before recording any).
    const { items: attempts } = await walk(b.api(p.key), `/webhooks/${hook.id}/attempts`, { limit: 200 });
    expect(attempts).toHaveLength(10);
    expect(attempts.every((x) => x.attempt === 1 && x.statusCode === 200)).toBe(true);
    expect(await deliveriesCounted([b], "succeeded")).toBe(10);
  });
});
