/**
 * Delivery log lines (docs/operations.md §4.3, docs/webhooks.md §7), read from the real server's stdout (JSON lines):
 * a `warn` line when an attempt fails, an `error` line when a delivery is exhausted and when
 * a subscription is disabled, each with the ids and the reason, never the secret or a body;
 * `CRM_LOG_LEVEL=debug` adds one line per attempt, and the level filter drops what is below
 * it. Sandbox servers with a compressed retry schedule (3 attempts, 100 ms apart) deliver to
 * loopback receivers; every wait is on the subscription's state or the lines themselves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { expectStatus, ISO_RE } from "../helpers/expect.ts";
import { startReceiver, type Receiver, type Reply } from "../helpers/receiver.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

const SCHEDULE = "100ms,100ms"; // 3 attempts, then the delivery is exhausted
const WAIT_MS = 20_000;

interface LogLine {
  level: string;
  msg: string;
  [field: string]: any;
}

const servers: Record<"info" | "debug" | "error", ServerHandle> = {} as never;
const receivers: Receiver[] = [];

beforeAll(async () => {
  const start = (level: string) =>
    startServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: SCHEDULE, CRM_OUTBOX_POLL_MS: "50", CRM_LOG_LEVEL: level } });
  [servers.info, servers.debug, servers.error] = await Promise.all([start("info"), start("debug"), start("error")]);
}, 60_000);

afterAll(async () => {
  for (const r of receivers) await r.stop();
  await Promise.all(Object.values(servers).map((s) => s?.stop()));
}, 60_000);

/** The server's JSON log lines about subscription `webhookId`. */
const linesOf = (srv: ServerHandle, webhookId: string): LogLine[] =>
  srv
    .stdout()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine)
    .filter((l) => l.webhookId === webhookId);

/**
 * A subscription on `srv` to a receiver scripted with `replies` (then `then`), and one
 * contact whose creation it is sent. Returns what the log must never show.
 */
async function deliverOnce(srv: ServerHandle, replies: Reply[], then: Reply) {
  const rx = await startReceiver();
  receivers.push(rx);
  const marker = `receiver-body-${randomBytes(6).toString("hex")}`;
  await rx.script(
    replies.map((r) => ({ body: marker, ...r })),
    { body: marker, ...then },
  );
  const hook = await srv.api("POST", "/webhooks", { body: { url: rx.url, events: ["contact.created"] } });
  expectStatus(hook, 201);
  const email = `logged.${randomBytes(6).toString("hex")}@example.com`;
  expectStatus(await srv.api("POST", "/contacts", { body: { firstName: "Logged", email } }), 201);
  return { webhookId: hook.json.id as string, secret: hook.json.secret as string, email, marker, rx };
}

async function waitForLines(srv: ServerHandle, webhookId: string, n: number): Promise<LogLine[]> {
  return until(() => (linesOf(srv, webhookId).length >= n ? linesOf(srv, webhookId) : undefined), {
    timeoutMs: WAIT_MS,
    what: () => `${n} log lines about ${webhookId}; have:\n${JSON.stringify(linesOf(srv, webhookId), null, 1)}`,
  });
}

async function attemptsOf(srv: ServerHandle, webhookId: string): Promise<any[]> {
  const res = await srv.api("GET", `/webhooks/${webhookId}/attempts`, { query: { limit: 100 } });
  expectStatus(res, 200);
  return (res.json.data as any[]).reverse(); // oldest first
}

/** No secret (whole, or the base64 key inside it), no delivery body, no answer body in the log. */
function expectNothingSecret(srv: ServerHandle, d: { secret: string; email: string; marker: string }) {
  const out = srv.stdout();
  expect(out).not.toContain(d.secret);
  expect(out).not.toContain(d.secret.slice("whsec_".length));
  expect(out).not.toContain(d.email);
  expect(out).not.toContain(d.marker);
}

describe("at the default level (info)", () => {
  test("each failed attempt logs a warn line with the delivery, event, subscription and project ids, the attempt, status and reason; exhaustion and disabling log error lines; no secret, no body", async () => {
    const srv = servers.info;
    const d = await deliverOnce(srv, [], { status: 500 });
    const lines = await waitForLines(srv, d.webhookId, 4);
    const attempts = await attemptsOf(srv, d.webhookId);
    expect(attempts).toHaveLength(3);
    const { deliveryId, eventId } = attempts[0];
    const ids = { deliveryId, eventId, webhookId: d.webhookId, projectId: srv.projectId };
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
      "warn webhook attempt failed",
      "warn webhook attempt failed",
      "error webhook delivery exhausted",
      "error webhook subscription disabled",
    ]);
    expect(lines[0]).toMatchObject({ ...ids, attempt: 1, statusCode: 500, error: "HTTP 500" });
    expect(lines[1]).toMatchObject({ ...ids, attempt: 2, statusCode: 500, error: "HTTP 500" });
    for (const warn of lines.slice(0, 2)) expect(warn.nextAttemptAt).toMatch(ISO_RE);
    expect(lines[2]).toMatchObject({ ...ids, attempt: 3, statusCode: 500, error: "HTTP 500" });
    expect(lines[3]).toMatchObject({ ...ids, reason: `delivery ${deliveryId} failed 3 attempts; last: HTTP 500` });
    // The reason logged is the one the API reports.
    const hook = await srv.api("GET", `/webhooks/${d.webhookId}`);
    expect(hook.json).toMatchObject({ status: "disabled", lastFailureReason: lines[3]!.reason });
    expect(srv.stdout()).not.toContain('"level":"debug"');
    expectNothingSecret(srv, d);
  });

  test("a 410 Gone disables the subscription at once: one error line with the ids and the reason, no warn and no exhaustion line", async () => {
    const srv = servers.info;
    const d = await deliverOnce(srv, [], { status: 410 });
    const [line] = await waitForLines(srv, d.webhookId, 1);
    const [attempt] = await attemptsOf(srv, d.webhookId);
    expect(line).toMatchObject({
      level: "error",
      msg: "webhook subscription disabled",
      webhookId: d.webhookId,
      projectId: srv.projectId,
      deliveryId: attempt.deliveryId,
      eventId: attempt.eventId,
      reason: "the endpoint answered 410 Gone",
    });
    expect(linesOf(srv, d.webhookId)).toHaveLength(1);
    expectNothingSecret(srv, d);
  });

  test("a delivery that succeeds logs nothing at info", async () => {
    const srv = servers.info;
    const d = await deliverOnce(srv, [], { status: 200 });
    await d.rx.waitFor(1, WAIT_MS);
    await until(async () => (await attemptsOf(srv, d.webhookId)).length === 1, { timeoutMs: WAIT_MS, what: "the attempt to be recorded" });
    expect(linesOf(srv, d.webhookId)).toEqual([]);
  });
});

describe("CRM_LOG_LEVEL=debug", () => {
  test("adds one debug line per attempt (failed and succeeded) with the ids, status, duration and reason; the warn line stays", async () => {
    const srv = servers.debug;
    const d = await deliverOnce(srv, [{ status: 500 }], { status: 204 });
    const lines = await waitForLines(srv, d.webhookId, 3);
    const attempts = await attemptsOf(srv, d.webhookId);
    expect(attempts).toHaveLength(2);
    const ids = { deliveryId: attempts[0].deliveryId, eventId: attempts[0].eventId, webhookId: d.webhookId, projectId: srv.projectId };
    expect(lines.map((l) => `${l.level} ${l.msg} ${l.attempt}`)).toEqual(["debug webhook attempt 1", "warn webhook attempt failed 1", "debug webhook attempt 2"]);
    expect(lines[0]).toMatchObject({ ...ids, statusCode: 500, error: "HTTP 500" });
    expect(lines[2]).toMatchObject({ ...ids, statusCode: 204, error: null });
    for (const debug of [lines[0]!, lines[2]!]) expect(typeof debug.durationMs).toBe("number");
    expectNothingSecret(srv, d);
  });
});

describe("CRM_LOG_LEVEL=error", () => {
  test("drops the warn lines and keeps the error lines of an exhausted delivery", async () => {
    const srv = servers.error;
    const d = await deliverOnce(srv, [], { status: 503 });
    const lines = await waitForLines(srv, d.webhookId, 2);
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual(["error webhook delivery exhausted", "error webhook subscription disabled"]);
    // Nothing below error at all: not the failed attempts, not the request lines.
    expect(srv.stdout().split("\n").filter((l) => l.startsWith("{") && !l.includes('"level":"error"'))).toEqual([]);
  });
});
