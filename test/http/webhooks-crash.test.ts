/**
 * At-least-once delivery across process death (interface §6.2; decisions §7, §11, §12):
 * deliveries claimed or pending when the server dies are delivered after a restart on the
 * same database. Processes are spawned and killed here (test/helpers/process.ts).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectStatus } from "../helpers/expect.ts";
import { newDbDir, removeDir, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { distinct, serviceSignatureIndex, startReceiver, type Receiver } from "../helpers/receiver.ts";
import { sleep } from "../helpers/server.ts";

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(30_000);

const ENV = {
  CRM_ENV: "sandbox",
  CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s,1s",
  CRM_OUTBOX_POLL_MS: "50",
  CRM_WEBHOOK_TIMEOUT_MS: "5000",
};

const live: ServerProcess[] = [];
const receivers: Receiver[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of live.splice(0)) {
    s.proc.kill("SIGKILL");
    await s.exited;
  }
  for (const r of receivers.splice(0)) await r.stop();
  for (const d of dirs.splice(0)) removeDir(d);
});

async function start(dir: string) {
  const s = await spawnServer(dir, ENV);
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
  const dir = newDbDir();
  dirs.push(dir);
  const s1 = await start(dir);
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

describe("deliveries survive the death of the server", () => {
  test("kill -9 during a backlog of 50 events: after a restart on the same database every event is delivered at least once", async () => {
    const rx = await startReceiver({ status: 200, delayMs: 250 });
    receivers.push(rx);
    const { dir, s1, key, secret, hookId, contactIds } = await backlog(rx, 50);
    await rx.waitFor(8, 15_000);
    const killAt = Date.now();
    await stopWith(s1, "SIGKILL");
    const beforeKill = rx.requests.length;
    // Requests on the wire when the process died: received, never answered to the server.
    const cut = rx.requests.filter((r) => r.at < killAt && (r.answeredAt === undefined || r.answeredAt > killAt));
    // The kill hit a real backlog, with requests on the wire.
    expect(distinct(rx.requests.map((r) => r.json.id)).length).toBeLessThan(50);
    expect(cut.length).toBeGreaterThan(0);

    const restartAt = Date.now();
    const s2 = await start(dir);
    expect(s2.printedKey).toBeNull(); // same database: no second bootstrap
    await rx.waitUntil((reqs) => distinct(reqs.map((r) => r.json?.id)).length >= 50, 30_000, "50 distinct events");

    expect(deliveredContacts(rx).sort()).toEqual([...contactIds].sort());
    const eventIds = distinct(rx.requests.map((r) => r.json.id));
    expect(eventIds).toHaveLength(50);
    // A delivery the dead process had claimed is sent again: the kill delayed it, never dropped it.
    await rx.waitUntil(
      () => cut.every((c) => rx.forEvent(c.json.id).some((r) => r.at >= restartAt)),
      10_000,
      "the deliveries cut by the kill to be sent again",
    );
    // One delivery id per (event, subscription), the same across the restart.
    const deliveryIds = distinct(rx.requests.map((r) => r.headers["x-service-delivery"]));
    expect(deliveryIds).toHaveLength(50);
    for (const id of eventIds) {
      const copies = rx.forEvent(id);
      expect(distinct(copies.map((r) => r.headers["x-service-delivery"]))).toHaveLength(1);
      expect(distinct(copies.map((r) => r.text))).toHaveLength(1);
    }
    // Deliveries after the restart are signed with the same secret.
    for (const r of rx.requests.slice(beforeKill)) expect(serviceSignatureIndex(secret, r)).toBe(0);

    // The events the API lists are exactly the delivered ones; the subscription is healthy.
    const api = s2.api(key);
    const events = await api("GET", "/events", { query: { limit: 200 } });
    expectStatus(events, 200);
    expect(events.json.data.map((e: any) => e.id).sort()).toEqual([...eventIds].sort());
    await sleep(300);
    const hook = await api("GET", `/webhooks/${hookId}`);
    expect(hook.json.status).toBe("active");
    await stopWith(s2, "SIGTERM");
  }, 60_000);

  test("kill -9 while deliveries wait for a retry: after a restart they are retried and delivered", async () => {
    const rx = await startReceiver({ status: 503 });
    receivers.push(rx);
    const { dir, s1, key, contactIds } = await backlog(rx, 10);
    // Every event has failed once and waits ~1 s for its retry when the process dies.
    await rx.waitUntil((reqs) => distinct(reqs.map((r) => r.json?.id)).length >= 10, 10_000, "a first attempt of each event");
    await stopWith(s1, "SIGKILL");
    await rx.respond({ status: 200 });
    const restartAt = Date.now();
    const s2 = await start(dir);
    await rx.waitUntil(
      (reqs) => distinct(reqs.filter((r) => r.at >= restartAt).map((r) => r.json?.id)).length >= 10,
      20_000,
      "every event again after the restart",
    );
    const after = rx.requests.filter((r) => r.at >= restartAt);
    expect(distinct(after.map((r) => r.json.data.contact.contactId)).sort()).toEqual([...contactIds].sort());
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(10);
    const attemptsOk = await s2.api(key)("GET", "/events", { query: { limit: 200 } });
    expect(attemptsOk.json.data).toHaveLength(10);
    await stopWith(s2, "SIGTERM");
  }, 60_000);

  test("SIGTERM during a backlog loses no delivery: the rest is delivered after a restart", async () => {
    const rx = await startReceiver({ status: 200, delayMs: 250 });
    receivers.push(rx);
    const { dir, s1, contactIds } = await backlog(rx, 30);
    await rx.waitFor(6, 15_000);
    await stopWith(s1, "SIGTERM");
    const beforeRestart = rx.requests.length;
    expect(distinct(rx.requests.map((r) => r.json.id)).length).toBeLessThan(30);
    await start(dir);
    await rx.waitUntil((reqs) => distinct(reqs.map((r) => r.json?.id)).length >= 30, 20_000, "30 distinct events");
    expect(deliveredContacts(rx).sort()).toEqual([...contactIds].sort());
    expect(distinct(rx.requests.map((r) => r.headers["x-service-delivery"]))).toHaveLength(30);
    expect(rx.requests.length).toBeGreaterThan(beforeRestart);
  }, 60_000);
});
