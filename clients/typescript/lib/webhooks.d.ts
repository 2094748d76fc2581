/**
 * Verifying a webhook delivery (docs/webhooks.md §3, docs/api.md §16) with Web Crypto only,
 * so it runs on Node 20+, Bun, Deno, edge runtimes and browsers.
 *
 * A delivery carries two signatures of the same raw body:
 * - `X-Service-Signature: t=<unix>,v1=<hex>` — HMAC-SHA256 of `"<t>.<body>"` keyed with the
 *   whole secret string (`whsec_...`), as Stripe's;
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` —
 *   HMAC-SHA256 of `"<id>.<t>.<body>"` keyed with the bytes the secret's base64 part encodes.
 * During a secret rotation each holds two signatures (new first); one match suffices.
 * Every scheme whose headers are present must verify, with a timestamp within the tolerance.
 */
import type { webhooks } from "./schema.js";
type EventBody<Item> = Item extends {
    post: {
        requestBody?: infer Body;
    };
} ? NonNullable<Body> extends {
    content: {
        "application/json": infer Event;
    };
} ? Event : never : never;
/** Any event the service sends, `ping` included; narrow on `event.event`. */
export type WebhookEvent = {
    [Name in keyof webhooks]: EventBody<webhooks[Name]>;
}[keyof webhooks];
/** A `Headers` object or a plain record such as Node's `req.headers` (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;
export interface VerifyOptions {
    /** Largest allowed |now - t| in seconds (docs/api.md §7: 300). */
    toleranceSeconds?: number;
    /** The current time, a Date or milliseconds since the epoch (default: Date.now()). */
    now?: Date | number;
}
export type VerificationFailure = "missing_signature" | "malformed_header" | "timestamp_out_of_tolerance" | "signature_mismatch" | "invalid_body";
export declare class WebhookVerificationError extends Error {
    readonly reason: VerificationFailure;
    constructor(reason: VerificationFailure, message: string);
}
/**
 * Checks a delivery's signatures against the subscription's `secret` and returns its
 * parsed event; throws `WebhookVerificationError` otherwise. Pass the raw body as
 * received (a re-serialised JSON differs in bytes and fails).
 */
export declare function verifyWebhook(secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array | ArrayBuffer, options?: VerifyOptions): Promise<WebhookEvent>;
export {};
