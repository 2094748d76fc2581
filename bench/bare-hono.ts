/**
 * The baseline: a bare Hono app on Bun.serve answering GET /v1/contacts/:id with the same
 * JSON the real server gave for one contact (same bytes), serialised per request (c.json) like the real
 * route, but with no auth, middleware, validation or database.
 *
 *   PORT=… HOST=127.0.0.1 bun bench/bare-hono.ts <contact.json>
 */
import { Hono } from "hono";

const contact = JSON.parse(await Bun.file(process.argv[2]!).text());
const app = new Hono();
app.get("/v1/contacts/:contactId", (c) => c.json(contact));
app.get("/healthz", (c) => c.json({ status: "ok" }));

const server = Bun.serve({ port: Number(process.env.PORT ?? 0), hostname: process.env.HOST ?? "127.0.0.1", fetch: app.fetch });
console.log(`bare hono listening on ${server.hostname}:${server.port}`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
