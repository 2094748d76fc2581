/**
 * The loopback webhook receiver of bench/ and stress/, in a process of its own so its
 * answers never wait on the load generator or the checks of the caller: it answers 200
 * "ok" (after a random 0 to `maxRandomDelayMs` ms; after 5 s under /slow…), keeps each
 * delivery's arrival time, path, event id and X-Service-Delivery id, and hands them out at
 * GET /__arrivals?from=N. `startReceiver` starts it and keeps a copy of the arrivals.
 *
 *   bun bench/harness/receiver.ts [maxRandomDelayMs]   → prints its port
 *
 * Used by bench/webhooks.ts (deliveries/s, event→delivery, fairness) and stress/crash-loop.ts
 * (every event delivered, one delivery id per event).
 */
import type { Subprocess } from "bun";

/** One delivery as the receiver process saw it. */
export interface Arrival {
  path: string;
  /** The body's `id` ("" when the body is not an event). */
  eventId: string;
  /** The X-Service-Delivery header ("" when absent). */
  delivery: string;
  /** The body's createdAt, in ms since the epoch. */
  createdAt: number;
  /** Date.now() on arrival. */
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  /** Every delivery synced so far, in arrival order. */
  arrivals: Arrival[];
  /** Fetches the deliveries that arrived since the last sync; resolves with all of them. */
  sync(): Promise<Arrival[]>;
  stop(): Promise<void>;
}

export async function startReceiver(o: { maxRandomDelayMs?: number; children?: Set<Subprocess> } = {}): Promise<Receiver> {
  const proc = Bun.spawn([process.execPath, import.meta.path, String(o.maxRandomDelayMs ?? 0)], { stdout: "pipe", stderr: "inherit" });
  o.children?.add(proc);
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the receiver did not start");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const port = Number(text.trim());
  const url = `http://127.0.0.1:${port}`;
  const arrivals: Arrival[] = [];
  return {
    url,
    port,
    arrivals,
    async sync() {
      const more = (await (await fetch(`${url}/__arrivals?from=${arrivals.length}`)).json()) as Arrival[];
      arrivals.push(...more);
      return arrivals;
    },
    async stop() {
      proc.kill();
      await proc.exited;
      o.children?.delete(proc);
    },
  };
}

if (import.meta.main) {
  const maxRandomDelayMs = Number(process.argv[2] ?? 0);
  const arrivals: Arrival[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === "/__arrivals") return Response.json(arrivals.slice(Number(url.searchParams.get("from") ?? 0)));
      let body: { id?: string; createdAt?: string } = {};
      try {
        body = JSON.parse(await request.text());
      } catch {
        /* not an event: kept with an empty id */
      }
      arrivals.push({
        path: url.pathname,
        eventId: body.id ?? "",
        delivery: request.headers.get("x-service-delivery") ?? "",
        createdAt: Date.parse(body.createdAt ?? ""),
        at: Date.now(),
      });
      if (url.pathname.startsWith("/slow")) await Bun.sleep(5000);
      else if (maxRandomDelayMs > 0) await Bun.sleep(Math.random() * maxRandomDelayMs);
      return new Response("ok");
    },
  });
  console.log(server.port);
}
