import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, errors, json, security, writing } from "../http/openapi.ts";
import { isoNow } from "../lib/time.ts";
import { ContactSchema, ContactIdParam } from "./schemas.ts";
import { ifMatchOf } from "./preconditions.ts";
import { contactForCaller } from "./receipts.ts";
import { requireContactNumber } from "./service.ts";
import { restoreContact, trashContact } from "./trash.ts";

/** The trash (docs/api.md §19.3): DELETE and restore. */
export const trashRoutes = new OpenAPIHono<AppEnv>();

const tags = ["Contacts"];

trashRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/contacts/{contactId}",
    operationId: "deleteContact",
    summary: "Delete a contact (to the trash for 30 days)",
    description:
      "The contact answers 404 everywhere from now on and leaves lists, search, duplicateSignal and the quota; its contactId stays " +
      "reserved. POST /contacts/{contactId}/restore brings it back with its logs within 30 days; then it is erased. Fires " +
      'contact.deleted (reason "deleted"). If-Match: "<version>" makes it conditional (412 when the contact has changed).',
    tags,
    security,
    middleware: writing("contacts:write", { body: false }),
    request: { params: ContactIdParam },
    responses: { 204: { description: "In the trash." }, ...commonErrors, 404: errors[404], 412: errors[412] },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    await trashContact(c.get("db"), c.get("caller").projectId, n, isoNow(c.get("deps").clock), ifMatchOf(c));
    return c.body(null, 204);
  },
);

trashRoutes.openapi(
  createRoute({
    method: "post",
    path: "/contacts/{contactId}/restore",
    operationId: "restoreContact",
    summary: "Restore a contact from the trash",
    description:
      "Brings a deleted contact back with its interaction logs, tags and custom fields, as a new version; fires contact.restored. " +
      "404 once purged (30 days) or erased; 409 if it is not in the trash, or another contact now holds one of its unique values; " +
      "402 when the quota is full.",
    tags,
    security,
    middleware: writing("contacts:write", { body: false }),
    request: { params: ContactIdParam },
    responses: {
      200: json(ContactSchema, "The restored contact (to a key without contacts:read, its receipt)."),
      ...commonErrors,
      402: errors[402],
      404: errors[404],
      409: errors[409],
    },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const contact = await restoreContact(c.get("db"), c.get("caller").projectId, n, isoNow(c.get("deps").clock));
    return c.json(contactForCaller(c.get("caller"), contact) as never, 200);
  },
);
