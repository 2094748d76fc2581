/**
 * Delivery signatures (docs/webhooks.md §3, §2.2): `X-Service-Signature` is Stripe's
 * scheme (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` keyed with the whole
 * secret string, `whsec_` included); `webhook-signature` is Standard Webhooks'
 * (`v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">` keyed with the 32 bytes the secret's base64
 * part encodes). During a rotation's 24 h overlap both carry two signatures, the new one
 * first. The official libraries are the reference; secrets, ids and times are fixed.
 */
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { generateSecret, signatureHeaders, signingSecrets, type SealedSecrets } from "../../src/webhooks/signature.ts";

const stripe = new Stripe("sk_test_x");
const NEW = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const OLD = `whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => i * 5)).toString("base64")}`;
const T = 1_767_225_600; // 2026-01-01T00:00:00Z, unix seconds
const ID = "dlv_01TESTDELIVERY";
const BODY = JSON.stringify({ id: "evt_1", object: "event", event: "contact.created", data: { contact: { firstName: "Zoë" } } });

/** Stripe's own check of a header received at `receivedAt` (unix seconds), with its 300 s tolerance. */
const verify = (body: string, header: string, secret: string, receivedAt: number) =>
  stripe.webhooks.signature!.verifyHeaderAsync(body, header, secret, 300, undefined, receivedAt * 1000);

/** The v1 values of an `X-Service-Signature` header, in order. */
const v1s = (header: string) => header.split(",").filter((p) => p.startsWith("v1=")).map((p) => p.slice(3));

describe("X-Service-Signature (Stripe's scheme, keyed with the whole secret string)", () => {
  const headers = signatureHeaders([NEW], ID, T, BODY);

  test("it is t=<unix seconds>,v1=<64 hex digits>", () => {
    expect(headers["X-Service-Signature"]).toMatch(/^t=1767225600,v1=[0-9a-f]{64}$/);
  });

  test("v1 is the hex HMAC-SHA256 of `<t>.<raw body>` keyed with the secret string, whsec_ included", () => {
    const expected = createHmac("sha256", NEW).update(`${T}.${BODY}`).digest("hex");
    expect(v1s(headers["X-Service-Signature"]!)).toEqual([expected]);
    // Keyed with the decoded bytes instead, it would be another value: the prefix is part of the key.
    expect(expected).not.toBe(createHmac("sha256", Buffer.from(NEW.slice(6), "base64")).update(`${T}.${BODY}`).digest("hex"));
  });

  test("the stripe package builds the same header and verifies it (300 s window, at a fixed time)", async () => {
    expect(headers["X-Service-Signature"]).toBe(await stripe.webhooks.generateTestHeaderStringAsync({ payload: BODY, secret: NEW, timestamp: T }));
    expect(await verify(BODY, headers["X-Service-Signature"]!, NEW, T + 300)).toBe(true);
    await expect(verify(BODY, headers["X-Service-Signature"]!, NEW, T + 301)).rejects.toThrow(/tolerance/);
  });

  test("the signature covers the raw bytes: another body, time or secret does not verify", async () => {
    const header = headers["X-Service-Signature"]!;
    expect(await verify(BODY, header, NEW, T)).toBe(true);
    await expect(verify(`${BODY} `, header, NEW, T)).rejects.toThrow(/signature/i);
    await expect(verify(BODY, header.replace(`t=${T}`, `t=${T + 1}`), NEW, T)).rejects.toThrow(/signature/i);
    await expect(verify(BODY, header, OLD, T)).rejects.toThrow(/signature/i);
  });

  test("the same body is signed with each attempt's own t", async () => {
    const later = signatureHeaders([NEW], ID, T + 600, BODY);
    expect(later["X-Service-Signature"]).toStartWith(`t=${T + 600},v1=`);
    expect(v1s(later["X-Service-Signature"]!)).not.toEqual(v1s(headers["X-Service-Signature"]!));
    expect(await verify(BODY, later["X-Service-Signature"]!, NEW, T + 600)).toBe(true);
  });
});

describe("webhook-id, webhook-timestamp, webhook-signature (Standard Webhooks)", () => {
  const headers = signatureHeaders([NEW], ID, T, BODY);

  test("webhook-id is the delivery id, the same as X-Service-Delivery; webhook-timestamp is t", () => {
    expect(headers["webhook-id"]).toBe(ID);
    expect(headers["X-Service-Delivery"]).toBe(ID);
    expect(headers["webhook-timestamp"]).toBe(String(T));
  });

  test("webhook-signature is v1,<base64 HMAC-SHA256 of `<id>.<t>.<body>`> keyed with the secret's 32 decoded bytes", () => {
    const key = Buffer.from(NEW.slice("whsec_".length), "base64");
    expect(key.length).toBe(32);
    expect(headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", key).update(`${ID}.${T}.${BODY}`).digest("base64")}`);
  });

  test("the standardwebhooks package signs the same way", () => {
    expect(headers["webhook-signature"]).toBe(new StandardWebhook(NEW).sign(ID, new Date(T * 1000), BODY));
  });

  test("the headers are exactly the delivery id, both signature schemes and the timestamp", () => {
    expect(Object.keys(headers).sort()).toEqual(["X-Service-Delivery", "X-Service-Signature", "webhook-id", "webhook-signature", "webhook-timestamp"]);
  });
});

describe("a rotated secret in its 24 h overlap: two signatures, the new one first", () => {
  const headers = signatureHeaders([NEW, OLD], ID, T, BODY);

  test("X-Service-Signature carries t once, then v1 of the new secret, then v1 of the old", () => {
    const [n, o] = [NEW, OLD].map((s) => createHmac("sha256", s).update(`${T}.${BODY}`).digest("hex"));
    expect(headers["X-Service-Signature"]).toBe(`t=${T},v1=${n},v1=${o}`);
  });

  test("stripe verifies the header with either secret", async () => {
    for (const secret of [NEW, OLD]) expect(await verify(BODY, headers["X-Service-Signature"]!, secret, T)).toBe(true);
  });

  test("webhook-signature carries both, space-separated, the new one first", () => {
    const expected = [NEW, OLD].map((s) => new StandardWebhook(s).sign(ID, new Date(T * 1000), BODY)).join(" ");
    expect(headers["webhook-signature"]).toBe(expected);
  });
});

describe("generateSecret: whsec_ + standard base64 of 32 random bytes", () => {
  test("the base64 part is standard base64 that decodes to exactly 32 bytes", () => {
    for (let i = 0; i < 50; i++) {
      const secret = generateSecret();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const bytes = Buffer.from(secret.slice(6), "base64");
      expect(bytes.length).toBe(32);
      expect(bytes.toString("base64")).toBe(secret.slice(6));
    }
  });

  test("two secrets differ", () => {
    expect(new Set(Array.from({ length: 20 }, generateSecret)).size).toBe(20);
  });

  test("a generated secret is one the standardwebhooks package accepts", () => {
    const secret = generateSecret();
    const headers = signatureHeaders([secret], ID, T, BODY);
    expect(headers["webhook-signature"]).toBe(new StandardWebhook(secret).sign(ID, new Date(T * 1000), BODY));
  });
});

describe("signingSecrets: the current secret, then the previous one while its overlap lasts", () => {
  const NOW = Date.parse("2026-01-01T12:00:00.000Z");
  /** Opens a sealed value by dropping its `sealed:` prefix, so the test sees open() was applied. */
  const box = { open: (sealed: string) => sealed.replace(/^sealed:/, "") };
  const row = (previous: string | null, until: string | null): SealedSecrets => ({
    secret: `sealed:${NEW}`,
    previous_secret: previous === null ? null : `sealed:${previous}`,
    previous_secret_until: until,
  });

  test("without a previous secret only the current one signs", () => {
    expect(signingSecrets(row(null, null), box, NOW)).toEqual([NEW]);
    expect(signingSecrets(row(null, "2026-01-02T00:00:00.000Z"), box, NOW)).toEqual([NEW]);
  });

  test("during the overlap the new secret comes first, the previous second, both opened", () => {
    expect(signingSecrets(row(OLD, "2026-01-01T12:00:00.001Z"), box, NOW)).toEqual([NEW, OLD]);
    expect(signingSecrets(row(OLD, "2026-01-02T11:59:59.000Z"), box, NOW)).toEqual([NEW, OLD]);
  });

  test("the overlap ends at previous_secret_until: at that instant and after, only the new secret signs", () => {
    expect(signingSecrets(row(OLD, "2026-01-01T12:00:00.000Z"), box, NOW)).toEqual([NEW]);
    expect(signingSecrets(row(OLD, "2025-12-31T12:00:00.000Z"), box, NOW)).toEqual([NEW]);
  });

  test("a previous secret without an end of overlap is not used", () => {
    expect(signingSecrets(row(OLD, null), box, NOW)).toEqual([NEW]);
  });
});
