import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, errors, json, reading, security } from "../http/openapi.ts";
import { notFound } from "../errors.ts";
import { findContactIdentity } from "../contacts/repository.ts";
import { ContactIdParam } from "../contacts/schemas.ts";
import { requireContactNumber } from "../contacts/service.ts";
import { ChangeFeedPage, ChangesQuery, HistoryPage, HistoryQuery } from "./schemas.ts";
import { readFeed, readHistory } from "./service.ts";

/** The change log's two readers (docs/api.md §19.2): a contact's history and the project's feed. */
export const changeRoutes = new OpenAPIHono<AppEnv>();

changeRoutes.openapi(
  createRoute({
    method: "get",
    path: "/contacts/{contactId}/history",
    operationId: "getContactHistory",
    summary: "A contact's change history",
    description:
      "Its change records, newest first, across relabels; `field` (repeatable) keeps those that changed it. A contact in the trash " +
      "has its history; 404 for one that never existed or was erased.",
    tags: ["Contacts"],
    security,
    middleware: reading("contacts:read"),
    request: { params: ContactIdParam, query: HistoryQuery },
    responses: { 200: json(HistoryPage, "One page, newest first."), ...commonErrors, 404: errors[404] },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const contact = await findContactIdentity(c.get("db"), c.get("caller").projectId, n, { trashed: true });
    // A merged-away contact's history is the survivor's (docs/api.md §20.3: 308 there).
    if (!contact || contact.merged_into !== null) throw notFound("Contact");
    return c.json(await readHistory(c.get("db"), c.get("deps").cursors, contact.id, c.req.valid("query")), 200);
  },
);

changeRoutes.openapi(
  createRoute({
    method: "get",
    path: "/changes",
    operationId: "listChanges",
    summary: "Follow the project's changes",
    description:
      "Every change of the project, oldest first, from `after` (a previous page's nextCursor, or the Changes-Cursor header of " +
      "GET /contacts); nextCursor is set even on an empty page, so poll with it. Records are kept 90 days: an older cursor is 410 " +
      "ERR_CURSOR_EXPIRED. A change never appears after one with a higher seq.",
    tags: ["Changes"],
    security,
    middleware: reading("contacts:read"),
    request: { query: ChangesQuery },
    responses: { 200: json(ChangeFeedPage, "One page, oldest first."), ...commonErrors, 410: errors[410] },
  }),
  async (c) => c.json(await readFeed(c.get("db"), c.get("deps").cursors, c.get("caller").projectId, c.req.valid("query")), 200),
);
