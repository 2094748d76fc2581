import { createHmac, randomBytes } from "node:crypto";

/** `whsec_` + standard base64 of 32 random bytes (docs/webhooks.md §3, §2.2). */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * Signature headers of one attempt (docs/webhooks.md §3): `X-Service-Signature`
 * is Stripe's scheme, keyed with the whole secret string; `webhook-signature` is Standard
 * Webhooks', keyed with the bytes the secret's base64 part encodes. With a rotated secret
 * still in its 24 h overlap, both carry two signatures, the new one first.
 */
export function signatureHeaders(
  secrets: string[],
  deliveryId: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  const t = String(timestamp);
  const v1 = secrets.map((s) => `v1=${createHmac("sha256", s).update(`${t}.${body}`).digest("hex")}`);
  const standard = secrets.map(
    (s) =>
      `v1,${createHmac("sha256", Buffer.from(s.slice("whsec_".length), "base64")).update(`${deliveryId}.${t}.${body}`).digest("base64")}`,
  );
  return {
    "X-Service-Delivery": deliveryId,
    "X-Service-Signature": `t=${t},${v1.join(",")}`,
    "webhook-id": deliveryId,
    "webhook-timestamp": t,
    "webhook-signature": standard.join(" "),
  };
}

/** The secret columns of a subscription, sealed (src/secrets/secret-box.ts). */
export interface SealedSecrets {
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
}

/** Secrets to sign with: the current one, then the previous one during its 24 h overlap (docs/webhooks.md §3). */
export function signingSecrets(row: SealedSecrets, box: { open(sealed: string): string }, now: number): string[] {
  const secrets = [box.open(row.secret)];
  if (row.previous_secret && row.previous_secret_until && Date.parse(row.previous_secret_until) > now) {
    secrets.push(box.open(row.previous_secret));
  }
  return secrets;
}
