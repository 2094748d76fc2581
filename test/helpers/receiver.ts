/**
 * A loopback webhook receiver for black-box tests. Its server runs in a Worker thread
 * (receiver-worker.ts), off the test's event loop, so it answers on time whatever the test
 * is doing; the test sets the answers (status, delay, Retry-After, body, headers, holding a
 * request until released, per body/path/event rule) and reads every request it got
 * (method, path, headers, raw body bytes, arrival time, concurrency).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { until } from "./until.ts";

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
  /** Adds a random wait of 0 to this many milliseconds. */
  maxRandomDelayMs?: number;
  /** Hold the request open until `release()` (a request arriving after it is not held). */
  hold?: boolean;
}

/** The first rule whose `when` matches a request answers it (no `when`: every request). */
export interface Rule {
  when?: { bodyIncludes?: string; path?: string; event?: string };
  reply: Reply;
}

export type WorkerCommand = { id: number } & (
  | { type: "start"; path: string }
  | { type: "respond"; rules: Rule[] }
  | { type: "script"; replies: Reply[]; then: Reply }
  | { type: "release" }
  | { type: "stop" }
);

export type WorkerEvent =
  | { type: "ready"; port: number }
  | { type: "ack"; id: number }
  | { type: "request"; seq: number; method: string; path: string; headers: Record<string, string>; raw: Uint8Array; text: string; at: number; concurrentAtArrival: number }
  | { type: "answered"; seq: number; answeredAt: number };

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Largest number of requests seen being answered at the same time. */
  maxConcurrent: () => number;
  /** Requests received and not answered yet. */
  inFlight: () => number;
  /** Sets how every later request is answered (default: 200 "ok" at once). */
  respond: (r: Reply | Rule[]) => Promise<void>;
  /** Answers the next requests with these replies in order, then with `then` (default 200). */
  script: (replies: Reply[], then?: Reply) => Promise<void>;
  /** Opens the gate: answers every held request; later ones are not held (until the next `respond`). */
  release: () => Promise<void>;
  /** Resolves with the first `n` requests once they arrived; throws after `timeoutMs`. */
  waitFor: (n: number, timeoutMs?: number) => Promise<ReceivedRequest[]>;
  /** Resolves once `pred(requests)` holds; throws after `timeoutMs`. */
  waitUntil: (pred: (reqs: ReceivedRequest[]) => boolean, timeoutMs?: number, what?: string) => Promise<ReceivedRequest[]>;
  /** Requests whose body is the event `eventId`. */
  forEvent: (eventId: string) => ReceivedRequest[];
  /** Forgets the recorded requests (answers keep their setting). */
  clear: () => void;
  stop: () => Promise<void>;
}

const asRules = (r: Reply | Rule[]): Rule[] => (Array.isArray(r) ? r : [{ reply: r }]);

/** Starts a receiver answering `initial` on `http://127.0.0.1:<port><path>`. */
export async function startReceiver(initial: Reply | Rule[] = {}, path = "/hook"): Promise<Receiver> {
  const worker = new Worker(new URL("./receiver-worker.ts", import.meta.url).href);
  (worker as unknown as { unref(): void }).unref(); // Bun: a forgotten receiver never keeps the test process alive
  const requests: ReceivedRequest[] = [];
  const bySeq = new Map<number, ReceivedRequest>();
  const acks = new Map<number, () => void>();
  let nextId = 0;
  let max = 0;
  let stopped = false;
  let ready!: (port: number) => void;
  const port = new Promise<number>((r) => (ready = r));

  worker.onmessage = (e: MessageEvent<WorkerEvent>) => {
    const ev = e.data;
    if (ev.type === "ready") ready(ev.port);
    else if (ev.type === "ack") acks.get(ev.id)?.(), acks.delete(ev.id);
    else if (ev.type === "request") {
      let json: any;
      try {
        json = JSON.parse(ev.text);
      } catch {
        json = undefined;
      }
      const rec: ReceivedRequest = {
        index: requests.length,
        method: ev.method,
        path: ev.path,
        headers: ev.headers,
        raw: ev.raw,
        text: ev.text,
        json,
        at: ev.at,
        concurrentAtArrival: ev.concurrentAtArrival,
      };
      max = Math.max(max, ev.concurrentAtArrival);
      bySeq.set(ev.seq, rec);
      requests.push(rec);
    } else if (ev.type === "answered") {
      const rec = bySeq.get(ev.seq);
      if (rec) rec.answeredAt = ev.answeredAt;
      bySeq.delete(ev.seq);
    }
  };
  const send = (cmd: Record<string, unknown>) =>
    new Promise<void>((resolve) => {
      const id = nextId++;
      acks.set(id, resolve);
      worker.postMessage({ ...cmd, id });
    });

  void send({ type: "start", path });
  await send({ type: "respond", rules: asRules(initial) });
  const p = await port;

  const waitUntil = (pred: (reqs: ReceivedRequest[]) => boolean, timeoutMs = 10_000, what = "condition") =>
    until(() => (pred(requests) ? requests : undefined), {
      timeoutMs,
      what: () => {
        const seen = requests.map((r) => `${r.headers["x-service-event"] ?? "?"} ${r.json?.id ?? ""}`).join(", ");
        return `receiver: ${what}; got ${requests.length} request(s): [${seen}]`;
      },
    });

  return {
    url: `http://127.0.0.1:${p}${path}`,
    port: p,
    requests,
    maxConcurrent: () => max,
    inFlight: () => bySeq.size,
    respond: (r) => send({ type: "respond", rules: asRules(r) }),
    script: (replies, then = { status: 200 }) => send({ type: "script", replies, then }),
    release: () => send({ type: "release" }),
    waitFor: async (n, timeoutMs = 10_000) => (await waitUntil((r) => r.length >= n, timeoutMs, `${n} request(s)`)).slice(0, n),
    waitUntil,
    forEvent: (eventId) => requests.filter((r) => r.json?.id === eventId),
    clear: () => {
      requests.length = 0;
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await send({ type: "stop" });
      worker.terminate();
    },
  };
}

/** Distinct values, in first-seen order. */
export const distinct = <T>(xs: T[]) => [...new Set(xs)];

// ---- Signature checks written from docs/webhooks.md §3 and docs/webhooks.md §3 (our own code, no library) ----


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
