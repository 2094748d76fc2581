import { z } from "@hono/zod-openapi";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";
import { isoTimeSchema } from "../lib/time.ts";

export const EventSchema = z
  .object({
    id: z.string(),
    event: z.string(),
    apiVersion: z.literal("v1"),
    projectId: z.string(),
    createdAt: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi("Event");
export const EventList = listEnvelope(EventSchema, "EventList");
export const EventsQuery = z.object({ since: isoTimeSchema.optional(), limit: limitParam, cursor: cursorParam });
