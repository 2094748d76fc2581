/**
 * Decisions §16 for webhooks, black-box: no project's slow subscribers starve another's,
 * a delivery that cannot be signed is a failed attempt on the schedule (never a loop),
 * deleting a subscription mid-flight never repeats others' deliveries, and redeliver is
 * bounded, refused on a disabled subscription and never queues a pending event twice.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { distinct, startReceiver, type Receiver, type Reply, type Rule } from "../helpers/receiver.ts";
import { makeApi, startServer, type Api, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
const receivers: Receiver[] = [];
const UNLIMITED = { rateLimitPerMinute: 1_000_000, contactCreatesPerHour: 1_000_000 };

beforeAll(async () => {
  srv = await startServer({
    env: "sandbox",
    extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "30000" },
  });
}, 30_000);

afterEach(async () => {
  for (const r of receivers.splice(0)) await r.stop();
});

afterAll(async () => {
  await srv?.stop();
}, 30_000);

async function receiver(initial: Reply | Rule[] = {}): Promise<Receiver> {
  const r = await startReceiver(initial);
  receivers.push(r);
  return r;
}

/** A project with limits out of the way, and a request function on its own key. */
async function project(): Promise<Api> {
  const p = await srv.newProject(UNLIMITED);
  return makeApi(srv.baseUrl, async () => p.key);
}

async function hook(api: Api, url: string, events = ["*"]) {
  const res = await api("POST", "/webhooks", { body: { url, events } });
  expectStatus(res, 201);
  return res.json as { id: string; secret: string };
}

async function contact(api: Api, n = 0) {
  const res = await api("POST", "/contacts", { body: { firstName: `Fair${n}`, email: `fair${n}.${randomBytes(4).toString("hex")}@example.com` } });
  expectStatus(res, 201);
  return res.json;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A receiver that holds every request until `release()`. */
async function holdingReceiver() {
  const rx = await receiver({ status: 200, hold: true });
  return { rx, release: () => rx.release() };
}

describe("fair delivery across projects (decisions §16)", () => {
  test("while 16 subscriptions of one project hang, another project's delivery still arrives", async () => {
    const a = await project();
    const b = await project();
    const slow = await holdingReceiver();
    const fast = await receiver();
    for (let i = 0; i < 16; i++) await hook(a, slow.rx.url);
    await hook(b, fast.url);
    // 5 events × 16 subscriptions: far more than every slot the dispatcher has.
    for (let i = 0; i < 5; i++) await contact(a, i);
    await slow.rx.waitUntil((r) => r.length >= 16, 10_000, "the slow receivers to be busy");
    const mine = await contact(b);
    // B's delivery arrives while every request to A's receivers is still held.
    const [got] = await fast.waitFor(1, 5_000);
    expect(got!.json.data.contact.contactId).toBe(mine.contactId);
    expect(slow.rx.requests.every((r) => r.answeredAt === undefined)).toBe(true);
    // One project never holds more than half of the 64 slots.
    expect(slow.rx.maxConcurrent()).toBeLessThanOrEqual(32);
    await slow.release();
    await slow.rx.waitUntil((r) => distinct(r.map((x) => x.headers["x-service-delivery"])).length === 80, 20_000, "all of A's deliveries");
  }, 60_000);

  test("one busy subscription still gets 4 deliveries in flight at once", async () => {
    const a = await project();
    const held = await holdingReceiver();
    await hook(a, held.rx.url);
    for (let i = 0; i < 6; i++) await contact(a, i);
    await held.rx.waitUntil((r) => r.length >= 4, 10_000, "4 deliveries in flight");
    expect(held.rx.inFlight()).toBe(4);
    await held.release();
    await held.rx.waitUntil((r) => r.length >= 6, 10_000, "the other 2");
    expect(held.rx.maxConcurrent()).toBe(4);
  }, 30_000);
});

describe("deleting a subscription while its attempt is in flight (decisions §16)", () => {
  test("never makes another project's delivery be sent again", async () => {
    const a = await project();
    const b = await project();
    const gone = await holdingReceiver();
    const other = await holdingReceiver();
    const doomed = await hook(a, gone.rx.url);
    await hook(b, other.rx.url);
    await contact(a);
    await contact(b);
    await gone.rx.waitFor(1);
    await other.rx.waitFor(1);
    expectStatus(await a("DELETE", `/webhooks/${doomed.id}`), 204);
    // Both attempts finish together, so their outcomes are recorded in one batch.
    await gone.release();
    await other.release();
    const w = (await b("GET", "/webhooks")).json.data[0];
    await waitFor("B's attempt to be recorded", async () => {
      const attempts = (await b("GET", `/webhooks/${w.id}/attempts`)).json.data;
      return attempts.length === 1 ? attempts : undefined;
    });
    // Past the first retry step (1 s): a rolled-back outcome would have been sent again by now.
    await new Promise((r) => setTimeout(r, 1500));
    expect(other.rx.requests).toHaveLength(1);
    expect((await b("GET", `/webhooks/${w.id}/attempts`)).json.data).toHaveLength(1);
  }, 30_000);
});

describe("redeliver bounds (decisions §16)", () => {
  test("redeliver on a disabled subscription is 409 ERR_CONFLICT", async () => {
    const a = await project();
    const rx = await receiver();
    const w = await hook(a, rx.url);
    expectStatus(await a("PATCH", `/webhooks/${w.id}`, { body: { status: "disabled" } }), 200);
    const since = new Date(Date.now() - 60_000).toISOString();
    expectError(await a("POST", `/webhooks/${w.id}/redeliver`, { body: { since } }), "ERR_CONFLICT");
  });

  test("more than 10,000 eventIds is 422 naming eventIds", async () => {
    const a = await project();
    const w = await hook(a, (await receiver()).url);
    const eventIds = Array.from({ length: 10_001 }, (_, i) => `evt_${String(i).padStart(22, "0")}`);
    expectError(await a("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds } }), "ERR_FORM_VALIDATION", "eventIds");
  });

  test("an event already pending for the subscription is not queued twice", async () => {
    const a = await project();
    const down = await receiver({ status: 500 });
    const w = await hook(a, down.url);
    const since = new Date().toISOString();
    await contact(a, 1);
    await contact(a, 2);
    await down.waitFor(2);
    // Both deliveries are pending (failed once, retry in ~1 s): nothing new to queue.
    const events = (await a("GET", "/events", { query: { since } })).json.data.map((e: any) => e.id);
    expect(events).toHaveLength(2);
    expect((await a("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: events } })).json).toEqual({ queued: 0 });
    expect((await a("POST", `/webhooks/${w.id}/redeliver`, { body: { since } })).json).toEqual({ queued: 0 });
  });

  test("a range of more than 10,000 events is 422 naming since, and queues nothing", async () => {
    const a = await project();
    const rx = await receiver();
    const since = new Date().toISOString();
    const creators = Array.from({ length: 16 }, async (_, worker) => {
      for (let i = worker; i < 10_001; i += 16) await contact(a, i);
    });
    await Promise.all(creators);
    const w = await hook(a, rx.url);
    expectError(await a("POST", `/webhooks/${w.id}/redeliver`, { body: { since } }), "ERR_FORM_VALIDATION", "since");
    const until = (await a("GET", "/events", { query: { since, limit: 1 } })).json.data[0].createdAt;
    expect((await a("POST", `/webhooks/${w.id}/redeliver`, { body: { since, until } })).status).toBe(202);
    await rx.waitFor(1);
  }, 120_000);
});

describe("a delivery that cannot be signed (decisions §16)", () => {
  test("is a failed attempt with its reason on the retry schedule, then disables the subscription; no loop", async () => {
    const key1 = randomBytes(32).toString("base64");
    const key2 = randomBytes(32).toString("base64");
    const env = { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s", CRM_OUTBOX_POLL_MS: "50", CRM_LOG_LEVEL: "warn" };
    const first = await startServer({ env: "sandbox", extraEnv: { ...env, CRM_SECRET_KEY: key1 } });
    const rx = await receiver();
    const w = await hook(first.api, rx.url);
    await first.stop(true);
    const second = await startServer({ env: "sandbox", dir: first.dir, expectBootstrapKey: false, extraEnv: { ...env, CRM_SECRET_KEY: key2 } });
    try {
      const api = second.client({ projectId: first.projectId });
      await contact(api);
      const h = await waitFor("the subscription to be disabled", async () => {
        const got = (await api("GET", `/webhooks/${w.id}`)).json;
        return got.status === "disabled" ? got : undefined;
      });
      expect(h.lastFailureReason).toContain("signing secret");
      const attempts = (await api("GET", `/webhooks/${w.id}/attempts`)).json.data;
      expect(attempts).toHaveLength(3);
      for (const at of attempts) expect(at.error).toContain("signing secret");
      // On the schedule: about 1 s between attempts, not a tight loop.
      const times = attempts.map((a: any) => Date.parse(a.at)).sort();
      expect(times[1] - times[0]).toBeGreaterThanOrEqual(800);
      expect(rx.requests).toHaveLength(0);
      // One line per attempt (warn, warn, error: exhausted), one for disabling; no secret.
      const lines = second
        .stdout()
        .split("\n")
        .filter((l) => l.includes(attempts[0].deliveryId) || l.includes(w.id))
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
        "warn webhook attempt failed",
        "warn webhook attempt failed",
        "error webhook delivery exhausted",
        "error webhook subscription disabled",
      ]);
      for (const l of lines) expect(l).toMatchObject({ webhookId: w.id, projectId: first.projectId });
      expect(second.stdout()).not.toContain(w.secret);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
