/**
 * The loopback receiver of bench/webhooks.ts, in a process of its own so its answers do not
 * wait on the bench's load generator: answers 200 at once (after 5 s under /slow…), keeps
 * each delivery's arrival time, and hands them out at GET /__arrivals?from=N.
 *
 *   bun bench/webhook-receiver.ts   → prints its port
 */
import type { Arrival } from "./webhooks.ts"; // a type only: nothing of the bench runs here
const arrivals: Arrival[] = [];

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 30,
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/__arrivals") return Response.json(arrivals.slice(Number(url.searchParams.get("from") ?? 0)));
    const body = JSON.parse(await request.text());
    arrivals.push({ path: url.pathname, eventId: body.id, createdAt: Date.parse(body.createdAt), at: Date.now() });
    if (url.pathname.startsWith("/slow")) await Bun.sleep(5000);
    return new Response("ok");
  },
});
console.log(server.port);
