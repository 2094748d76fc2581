/**
 * The webhook receiver's server, in a Worker thread of its own: it answers deliveries on
 * time even while the test's main thread is busy (a CLI run, a long assertion, a GC). The
 * main thread (receiver.ts) sets the answers and gets every request as a message.
 */
import type { Reply, Rule, WorkerCommand, WorkerEvent } from "./receiver.ts";

declare const self: Worker;

const post = (event: WorkerEvent) => self.postMessage(event);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let rules: Rule[] = [{ reply: {} }];
let queue: Reply[] = [];
let after: Reply | null = null;
let held: (() => void)[] = [];
/** Set by `release`: held requests are answered and later ones are not held. */
let gateOpen = false;
let current = 0;
let sequence = 0;
let server: ReturnType<typeof Bun.serve> | undefined;

function matches(rule: Rule, text: string, path: string, event: string | undefined): boolean {
  const when = rule.when;
  if (!when) return true;
  if (when.bodyIncludes !== undefined && !text.includes(when.bodyIncludes)) return false;
  if (when.path !== undefined && path !== when.path) return false;
  if (when.event !== undefined && event !== when.event) return false;
  return true;
}

function choose(text: string, path: string, event: string | undefined): Reply {
  if (queue.length > 0) return queue.shift()!;
  if (after) return after;
  return rules.find((r) => matches(r, text, path, event))?.reply ?? {};
}

function start(path: string) {
  const decoder = new TextDecoder();
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 120,
    async fetch(request) {
      const at = Date.now();
      const seq = sequence++;
      current++;
      try {
        const raw = new Uint8Array(await request.arrayBuffer());
        const headers: Record<string, string> = {};
        request.headers.forEach((value, name) => (headers[name.toLowerCase()] = value));
        const text = decoder.decode(raw);
        const u = new URL(request.url);
        const reqPath = u.pathname + u.search;
        post({ type: "request", seq, method: request.method, path: reqPath, headers, raw, text, at, concurrentAtArrival: current });
        const reply = choose(text, reqPath, headers["x-service-event"]);
        if (reply.hold && !gateOpen) await new Promise<void>((r) => held.push(r));
        if (reply.delayMs) await sleep(reply.delayMs);
        if (reply.maxRandomDelayMs) await sleep(Math.floor(Math.random() * (reply.maxRandomDelayMs + 1)));
        const h: Record<string, string> = { "Content-Type": "text/plain", ...(reply.headers ?? {}) };
        if (reply.retryAfter !== undefined) h["Retry-After"] = String(reply.retryAfter);
        post({ type: "answered", seq, answeredAt: Date.now() });
        return new Response(reply.body ?? "ok", { status: reply.status ?? 200, headers: h });
      } finally {
        current--;
      }
    },
  });
  post({ type: "ready", port: server.port! });
  void path;
}

self.onmessage = (e: MessageEvent<WorkerCommand>) => {
  const cmd = e.data;
  switch (cmd.type) {
    case "start":
      start(cmd.path);
      return;
    case "respond":
      rules = cmd.rules;
      gateOpen = false;
      queue = [];
      after = null;
      break;
    case "script":
      queue = [...cmd.replies];
      after = cmd.then;
      break;
    case "release":
      gateOpen = true;
      for (const r of held.splice(0)) r();
      break;
    case "stop":
      for (const r of held.splice(0)) r();
      server?.stop(true);
      break;
  }
  post({ type: "ack", id: cmd.id });
};
