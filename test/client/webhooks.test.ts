/**
 * Webhook verification against real deliveries (docs/webhooks.md §3, docs/api.md §16): a
 * sandbox server delivers to a loopback receiver; the client's `verifyWebhook` and the
 * code blocks of docs/webhooks.md (standardwebhooks, plain HMAC, the handler with dedupe,
 * catching up with redelivery) are run on what arrived.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createClient, verifyWebhook, WebhookVerificationError, type CrmClient, type Schema, type WebhookEvent, type WebhookHeaders } from "@crm-service/client";
import { signatureHeaders } from "../../src/webhooks/signature.ts";
import type { ReceivedRequest } from "../helpers/receiver.ts";
import { useWebhookServer } from "../helpers/webhook-fixture.ts";
import { loadDocSnippet } from "./doc-snippets.ts";

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(30_000);

const fx = useWebhookServer({
  env: "sandbox",
  extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "2000" },
});

const DOC = "docs/webhooks.md";
let seq = 0;

/** A client of the default project, a receiver, and a subscription (deleted after the test). */
async function subscribed(events: Schema<"CreateWebhook">["events"] = ["*"]) {
  const crm = createClient({ baseUrl: fx.srv.origin, apiKey: fx.srv.key });
  const rx = await fx.receiver();
  const created = await crm.POST("/webhooks", { body: { url: rx.url, events } });
  expect(created.response.status).toBe(201);
  const hook = created.data!;
  fx.track(hook.id);
  return { crm, rx, hook };
}

/** Creates a contact through `crm` and returns its delivery as received. */
async function contactDelivery(crm: CrmClient, rx: Awaited<ReturnType<typeof fx.receiver>>) {
  const created = await crm.POST("/contacts", { body: { firstName: `Signed${++seq}`, email: `signed${seq}.${Date.now()}@example.com` } });
  expect(created.response.status).toBe(201);
  const [req] = await rx.waitUntil((reqs) => reqs.some((r) => r.json?.data?.contact?.contactId === created.data!.contactId), 20_000, "the contact.created delivery");
  return { contact: created.data!, req: rx.requests.find((r) => r.json?.data?.contact?.contactId === created.data!.contactId) ?? req! };
}

const without = (headers: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));

/** The reason `verifyWebhook` refused, or "accepted". */
async function outcome(secret: string, headers: WebhookHeaders, body: string | Uint8Array, options?: Parameters<typeof verifyWebhook>[3]) {
  try {
    await verifyWebhook(secret, headers, body, options);
    return "accepted";
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
}

const tamper = (req: ReceivedRequest) => req.text.replace('"firstName":"Signed', '"firstName":"Forged');
const secondsOf = (req: ReceivedRequest) => Number(req.headers["webhook-timestamp"]);

describe("verifyWebhook on real deliveries", () => {
  test("a contact.created delivery verifies with its secret, headers as a record or a Headers object, body as bytes or text; the event is typed", async () => {
    const { crm, rx, hook } = await subscribed(["contact.created"]);
    const { contact, req } = await contactDelivery(crm, rx);
    for (const [headers, body] of [
      [req.headers, req.raw],
      [new Headers(req.headers), req.text],
      [Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toUpperCase(), v])), req.raw.buffer as ArrayBuffer],
    ] as const) {
      const event: WebhookEvent = await verifyWebhook(hook.secret, headers, body);
      expect(event.id).toBe(req.json.id);
      if (event.event !== "contact.created") throw new Error(`unexpected ${event.event}`);
      expect(event.data.contact.contactId).toBe(contact.contactId);
    }
  });

  test("each scheme alone verifies, and every scheme present must verify", async () => {
    const { crm, rx, hook } = await subscribed(["contact.created"]);
    const { req } = await contactDelivery(crm, rx);
    const standardOnly = without(req.headers, "x-service-signature");
    const serviceOnly = without(req.headers, "webhook-signature", "webhook-id", "webhook-timestamp");
    expect(await outcome(hook.secret, standardOnly, req.raw)).toBe("accepted");
    expect(await outcome(hook.secret, serviceOnly, req.raw)).toBe("accepted");
    const badService = { ...req.headers, "x-service-signature": req.headers["x-service-signature"]!.replace(/v1=[0-9a-f]+/, `v1=${"0".repeat(64)}`) };
    const badStandard = { ...req.headers, "webhook-signature": `v1,${btoa("x".repeat(32))}` };
    expect(await outcome(hook.secret, badService, req.raw)).toBe("signature_mismatch");
    expect(await outcome(hook.secret, badStandard, req.raw)).toBe("signature_mismatch");
    expect(await outcome(hook.secret, without(req.headers, "webhook-timestamp"), req.raw)).toBe("malformed_header");
    expect(await outcome(hook.secret, { "content-type": "application/json" }, req.raw)).toBe("missing_signature");
  });

  test("a tampered body, or another subscription's secret, is refused", async () => {
    const { crm, rx, hook } = await subscribed(["contact.created"]);
    const other = (await subscribed(["contact.created"])).hook;
    const { req } = await contactDelivery(crm, rx);
    expect(await outcome(hook.secret, req.headers, tamper(req))).toBe("signature_mismatch");
    expect(await outcome(hook.secret, without(req.headers, "x-service-signature"), tamper(req))).toBe("signature_mismatch");
    expect(await outcome(other.secret, req.headers, req.raw)).toBe("signature_mismatch");
  });

  test("a timestamp more than 300 s from now is refused, 300 s is not; toleranceSeconds narrows the window", async () => {
    const { crm, rx, hook } = await subscribed(["contact.created"]);
    const { req } = await contactDelivery(crm, rx);
    const t = secondsOf(req);
    expect(await outcome(hook.secret, req.headers, req.raw, { now: (t + 300) * 1000 })).toBe("accepted");
    expect(await outcome(hook.secret, req.headers, req.raw, { now: new Date((t - 300) * 1000) })).toBe("accepted");
    expect(await outcome(hook.secret, req.headers, req.raw, { now: (t + 301) * 1000 })).toBe("timestamp_out_of_tolerance");
    expect(await outcome(hook.secret, req.headers, req.raw, { now: (t - 301) * 1000 })).toBe("timestamp_out_of_tolerance");
    expect(await outcome(hook.secret, req.headers, req.raw, { now: (t + 61) * 1000, toleranceSeconds: 60 })).toBe("timestamp_out_of_tolerance");
    // A delivery signed correctly ten minutes ago (a replay) is refused by the clock alone.
    const old = signatureHeaders([hook.secret], req.headers["webhook-id"]!, t - 600, req.text);
    expect(await outcome(hook.secret, { ...req.headers, ...old }, req.raw)).toBe("timestamp_out_of_tolerance");
  });

  test("after rotate-secret the ping carries two signatures: the new and the old secret both verify it; the ping is typed", async () => {
    const { crm, rx, hook } = await subscribed();
    const rotated = await crm.POST("/webhooks/{id}/rotate-secret", { params: { path: { id: hook.id } } });
    const fresh = rotated.data!.secret;
    expect(fresh).not.toBe(hook.secret);
    const ping = await crm.POST("/webhooks/{id}/test", { params: { path: { id: hook.id } } });
    expect(ping.data).toMatchObject({ delivered: true, statusCode: 200 });
    const [req] = await rx.waitFor(1);
    expect(req!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [fresh, hook.secret]) {
      const event = await verifyWebhook(secret, req!.headers, req!.raw);
      if (event.event !== "ping") throw new Error(`unexpected ${event.event}`);
      expect(event.data.webhookId).toBe(hook.id);
    }
  });
});

describe("the code of docs/webhooks.md on real deliveries", () => {
  type Handler = { handleDelivery(request: Request, secret: string, onEvent: (event: WebhookEvent) => Promise<void>): Promise<Response> };
  type Standard = { verifyWithStandardWebhooks(secret: string, headers: Record<string, string>, rawBody: string): any };
  type Plain = { verifyServiceSignature(secret: string, header: string, rawBody: string, toleranceSeconds?: number): boolean | Promise<boolean> };

  test("receive-with-client.ts: acknowledges a delivery, handles a repeat of it once, refuses a tampered one with 400", async () => {
    const { handleDelivery } = await loadDocSnippet<Handler>(DOC, "receive-with-client.ts");
    const { crm, rx, hook } = await subscribed(["contact.created"]);
    const { req } = await contactDelivery(crm, rx);
    const handled: WebhookEvent[] = [];
    const onEvent = async (event: WebhookEvent) => void handled.push(event);
    const replay = (body: string | Uint8Array) => new Request(rx.url, { method: "POST", headers: req.headers, body: body as BodyInit });
    expect((await handleDelivery(replay(req.raw), hook.secret, onEvent)).status).toBe(204);
    expect((await handleDelivery(replay(req.raw), hook.secret, onEvent)).status).toBe(204);
    expect(handled.map((e) => e.id)).toEqual([req.json.id]);
    expect((await handleDelivery(replay(tamper(req)), hook.secret, onEvent)).status).toBe(400);
    expect(handled).toHaveLength(1);
  });

  test("verify-with-standardwebhooks.ts: the library takes the whsec_ secret as is and verifies both signatures of a rotation", async () => {
    const { verifyWithStandardWebhooks } = await loadDocSnippet<Standard>(DOC, "verify-with-standardwebhooks.ts");
    const { crm, rx, hook } = await subscribed(["contact.created"]);
    const { req } = await contactDelivery(crm, rx);
    expect(verifyWithStandardWebhooks(hook.secret, req.headers, req.text).id).toBe(req.json.id);
    expect(() => verifyWithStandardWebhooks(hook.secret, req.headers, tamper(req))).toThrow();
    const old = signatureHeaders([hook.secret], req.headers["webhook-id"]!, secondsOf(req) - 600, req.text);
    expect(() => verifyWithStandardWebhooks(hook.secret, { ...req.headers, ...old }, req.text)).toThrow();

    const fresh = (await crm.POST("/webhooks/{id}/rotate-secret", { params: { path: { id: hook.id } } })).data!.secret;
    await crm.POST("/webhooks/{id}/test", { params: { path: { id: hook.id } } });
    const ping = (await rx.waitUntil((reqs) => reqs.some((r) => r.json?.event === "ping"))).find((r) => r.json?.event === "ping")!;
    for (const secret of [fresh, hook.secret]) expect(verifyWithStandardWebhooks(secret, ping.headers, ping.text).event).toBe("ping");
  });

  for (const name of ["verify-with-node-crypto.ts", "verify-with-web-crypto.ts"]) {
    test(`${name}: X-Service-Signature verifies; a tampered body, another secret and an old timestamp do not`, async () => {
      const { verifyServiceSignature } = await loadDocSnippet<Plain>(DOC, name);
      const { crm, rx, hook } = await subscribed(["contact.created"]);
      const other = (await subscribed(["contact.created"])).hook;
      const { req } = await contactDelivery(crm, rx);
      const header = req.headers["x-service-signature"]!;
      expect(await verifyServiceSignature(hook.secret, header, req.text)).toBe(true);
      expect(await verifyServiceSignature(hook.secret, header, tamper(req))).toBe(false);
      expect(await verifyServiceSignature(other.secret, header, req.text)).toBe(false);
      const old = signatureHeaders([hook.secret], "d", secondsOf(req) - 600, req.text)["X-Service-Signature"]!;
      expect(await verifyServiceSignature(hook.secret, old, req.text)).toBe(false);
      // During a rotation: either v1 entry may be the receiver's.
      const both = signatureHeaders([other.secret, hook.secret], "d", secondsOf(req), req.text)["X-Service-Signature"]!;
      expect(await verifyServiceSignature(hook.secret, both, req.text)).toBe(true);
      expect(await verifyServiceSignature(hook.secret, "t=1,v1=zz", req.text)).toBe(false);
    });
  }

  test("catching up: a disabled subscription refuses redelivery (409); re-enabled, the event log lists the event and its redelivery has the same event id and a new delivery id", async () => {
    const { crm, rx, hook } = await subscribed(["contact.created"]);
    const id = hook.id;
    const since = new Date(Date.now() - 1000).toISOString();
    const { req } = await contactDelivery(crm, rx);
    await crm.PATCH("/webhooks/{id}", { params: { path: { id } }, body: { status: "disabled" } });
    const refused = await crm.POST("/webhooks/{id}/redeliver", { params: { path: { id } }, body: { since } });
    expect(refused.error).toMatchObject({ code: "ERR_CONFLICT" });

    const logged: string[] = [];
    for await (const event of crm.paginate("/events", { params: { query: { since } } })) logged.push(event.id);
    expect(logged).toContain(req.json.id);
    await crm.PATCH("/webhooks/{id}", { params: { path: { id } }, body: { status: "active" } });
    const { data } = await crm.POST("/webhooks/{id}/redeliver", { params: { path: { id } }, body: { eventIds: [req.json.id] } });
    expect(data).toEqual({ queued: 1 });
    const [first, again] = await rx.waitUntil((reqs) => reqs.filter((r) => r.json?.id === req.json.id).length >= 2).then(() => rx.forEvent(req.json.id));
    expect(again!.headers["webhook-id"]).not.toBe(first!.headers["webhook-id"]);
    expect((await verifyWebhook(hook.secret, again!.headers, again!.raw)).id).toBe(req.json.id);
  });
});
