import { z } from "@hono/zod-openapi";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";
import { isoTimeSchema } from "../lib/time.ts";
import { eventEnvelopes } from "./payloads.ts";

/** An item of GET /events: one of the event envelopes, told apart by `event` (docs/webhooks.md §2). */
export const EventSchema = z
  .discriminatedUnion("event", [
    eventEnvelopes["contact.created"],
    eventEnvelopes["contact.updated"],
    eventEnvelopes["contact.deleted"],
    eventEnvelopes["contact.restored"],
    eventEnvelopes["contact.erased"],
    eventEnvelopes["contact.merged"],
    eventEnvelopes["interaction_log.created"],
    eventEnvelopes["web_form.submitted"],
  ])
  .openapi("Event");
export const EventList = listEnvelope(EventSchema, "EventList");
export const EventsQuery = z.object({ since: isoTimeSchema.optional(), limit: limitParam, cursor: cursorParam });
