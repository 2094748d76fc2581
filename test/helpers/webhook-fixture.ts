/**
 * What the webhook test files share (webhooks*.test.ts): one spawned server per file, the
 * receivers and subscriptions each test makes (removed after it, whatever project they
 * belong to), and waits on what the service itself reports (a subscription's state, its
 * recorded attempts, the outbox depth), never on a fixed time.
 */
import { afterAll, afterEach, beforeAll, expect } from "bun:test";
import { expectStatus } from "./expect.ts";
import { readMetrics } from "./metrics.ts";
import { serviceSignatureIndex, standardSignatureIndex, startReceiver, type Receiver, type ReceivedRequest, type Reply, type Rule } from "./receiver.ts";
import { startServer, walk, type Api, type ServerHandle } from "./server.ts";
import { until } from "./until.ts";

/** Generous: a wait ends when its condition holds, so only a broken service waits this long. */
export const WAIT_MS = 20_000;

export const SECRET_RE = /^whsec_[A-Za-z0-9+/]{43}=$/;

export interface Hook {
  id: string;
  secret: string;
  [k: string]: any;
}

export interface WebhookFixture {
  readonly srv: ServerHandle;
  /** The default project's request function. */
  readonly api: Api;
  /** A receiver stopped after the test. */
  receiver(initial?: Reply | Rule[], path?: string): Promise<Receiver>;
  /** POST /webhooks (201 asserted); deleted after the test. */
  createHook(url: string, events?: string[], description?: string, call?: Api): Promise<Hook>;
  /** Deletes subscription `id` (of the project of `call`) after the test. */
  track(id: string, call?: Api): void;
  getHook(id: string, call?: Api): Promise<any>;
  /** Polls GET /webhooks/{id} until `pred` holds. */
  waitForHook(id: string, pred: (h: any) => boolean, what: string, call?: Api): Promise<any>;
  /** The subscription's recorded attempts, newest first. */
  attempts(id: string, call?: Api): Promise<any[]>;
  /** Waits until at least `n` attempts are recorded; returns them, newest first. */
  waitForAttempts(id: string, n: number, call?: Api): Promise<any[]>;
  /**
   * Waits until no delivery is pending in the whole service (`crm_outbox_pending` 0): every
   * delivery queued so far has had its last attempt recorded, so whatever it was going to
   * send has arrived. "Nothing more arrives" is then exact, not a guess after a sleep.
   */
  untilOutboxDrained(): Promise<void>;
  newContact(extra?: Record<string, unknown>, call?: Api): Promise<any>;
  /** The project's events created at or after `since`, oldest first. */
  eventsSince(since: string, call?: Api): Promise<any[]>;
}

export function useWebhookServer(opts: { env?: "production" | "sandbox"; extraEnv?: Record<string, string> }): WebhookFixture {
  let srv: ServerHandle;
  const receivers: Receiver[] = [];
  const hooks: { id: string; call: Api }[] = [];
  let seq = 0;

  beforeAll(async () => {
    srv = await startServer({ env: opts.env ?? "sandbox", extraEnv: opts.extraEnv });
  }, 30_000);

  afterEach(async () => {
    // Each test owns its subscriptions and receivers; nothing leaks into the next one.
    for (const h of hooks.splice(0)) await h.call("DELETE", `/webhooks/${h.id}`);
    for (const r of receivers.splice(0)) await r.stop();
  });

  afterAll(async () => {
    await srv?.stop();
  }, 30_000);

  const fx: WebhookFixture = {
    get srv() {
      return srv;
    },
    get api() {
      return srv.api;
    },
    async receiver(initial = {}, path = "/hook") {
      const r = await startReceiver(initial, path);
      receivers.push(r);
      return r;
    },
    async createHook(url, events = ["*"], description, call) {
      const c = call ?? srv.api;
      const body: Record<string, unknown> = { url, events };
      if (description !== undefined) body.description = description;
      const res = await c("POST", "/webhooks", { body });
      expectStatus(res, 201);
      hooks.push({ id: res.json.id, call: c });
      return res.json as Hook;
    },
    track(id, call) {
      hooks.push({ id, call: call ?? srv.api });
    },
    async getHook(id, call) {
      const res = await (call ?? srv.api)("GET", `/webhooks/${id}`);
      expectStatus(res, 200);
      return res.json;
    },
    async waitForHook(id, pred, what, call) {
      let last: any;
      return until(
        async () => {
          last = await fx.getHook(id, call);
          return pred(last) ? last : undefined;
        },
        { timeoutMs: WAIT_MS, intervalMs: 50, what: () => `subscription ${id} to reach ${what}; last: ${JSON.stringify(last)}` },
      );
    },
    async attempts(id, call) {
      const { items } = await walk(call ?? srv.api, `/webhooks/${id}/attempts`, { limit: 200 });
      return items;
    },
    async waitForAttempts(id, n, call) {
      let last: any[] = [];
      return until(
        async () => {
          last = await fx.attempts(id, call);
          return last.length >= n ? last : undefined;
        },
        { timeoutMs: WAIT_MS, intervalMs: 50, what: () => `${n} attempts of ${id} (have ${last.length})` },
      );
    },
    async untilOutboxDrained() {
      let last: number | undefined;
      await until(
        async () => {
          last = (await readMetrics(srv.origin)).value("crm_outbox_pending");
          return last === 0;
        },
        { timeoutMs: WAIT_MS, intervalMs: 50, what: () => `crm_outbox_pending 0 (is ${last})` },
      );
    },
    async newContact(extra = {}, call) {
      const n = ++seq;
      const res = await (call ?? srv.api)("POST", "/contacts", {
        body: { firstName: `Hook${n}`, lastName: "Tester", email: `hook${n}.${Date.now()}@example.com`, ...extra },
      });
      expectStatus(res, 201);
      return res.json;
    },
    async eventsSince(since, call) {
      const { items } = await walk(call ?? srv.api, "/events", { since, limit: 200 });
      return items;
    },
  };
  return fx;
}

/** Resolves once the wall clock has moved past the current millisecond (for strict time bounds). */
export async function nextMillisecond(): Promise<string> {
  const now = Date.now();
  await until(() => Date.now() > now, { intervalMs: 1, what: "the next millisecond" });
  return new Date().toISOString();
}

/** Both signatures of a delivery verify with `secret` (our own HMAC code). */
export function expectVerified(secret: string, req: ReceivedRequest) {
  expect(serviceSignatureIndex(secret, req), "own HMAC check of X-Service-Signature").toBeGreaterThanOrEqual(0);
  expect(standardSignatureIndex(secret, req), "own HMAC check of webhook-signature").toBeGreaterThanOrEqual(0);
}

export const stdHeaders = (req: ReceivedRequest) => ({
  "webhook-id": req.headers["webhook-id"]!,
  "webhook-timestamp": req.headers["webhook-timestamp"]!,
  "webhook-signature": req.headers["webhook-signature"]!,
});
