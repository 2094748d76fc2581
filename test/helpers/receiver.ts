/**
 * A loopback webhook receiver for black-box tests: a Bun.serve endpoint whose answers the
 * test controls (status, delay, Retry-After, body, headers, per request) and which records
 * every request it gets (method, path, headers, raw body bytes, arrival time, concurrency).
 */
import type { Server } from "bun";
import { createHmac, timingSafeEqual } from "node:crypto";

export interface ReceivedRequest {
  /** 0-based arrival index. */
  index: number;
  method: string;
  /** Path and query of the request URL. */
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The exact bytes received. */
  raw: Uint8Array;
  /** The bytes decoded as UTF-8. */
  text: string;
  /** JSON.parse(text), or undefined when that fails. */
  json: any;
  /** Date.now() on arrival. */
  at: number;
  /** Date.now() when the answer was handed back (undefined until then). */
  answeredAt?: number;
  /** Requests being answered at the moment this one arrived, itself included. */
  concurrentAtArrival: number;
}

export interface Reply {
  status?: number;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
  /** Value of the Retry-After header. */
  retryAfter?: string | number;
  body?: string;
  headers?: Record<string, string>;
}

export type Responder = (req: ReceivedRequest) => Reply | Promise<Reply>;

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Largest number of requests seen being answered at the same time. */
  maxConcurrent: () => number;
  inFlight: () => number;
  /** Sets how every later request is answered (default: 200 "ok" at once). */
  respond: (r: Responder | Reply) => void;
  /** Answers the next requests with these replies in order, then with `then` (default 200). */
  script: (replies: Reply[], then?: Reply) => void;
  /** Resolves with the first `n` requests once they arrived; throws after `timeoutMs`. */
  waitFor: (n: number, timeoutMs?: number) => Promise<ReceivedRequest[]>;
  /** Resolves once `pred(requests)` holds; throws after `timeoutMs`. */
  waitUntil: (pred: (reqs: ReceivedRequest[]) => boolean, timeoutMs?: number, what?: string) => Promise<ReceivedRequest[]>;
  /** Requests whose body is the event `eventId`. */
  forEvent: (eventId: string) => ReceivedRequest[];
  /** Forgets the recorded requests (answers keep their setting). */
  clear: () => void;
  stop: () => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startReceiver(initial: Responder | Reply = {}, path = "/hook"): Receiver {
  const requests: ReceivedRequest[] = [];
  let responder: Responder = typeof initial === "function" ? initial : () => initial;
  let current = 0;
  let max = 0;
  let queue: Reply[] = [];
  let after: Reply | null = null;
  const decoder = new TextDecoder();

  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(request) {
      const at = Date.now();
      current++;
      max = Math.max(max, current);
      try {
        const raw = new Uint8Array(await request.arrayBuffer());
        const headers: Record<string, string> = {};
        request.headers.forEach((value, name) => (headers[name.toLowerCase()] = value));
        const text = decoder.decode(raw);
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const u = new URL(request.url);
        const rec: ReceivedRequest = {
          index: requests.length,
          method: request.method,
          path: u.pathname + u.search,
          headers,
          raw,
          text,
          json,
          at,
          concurrentAtArrival: current,
        };
        requests.push(rec);
        let reply: Reply;
        if (queue.length > 0) reply = queue.shift()!;
        else if (after) reply = after;
        else reply = await responder(rec);
        if (reply.delayMs) await sleep(reply.delayMs);
        const h: Record<string, string> = { "Content-Type": "text/plain", ...(reply.headers ?? {}) };
        if (reply.retryAfter !== undefined) h["Retry-After"] = String(reply.retryAfter);
        rec.answeredAt = Date.now();
        return new Response(reply.body ?? "ok", { status: reply.status ?? 200, headers: h });
      } finally {
        current--;
      }
    },
  });

  const waitUntil = async (pred: (reqs: ReceivedRequest[]) => boolean, timeoutMs = 10_000, what = "condition") => {
    const deadline = Date.now() + timeoutMs;
    while (!pred(requests)) {
      if (Date.now() > deadline) {
        const seen = requests.map((r) => `${r.headers["x-service-event"] ?? "?"} ${r.json?.id ?? ""}`).join(", ");
        throw new Error(`receiver: timed out after ${timeoutMs} ms waiting for ${what}; got ${requests.length} request(s): [${seen}]`);
      }
      await sleep(20);
    }
    return requests;
  };

  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    port: server.port!,
    requests,
    maxConcurrent: () => max,
    inFlight: () => current,
    respond: (r) => {
      queue = [];
      after = null;
      responder = typeof r === "function" ? r : () => r;
    },
    script: (replies, then = { status: 200 }) => {
      queue = [...replies];
      after = then;
    },
    waitFor: async (n, timeoutMs = 10_000) => (await waitUntil((r) => r.length >= n, timeoutMs, `${n} request(s)`)).slice(0, n),
    waitUntil,
    forEvent: (eventId) => requests.filter((r) => r.json?.id === eventId),
    clear: () => {
      requests.length = 0;
    },
    stop: () => server.stop(true),
  };
}

/** Distinct values, in first-seen order. */
export const distinct = <T>(xs: T[]) => [...new Set(xs)];

// ---- Signature checks written from interface §6.3 and decisions §7 (our own code, no library) ----


export interface ParsedServiceSignature {
  t: number;
  v1: string[];
}

/** Parses `t=<unix>,v1=<hex>[,v1=<hex>...]`; throws on anything else. */
export function parseServiceSignature(header: string | undefined): ParsedServiceSignature {
  if (!header) throw new Error("no X-Service-Signature header");
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) throw new Error(`malformed signature part ${JSON.stringify(part)}`);
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === "t") {
      if (!/^\d+$/.test(v)) throw new Error(`malformed t ${JSON.stringify(v)}`);
      t = Number(v);
    } else if (k === "v1") v1.push(v);
  }
  if (t === null || v1.length === 0) throw new Error(`signature lacks t or v1: ${header}`);
  return { t, v1 };
}

export const serviceHmacHex = (secret: string, t: number | string, raw: Uint8Array | string) =>
  createHmac("sha256", secret).update(`${t}.`).update(raw).digest("hex");

export const standardHmacBase64 = (secret: string, id: string, t: number | string, raw: Uint8Array | string) =>
  createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64")).update(`${id}.${t}.`).update(raw).digest("base64");

function safeEqual(a: string, b: string) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Index of the v1 signature `secret` produced (-1: none), after the 300 s clock check. */
export function serviceSignatureIndex(secret: string, req: { headers: Record<string, string>; raw: Uint8Array }, nowSec = Date.now() / 1000) {
  const { t, v1 } = parseServiceSignature(req.headers["x-service-signature"]);
  if (Math.abs(nowSec - t) > 300) throw new Error(`signature timestamp ${t} is more than 300 s from now`);
  const expected = serviceHmacHex(secret, t, req.raw);
  return v1.findIndex((s) => safeEqual(s, expected));
}

/** Index of the Standard Webhooks `v1,<base64>` signature `secret` produced (-1: none). */
export function standardSignatureIndex(secret: string, req: { headers: Record<string, string>; raw: Uint8Array }) {
  const id = req.headers["webhook-id"];
  const t = req.headers["webhook-timestamp"];
  const sig = req.headers["webhook-signature"];
  if (!id || !t || !sig) throw new Error("missing webhook-id / webhook-timestamp / webhook-signature");
  const expected = standardHmacBase64(secret, id, t, req.raw);
  return sig
    .split(" ")
    .map((s) => s.split(","))
    .findIndex(([version, value]) => version === "v1" && value !== undefined && safeEqual(value, expected));
}
