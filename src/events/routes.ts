import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, json, reading, security } from "../http/openapi.ts";
import { toPage } from "../lib/pagination.ts";
import { toIso } from "../lib/time.ts";
import { retainedSince } from "./catalog.ts";
import { listEvents } from "./repository.ts";
import { EventList, EventsQuery } from "./schemas.ts";

/** GET /events (docs/api.md §14): the project's events of the last 30 days, oldest first. */
export const eventRoutes = new OpenAPIHono<AppEnv>();

eventRoutes.openapi(
  createRoute({
    method: "get",
    path: "/events",
    operationId: "listEvents",
    summary: "List recent events",
    description: "Events of the last 30 days from `since` (default: 30 days ago), oldest first.",
    tags: ["Webhooks"],
    security,
    middleware: reading("webhooks:manage"),
    request: { query: EventsQuery },
    responses: { 200: json(EventList, "One page of events."), ...commonErrors },
  }),
  async (c) => {
    const { since, limit, cursor } = c.req.valid("query");
    const oldest = retainedSince(c.get("deps").clock.now());
    const from = since && toIso(since)! > oldest ? toIso(since)! : oldest;
    const { cursors } = c.get("deps");
    const filters = { events: since ?? null };
    const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
    const rows = await listEvents(c.get("db"), c.get("caller").projectId, from, limit, after);
    return c.json(toPage(rows, limit, (r) => [r.created_at, r.id], (r) => JSON.parse(r.body), cursors, filters), 200);
  },
);
