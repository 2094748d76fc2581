/**
 * Issue 11: the service's time windows, tested without waiting. The real service runs in
 * this process (SQLite file, or PostgreSQL under CRM_TEST_BACKEND=postgres; routes, socket,
 * dispatcher, jobs) with one thing replaced: its
 * clock (src/lib/clock.ts), a ManualClock the tests move forward. Subscribers are a real
 * loopback receiver. Windows: Idempotency-Key 24 h (docs/api.md §8), the rotated secret's
 * 24 h and the 30-day event log (docs/api.md §14), key expiry (docs/api.md §2.1), the dispatcher's due times and held
 * claims (docs/webhooks.md §2.2; its stuck-tick minute: test/unit/dispatcher-alive.test.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { DAY, HOUR, ManualClock } from "../helpers/clock.ts";
import { startInProcess, type InProcessServer } from "../helpers/in-process.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { until } from "../helpers/until.ts";

const MINUTE = 60_000;
// Retries an hour apart: a retry that comes without the clock reaching it is not the wall clock's.
const ENV: Record<string, string> = { CRM_ENV: "sandbox", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_RETRY_SCHEDULE: "1h,1h,1h" };

// A year ahead of the wall clock: whatever still read the wall clock would stand out.
const clock = new ManualClock(Date.now() + 365 * DAY);
let srv: InProcessServer;
let receiver: ReturnType<typeof startLoopbackReceiver>;

interface Received {
  path: string;
  headers: Headers;
  body: string;
  json: any;
}

/** A subscriber on loopback: records every request; answers each path's status (200 unless set). */
function startLoopbackReceiver() {
  const received: Received[] = [];
  const statuses = new Map<string, number[]>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = await req.text();
      received.push({ path, headers: req.headers, body, json: JSON.parse(body) });
      return new Response("ok", { status: statuses.get(path)?.shift() ?? 200 });
    },
  });
  return {
    url: (path: string) => `http://127.0.0.1:${server.port}${path}`,
    at: (path: string) => received.filter((r) => r.path === path),
    /** The next answers on `path`, in order; 200 after them. */
    answer: (path: string, ...codes: number[]) => statuses.set(path, codes),
    stop: () => server.stop(true),
  };
}

const cli = (args: string[]) => srv.cli(args);

async function newProject(name: string): Promise<{ id: string; key: string }> {
  const { id, key } = await srv.newProject({ name });
  return { id, key };
}

async function call(key: string, method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, ...opts.headers };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${srv.baseUrl}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

async function subscribe(key: string, path: string) {
  const created = await call(key, "POST", "/webhooks", { body: { url: receiver.url(path), events: ["contact.created"] } });
  expect(created.status).toBe(201);
  return created.json as { id: string; secret: string };
}

/** Creates a contact and waits for its contact.created delivery on `path`. */
async function deliveryOf(key: string, path: string, firstName: string): Promise<Received> {
  const created = await call(key, "POST", "/contacts", { body: { firstName } });
  expect(created.status).toBe(201);
  return until(() => receiver.at(path).find((r) => r.json.data.contact.firstName === firstName), { what: `the delivery of ${firstName}` });
}

/** Both signature headers, as lists in the order sent (docs/webhooks.md §3, §2). */
function signaturesOf(r: Received) {
  const parts = r.headers.get("x-service-signature")!.split(",");
  return {
    t: Number(parts.find((p) => p.startsWith("t="))!.slice(2)),
    v1: parts.filter((p) => p.startsWith("v1=")).map((p) => p.slice(3)),
    standard: r.headers.get("webhook-signature")!.split(" "),
  };
}

/** Our own HMACs: X-Service-Signature keyed with the whole whsec_ secret; Standard Webhooks' with the bytes it encodes. */
const serviceSignature = (secret: string, t: number, body: string) => createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
const standardSignature = (secret: string, r: Received, t: number) =>
  `v1,${createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${r.headers.get("webhook-id")}.${t}.${r.body}`).digest("base64")}`;

const expectSignedWith = (r: Received, secrets: string[]) => {
  const { t, v1, standard } = signaturesOf(r);
  expect(t).toBe(Math.floor(clock.now() / 1000)); // the attempt's `t` is the service's clock
  expect(v1).toEqual(secrets.map((s) => serviceSignature(s, t, r.body)));
  expect(standard).toEqual(secrets.map((s) => standardSignature(s, r, t)));
};

/** Reads the database directly, as the retention job leaves it. */
async function storedEventIds(projectId: string): Promise<string[]> {
  const db = await openSideDatabase(srv.env, { readonly: true });
  try {
    return (await db.all<{ id: string }>("SELECT id FROM events WHERE project_id = ? ORDER BY created_at", projectId)).map((r) => r.id);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  receiver = startLoopbackReceiver();
  // CRM_TEST_BACKEND=postgres: the service's own database.
  srv = await startInProcess({ env: ENV, overrides: { clock } });
});

afterAll(async () => {
  await srv?.stop();
  receiver?.stop();
});

test("an Idempotency-Key replays within 24 h and, once 24 h have passed, the same key and body run anew", async () => {
  const { key } = await newProject("idempotency-window");
  const post = () => call(key, "POST", "/contacts", { body: { firstName: "Once" }, headers: { "Idempotency-Key": "window-1" } });
  const first = await post();
  expect(first.status).toBe(201);
  expect(first.headers.get("idempotent-replayed")).toBeNull();

  clock.advance(24 * HOUR - MINUTE);
  const replay = await post();
  expect(replay.status).toBe(201);
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
  expect(replay.json.contactId).toBe(first.json.contactId);

  clock.advance(2 * MINUTE);
  const anew = await post();
  expect(anew.status).toBe(201);
  expect(anew.headers.get("idempotent-replayed")).toBeNull();
  expect(anew.json.contactId).not.toBe(first.json.contactId);
  const list = await call(key, "GET", "/contacts");
  expect(list.json.data.map((c: { firstName: string }) => c.firstName)).toEqual(["Once", "Once"]);
});

test("after rotate-secret, deliveries carry two v1= signatures (new first, old second) and after 24 h only the new one", async () => {
  const { key } = await newProject("rotation-window");
  const webhook = await subscribe(key, "/rotation");
  expectSignedWith(await deliveryOf(key, "/rotation", "BeforeRotation"), [webhook.secret]);

  const rotated = await call(key, "POST", `/webhooks/${webhook.id}/rotate-secret`);
  expect(rotated.status).toBe(200);
  const fresh = rotated.json.secret as string;
  expect(fresh).not.toBe(webhook.secret);
  expectSignedWith(await deliveryOf(key, "/rotation", "JustRotated"), [fresh, webhook.secret]);

  clock.advance(24 * HOUR - MINUTE);
  expectSignedWith(await deliveryOf(key, "/rotation", "Rotated23h59"), [fresh, webhook.secret]);

  clock.advance(2 * MINUTE);
  expectSignedWith(await deliveryOf(key, "/rotation", "Rotated24h01"), [fresh]);
});

test("events older than 30 days are no longer listed by GET /events and the retention job removes them", async () => {
  const project = await newProject("retention-window");
  const eventNames = async () => {
    const page = await call(project.key, "GET", "/events");
    expect(page.status).toBe(200);
    return page.json.data.map((e: { data: { contact: { firstName: string } } }) => e.data.contact.firstName);
  };
  expect((await call(project.key, "POST", "/contacts", { body: { firstName: "Old" } })).status).toBe(201);
  clock.advance(29 * DAY);
  expect((await call(project.key, "POST", "/contacts", { body: { firstName: "Recent" } })).status).toBe(201);
  expect(await eventNames()).toEqual(["Old", "Recent"]);
  const [oldId, recentId] = await storedEventIds(project.id);

  clock.advance(DAY + MINUTE); // "Old" is now 30 days and a minute old
  expect(await eventNames()).toEqual(["Recent"]);
  expect(await storedEventIds(project.id)).toEqual([oldId!, recentId!]); // out of the window, still stored until the job runs

  await srv.service.runJob("retention");
  expect(await storedEventIds(project.id)).toEqual([recentId!]);
  expect(await eventNames()).toEqual(["Recent"]);
});

test("an expired key is refused (401) once the service's clock passes its expiry", async () => {
  const project = await newProject("key-expiry");
  const expiresAt = new Date(clock.now() + HOUR).toISOString();
  const expiring = await cli(["key", "create", "--project", project.id, "--scopes", "contacts:read", "--expires-at", expiresAt]);
  expect((await call(expiring.key, "GET", "/ping")).status).toBe(200);

  clock.advance(HOUR - MINUTE);
  expect((await call(expiring.key, "GET", "/ping")).status).toBe(200);

  clock.advance(2 * MINUTE);
  const refused = await call(expiring.key, "GET", "/ping");
  expect(refused.status).toBe(401);
  expect(refused.json.code).toBe("ERR_UNAUTHORIZED");
  expect((await call(project.key, "GET", "/ping")).status).toBe(200); // a key without expiry is unaffected
});

/** The subscription's recorded attempts (GET /webhooks/{id}/attempts, newest first), once there are `n` or more. */
function attemptsRecorded(key: string, webhookId: string, n: number): Promise<any[]> {
  return until(
    async () => {
      const page = await call(key, "GET", `/webhooks/${webhookId}/attempts`);
      return page.json.data.length >= n && page.json.data;
    },
    { what: `${n} recorded attempt(s) of ${webhookId}` },
  );
}

/**
 * Proof that the dispatcher has looked since the clock moved: a delivery to another
 * subscription, made after it, has arrived (a condition, not a fixed wait).
 */
async function dispatcherHasLooked(key: string, path: string, firstName: string): Promise<void> {
  await deliveryOf(key, path, firstName);
}

test("a failed delivery's retry falls due when the service's clock reaches it, never before", async () => {
  const { key } = await newProject("retry-due");
  const webhook = await subscribe(key, "/retry");
  const marker = await newProject("retry-due-marker");
  await subscribe(marker.key, "/retry-marker");
  receiver.answer("/retry", 500);
  const first = await deliveryOf(key, "/retry", "Retried");
  // The retry is due 1 h after the failure is recorded, by the clock: let that happen first.
  await attemptsRecorded(key, webhook.id, 1);

  clock.advance(50 * MINUTE); // the schedule's 1 h, less its 10 % jitter, is 54 min
  await dispatcherHasLooked(marker.key, "/retry-marker", "Marker50min");
  expect(receiver.at("/retry")).toHaveLength(1);

  clock.advance(20 * MINUTE); // 70 min: past 1 h plus its jitter
  const second = await until(() => receiver.at("/retry")[1], { timeoutMs: 5_000, what: "the retry after the clock reached it" });
  expect(second.headers.get("webhook-id")).toBe(first.headers.get("webhook-id")!);
  expect(second.body).toBe(first.body);
  expect(signaturesOf(second).t).toBe(Math.floor(clock.now() / 1000));
});

test("a delivery whose outcome could not be written is held until the service's clock passes its back-off, then sent again", async () => {
  const { key } = await newProject("held-claim");
  const webhook = await subscribe(key, "/held");
  const marker = await newProject("held-claim-marker");
  await subscribe(marker.key, "/held-marker");
  const db = await openSideDatabase(srv.env);
  // The attempt cannot be recorded: the dispatcher keeps the delivery claimed for 5 s by its clock.
  const [refuse, allow] =
    db.backend === "sqlite"
      ? [
          `CREATE TRIGGER test_attempt_unrecorded BEFORE INSERT ON delivery_attempts WHEN NEW.webhook_id = '${webhook.id}' BEGIN SELECT RAISE(ABORT, 'test: attempt not recorded'); END`,
          "DROP TRIGGER IF EXISTS test_attempt_unrecorded",
        ]
      : [
          "CREATE FUNCTION test_attempt_unrecorded() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: attempt not recorded'; END $$; " +
            `CREATE TRIGGER test_attempt_unrecorded BEFORE INSERT ON delivery_attempts FOR EACH ROW WHEN (NEW.webhook_id = '${webhook.id}') EXECUTE FUNCTION test_attempt_unrecorded()`,
          "DROP TRIGGER IF EXISTS test_attempt_unrecorded ON delivery_attempts; DROP FUNCTION IF EXISTS test_attempt_unrecorded()",
        ];
  try {
    await db.run(refuse);
    const first = await deliveryOf(key, "/held", "Held");
    await dispatcherHasLooked(marker.key, "/held-marker", "MarkerHeld1");
    await db.run(allow);
    await dispatcherHasLooked(marker.key, "/held-marker", "MarkerHeld2");
    expect(receiver.at("/held")).toHaveLength(1); // still held: the clock has not moved

    clock.advance(6_000);
    const again = await until(() => receiver.at("/held")[1], { timeoutMs: 5_000, what: "the held delivery sent again" });
    expect(again.headers.get("webhook-id")).toBe(first.headers.get("webhook-id")!);
    const recorded = await attemptsRecorded(key, webhook.id, 1);
    expect(recorded.map((a) => a.statusCode)).toEqual([200]); // the first try left no record
  } finally {
    await db.run(allow);
    await db.close();
  }
});
