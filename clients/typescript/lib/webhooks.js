/* @ts-self-types="./webhooks.d.ts" */
export class WebhookVerificationError extends Error {
    reason;
    constructor(reason, message) {
        super(message);
        this.reason = reason;
        this.name = "WebhookVerificationError";
    }
}
const encoder = new TextEncoder();
function headerReader(headers) {
    if (headers instanceof Headers)
        return (name) => headers.get(name);
    const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(", ") : v]));
    return (name) => lower.get(name) ?? null;
}
function bytesOf(body) {
    if (typeof body === "string")
        return encoder.encode(body);
    return new Uint8Array(body instanceof ArrayBuffer ? body.slice(0) : body);
}
function concat(prefix, body) {
    const head = encoder.encode(prefix);
    const out = new Uint8Array(head.length + body.length);
    out.set(head);
    out.set(body, head.length);
    return out;
}
function fromHex(hex) {
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex))
        return null;
    return new Uint8Array(hex.match(/../g).map((byte) => parseInt(byte, 16)));
}
function fromBase64(text) {
    try {
        return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
    }
    catch {
        return null;
    }
}
/**
 * Whether one of `signatures` is the HMAC-SHA256 of `message` under `key`. The comparison is
 * `crypto.subtle.verify`'s, which is constant-time.
 */
async function oneMatches(key, signatures, message) {
    const hmac = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    let matched = false;
    for (const signature of signatures) {
        if (signature && (await crypto.subtle.verify("HMAC", hmac, signature, message)))
            matched = true;
    }
    return matched;
}
function checkTimestamp(t, nowSeconds, toleranceSeconds, header) {
    if (!/^\d+$/.test(t))
        throw new WebhookVerificationError("malformed_header", `${header}: the timestamp is not unix seconds`);
    if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) {
        throw new WebhookVerificationError("timestamp_out_of_tolerance", `${header}: timestamp ${t} is more than ${toleranceSeconds} s from now`);
    }
}
/** `t=<unix>,v1=<hex>[,v1=<hex>]` (docs/webhooks.md §3). */
async function checkServiceSignature(secret, header, body, now, tolerance) {
    const parts = header.split(",").map((part) => part.trim().split("=", 2));
    const t = parts.find(([k]) => k === "t")?.[1];
    const v1 = parts.filter(([k, v]) => k === "v1" && v).map(([, v]) => v);
    if (t === undefined || v1.length === 0)
        throw new WebhookVerificationError("malformed_header", "X-Service-Signature: expected t=<unix>,v1=<hex>");
    checkTimestamp(t, now, tolerance, "X-Service-Signature");
    if (!(await oneMatches(encoder.encode(secret), v1.map(fromHex), concat(`${t}.`, body)))) {
        throw new WebhookVerificationError("signature_mismatch", "X-Service-Signature: no v1 signature matches this secret and body");
    }
}
/** Standard Webhooks: `webhook-signature: v1,<base64>[ v1,<base64>]` (docs/webhooks.md §3). */
async function checkStandardSignature(secret, id, t, header, body, now, tolerance) {
    checkTimestamp(t, now, tolerance, "webhook-timestamp");
    const key = fromBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
    if (!key)
        throw new WebhookVerificationError("malformed_header", "the secret is not whsec_<base64>");
    const signatures = header
        .split(" ")
        .map((entry) => entry.split(","))
        .filter(([version, value]) => version === "v1" && value)
        .map(([, value]) => fromBase64(value));
    if (signatures.length === 0)
        throw new WebhookVerificationError("malformed_header", "webhook-signature: expected v1,<base64>");
    if (!(await oneMatches(key, signatures, concat(`${id}.${t}.`, body)))) {
        throw new WebhookVerificationError("signature_mismatch", "webhook-signature: no v1 signature matches this secret and body");
    }
}
/**
 * Checks a delivery's signatures against the subscription's `secret` and returns its
 * parsed event; throws `WebhookVerificationError` otherwise. Pass the raw body as
 * received (a re-serialised JSON differs in bytes and fails).
 */
export async function verifyWebhook(secret, headers, rawBody, options = {}) {
    const get = headerReader(headers);
    const body = bytesOf(rawBody);
    const tolerance = options.toleranceSeconds ?? 300;
    const now = (options.now === undefined ? Date.now() : Number(options.now)) / 1000;
    const service = get("x-service-signature");
    const [id, t, signature] = [get("webhook-id"), get("webhook-timestamp"), get("webhook-signature")];
    if (service === null && signature === null) {
        throw new WebhookVerificationError("missing_signature", "neither X-Service-Signature nor webhook-signature is present");
    }
    if (service !== null)
        await checkServiceSignature(secret, service, body, now, tolerance);
    if (signature !== null) {
        if (id === null || t === null)
            throw new WebhookVerificationError("malformed_header", "webhook-signature needs webhook-id and webhook-timestamp");
        await checkStandardSignature(secret, id, t, signature, body, now, tolerance);
    }
    try {
        return JSON.parse(new TextDecoder().decode(body));
    }
    catch {
        throw new WebhookVerificationError("invalid_body", "the body is not JSON");
    }
}
