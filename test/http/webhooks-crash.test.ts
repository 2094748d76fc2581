/**
 * At-least-once delivery across process death (docs/webhooks.md §2, §2.2):
 * deliveries claimed or pending when the server dies are delivered after a restart on the
 * same database. Processes are spawned (test/helpers/spawn.ts) and killed here; the folder
 * (on PostgreSQL: its database) outlives them, so a restart meets what the dead one left.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStatus } from "../helpers/expect.ts";
import { readMetrics } from "../helpers/metrics.ts";
import { databaseEnvAt, releaseDatabases } from "../helpers/postgres.ts";
import { distinct, serviceSignatureIndex, startReceiver, type Receiver } from "../helpers/receiver.ts";
import { makeApi, type Api } from "../helpers/server.ts";
import { KEY_PATTERN, spawnServer, type SpawnedServer } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";

/** Generous: every wait ends when its condition holds; only a broken service waits this long. */
const WAIT_MS = 30_000;

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(30_000);

const ENV = {
  CRM_ENV: "sandbox",
  CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s,1s",
  CRM_OUTBOX_POLL_MS: "50",
  // Long: requests the receiver holds stay in flight until the test lets them go.
  CRM_WEBHOOK_TIMEOUT_MS: "30000",
};

interface ServerProcess extends SpawnedServer {
  /** The bootstrap key this start printed (null: none, a restart on the same database). */
  printedKey: string | null;
  api: (key: string) => Api;
}

const live: ServerProcess[] = [];
const receivers: Receiver[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of live.splice(0)) {
    s.proc.kill("SIGKILL");
    await s.exited;
  }
  for (const r of receivers.splice(0)) await r.stop();
  for (const d of dirs.splice(0)) {
    rmSync(d, { recursive: true, force: true });
    void releaseDatabases(d);
  }
});

/** Starts the server on `dir` (the first start waits for its bootstrap key). */
async function start(dir: string, first = false): Promise<ServerProcess> {
  const server = await spawnServer({ env: { ...(await databaseEnvAt(join(dir, "crm.db"))), ...ENV }, expectKey: first });
  // The bootstrap key, when printed, is written before the server listens.
  const printedKey = server.stdout().match(KEY_PATTERN)?.[0] ?? null;
  const s = { ...server, printedKey, api: (k: string) => makeApi(server.baseUrl, async () => k) };
  live.push(s);
  return s;
}

async function stopWith(s: ServerProcess, signal: "SIGKILL" | "SIGTERM") {
  s.proc.kill(signal);
  await s.exited;
  live.splice(live.indexOf(s), 1);
}

/** First start: a server, its bootstrap key, a subscription to `rx`, and `n` acknowledged contacts. */
async function backlog(rx: Receiver, n: number) {
  const dir = mkdtempSync(join(tmpdir(), "crm-crash-test-"));
  dirs.push(dir);
  const s1 = await start(dir, true);
  expect(s1.printedKey).not.toBeNull();
  const key = s1.printedKey!;
  const api = s1.api(key);
  const hook = await api("POST", "/webhooks", { body: { url: rx.url, events: ["contact.created"] } });
  expectStatus(hook, 201);
  const contactIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api("POST", "/contacts", { body: { firstName: `Crash${i}`, email: `crash${i}@example.com` } });
    expectStatus(res, 201); // acknowledged: its event must reach the subscriber
    contactIds.push(res.json.contactId);
  }
  return { dir, s1, key, secret: hook.json.secret as string, hookId: hook.json.id as string, contactIds };
}

const deliveredContacts = (rx: Receiver) => distinct(rx.requests.map((r) => r.json?.data?.contact?.contactId as string));

/** No delivery pending on `s` any more: every one has had its last attempt recorded. */
const untilOutboxDrained = (s: ServerProcess) =>
  until(async () => (await readMetrics(s.origin)).value("crm_outbox_pending") === 0, { timeoutMs: WAIT_MS, intervalMs: 50, what: "crm_outbox_pending 0" });

describe("deliveries survive the death of the server", () => {
  test("kill -9 during a backlog of 50 events: after a restart on the same database every event is delivered at least once", async () => {
    // The receiver holds what it gets: when the process dies, exactly the subscription's 4
    // slots are on the wire, unanswered, and 46 events were never sent.
    const rx = await startReceiver({ status: 200, hold: true });
    receivers.push(rx);
    const { dir, s1, key, secret, hookId, contactIds } = await backlog(rx, 50);
    await rx.waitUntil(() => rx.inFlight() >= 4, WAIT_MS, "4 deliveries on the wire");
    await stopWith(s1, "SIGKILL");
    const cut = [...rx.requests];
    expect(cut).toHaveLength(4);
    expect(cut.every((r) => r.answeredAt === undefined)).toBe(true);
    await rx.release(); // the answers go to a dead process; later requests are answered at once

    const restartAt = Date.now();
    const s2 = await start(dir);
    expect(s2.printedKey).toBeNull(); // same database: no second bootstrap
    await rx.waitUntil((reqs) => distinct(reqs.map((r) => r.json?.id)).length >= 50, WAIT_MS, "50 distinct events");
    await untilOutboxDrained(s2);

    expect(deliveredContacts(rx).sort()).toEqual([...contactIds].sort());
    const eventIds = distinct(rx.requests.map((r) => r.json.id));
    expect(eventIds).toHaveLength(50);
    // A delivery the dead process had claimed is sent again: the kill delayed it, never dropped it.
    for (const c of cut) expect(rx.forEvent(c.json.id).filter((r) => r.at >= restartAt)).toHaveLength(1);
    // One delivery id per (event, subscription), the same across the restart.
    const deliveryIds = distinct(rx.requests.map((r) => r.headers["x-service-delivery"]));
    expect(deliveryIds).toHaveLength(50);
    for (const id of eventIds) {
      const copies = rx.forEvent(id);
      expect(distinct(copies.map((r) => r.headers["x-service-delivery"]))).toHaveLength(1);
      expect(distinct(copies.map((r) => r.text))).toHaveLength(1);
    }
    // Exactly the 4 cut deliveries were sent twice; every other event once.
    expect(rx.requests).toHaveLength(54);
    // Deliveries before and after the restart are signed with the same secret.
    for (const r of rx.requests) expect(serviceSignatureIndex(secret, r)).toBe(0);

    // The events the API lists are exactly the delivered ones; the subscription is healthy.
    const api = s2.api(key);
    const events = await api("GET", "/events", { query: { limit: 200 } });
    expectStatus(events, 200);
    expect(events.json.data.map((e: any) => e.id).sort()).toEqual([...eventIds].sort());
    const hook = await api("GET", `/webhooks/${hookId}`);
    expect(hook.json).toMatchObject({ status: "active", consecutiveFailures: 0 });
    await stopWith(s2, "SIGTERM");
  }, 90_000);

  test("kill -9 while deliveries wait for a retry: after a restart they are retried and delivered", async () => {
    const rx = await startReceiver({ status: 503 });
    receivers.push(rx);
    const { dir, s1, key, contactIds } = await backlog(rx, 10);
    // Every event has failed once and waits ~1 s for its retry when the process dies.
    await rx.waitUntil((reqs) => distinct(reqs.map((r) => r.json?.id)).length >= 10, WAIT_MS, "a first attempt of each event");
    await stopWith(s1, "SIGKILL");
    await rx.respond({ status: 200 });
    const restartAt = Date.now();
    const s2 = await start(dir);
    await rx.waitUntil(
      (reqs) => distinct(reqs.filter((r) => r.at >= restartAt).map((r) => r.json?.id)).length >= 10,
      WAIT_MS,
      "every event again after the restart",
    );
    const after = rx.requests.filter((r) => r.at >= restartAt);
    expect(distinct(after.map((r) => r.json.data.contact.contactId)).sort()).toEqual([...contactIds].sort());
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(10);
    const events = await s2.api(key)("GET", "/events", { query: { limit: 200 } });
    expect(events.json.data).toHaveLength(10);
    await stopWith(s2, "SIGTERM");
  }, 60_000);

  test("SIGTERM during a backlog finishes the attempts in flight, records them, and loses no delivery: the rest is delivered after a restart", async () => {
    const rx = await startReceiver({ status: 200, hold: true });
    receivers.push(rx);
    const { dir, s1, key, hookId, contactIds } = await backlog(rx, 30);
    await rx.waitUntil(() => rx.inFlight() >= 4, WAIT_MS, "4 deliveries on the wire");
    const inFlight = rx.requests.map((r) => r.json.id as string);
    // SIGTERM, then the 4 held requests are answered 200 while the server drains; anything
    // it still sends before it stops claiming is answered 503 (so nothing else succeeds).
    s1.proc.kill("SIGTERM");
    await rx.respond({ status: 503 });
    await rx.release();
    await s1.exited;
    live.splice(live.indexOf(s1), 1);
    const succeededBefore = new Set(inFlight);
    expect(succeededBefore.size).toBe(4);

    await rx.respond({ status: 200 });
    const restartAt = Date.now();
    const s2 = await start(dir);
    const after = () => rx.requests.filter((r) => r.at >= restartAt);
    await rx.waitUntil(() => distinct(after().map((r) => r.json?.id)).length >= 26, WAIT_MS, "the 26 other events after the restart");
    await untilOutboxDrained(s2);
    // Every event not finished before the stop is delivered after the restart ...
    expect(deliveredContacts(rx).sort()).toEqual([...contactIds].sort());
    const sentAfter = distinct(after().map((r) => r.json.id as string));
    expect(sentAfter.sort()).toEqual(distinct(rx.requests.map((r) => r.json.id as string)).filter((id) => !succeededBefore.has(id)).sort());
    // ... and the 4 answered during the drain were recorded then: none is sent again.
    for (const id of inFlight) expect(rx.forEvent(id)).toHaveLength(1);
    const attempts = (await s2.api(key)("GET", `/webhooks/${hookId}/attempts`, { query: { limit: 200 } })).json.data;
    for (const id of inFlight) expect(attempts.filter((a: any) => a.eventId === id).map((a: any) => a.statusCode)).toEqual([200]);
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(30);
    await stopWith(s2, "SIGTERM");
  }, 90_000);
});
