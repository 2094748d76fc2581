import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, errors, json, security, writing } from "../http/openapi.ts";
import { isoNow } from "../lib/time.ts";
import { ContactIdParam } from "../contacts/schemas.ts";
import { contactForCaller } from "../contacts/receipts.ts";
import { requireContactNumber } from "../contacts/service.ts";
import { mergeContacts } from "./merge.ts";
import { undoMerge } from "./undo.ts";
import { MergeBody, MergeIdParam, MergeResultSchema, UndoResultSchema } from "./schemas.ts";
import { findMerge } from "./repository.ts";

/** Merge and undo (docs/api.md §20.2, §20.4). */
export const mergeRoutes = new OpenAPIHono<AppEnv>();

mergeRoutes.openapi(
  createRoute({
    method: "post",
    path: "/contacts/{contactId}/merge",
    operationId: "mergeContacts",
    summary: "Merge contacts into this one",
    description:
      "The path's contact survives with its contactId; each of contactIds leaves (GET answers 308 to the survivor, writes 409 " +
      "ERR_CONTACT_MERGED) and its interaction logs move to the survivor. Per field: `fields`' choice, else the survivor's non-empty " +
      "value, else the most recently updated other's; tags: the union; customFields key by key; subscribed and smsSubscribed: the " +
      "survivor's. Fires contact.merged and contact.deleted (reason merged) for each other. `dryRun: true` answers the would-be " +
      "contact and writes nothing. Undo within 30 days with POST /merges/{mergeId}/undo.",
    tags: ["Duplicates"],
    security,
    middleware: writing("contacts:write"),
    request: { params: ContactIdParam, body: { content: { "application/json": { schema: MergeBody } }, required: true } },
    responses: {
      200: json(MergeResultSchema, "The surviving contact (to a key without contacts:read, its receipt) and the merge."),
      ...commonErrors,
      404: errors[404],
      409: errors[409],
    },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const result = await mergeContacts(c.get("db"), c.get("caller").projectId, n, c.req.valid("json"), isoNow(c.get("deps").clock));
    return c.json({ contact: contactForCaller(c.get("caller"), result.contact), merge: result.merge } as never, 200);
  },
);

mergeRoutes.openapi(
  createRoute({
    method: "post",
    path: "/merges/{mergeId}/undo",
    operationId: "undoMerge",
    summary: "Undo a merge (within 30 days)",
    description:
      "The merged contacts come back with their contactIds, fields, tags and interaction logs as before the merge (logs added to " +
      "the survivor since stay with it); the survivor's fields the merge set and nobody changed since go back. Fires " +
      "contact.restored for each and contact.updated for the survivor. 410 ERR_UNDO_EXPIRED after 30 days; 409 when undone " +
      "already, or one of the contacts was since erased, deleted or merged again.",
    tags: ["Duplicates"],
    security,
    middleware: writing("contacts:write", { body: false }),
    request: { params: MergeIdParam },
    responses: {
      200: json(UndoResultSchema, "The survivor and the contacts restored."),
      ...commonErrors,
      402: errors[402],
      404: errors[404],
      409: errors[409],
      410: errors[410],
    },
  }),
  async (c) => {
    const db = c.get("db");
    const { projectId } = c.get("caller");
    const { mergeId } = c.req.valid("param");
    const now = isoNow(c.get("deps").clock);
    const result = await undoMerge(db, projectId, mergeId, now);
    const merge = (await findMerge(db, projectId, mergeId))!;
    const caller = c.get("caller");
    return c.json(
      {
        contact: contactForCaller(caller, result.contact),
        restoredContacts: result.restoredContacts.map((r) => contactForCaller(caller, r)),
        merge: {
          id: merge.id,
          mergedContactIds: result.restoredContacts.map((r) => r.contactId),
          at: merge.at,
          undoUntil: merge.undo_until,
          undoneAt: now,
        },
      } as never,
      200,
    );
  },
);
