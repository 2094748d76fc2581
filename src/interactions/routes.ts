import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { ContactIdParam } from "../contacts/schemas.ts";
import { replayedLogForCaller } from "../contacts/receipts.ts";
import { requireContactNumber } from "../contacts/service.ts";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, errors, json, jsonRequest, reading, security, writing } from "../http/openapi.ts";
import { isoNow } from "../lib/time.ts";
import { CreateInteractionBody, InteractionCreatedAnswer, InteractionList, InteractionReplayAnswer, ListInteractionsQuery } from "./schemas.ts";
import { createInteraction, listInteractions } from "./service.ts";
import { applyInteractionBatch, InteractionBatchAnswer, InteractionBatchBody } from "./batch.ts";
import { takeItemsOfBatch } from "../auth/limits.ts";

/** Interaction logs (docs/api.md §12). */
export const interactionRoutes = new OpenAPIHono<AppEnv>();

const tags = ["Interaction logs"];

interactionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/contacts/{contactId}/interactions",
    operationId: "createInteractionLog",
    summary: "Add an interaction log",
    description: "201 when created; 200 with the stored log when uniqueIdentifier was used before on this contact.",
    tags,
    security,
    middleware: writing("interactions:write"),
    request: { params: ContactIdParam, body: jsonRequest(CreateInteractionBody) },
    responses: {
      201: json(InteractionCreatedAnswer, "Created."),
      200: json(
        InteractionReplayAnswer,
        "Replay of a uniqueIdentifier: the stored log; to a key without contacts:read, only its receipt (InteractionLogReceipt: id, contactId, createdAt).",
      ),
      ...commonErrors,
      404: errors[404],
    },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const { log, created } = await createInteraction(c.get("db"), c.get("caller").projectId, n, c.req.valid("json"), isoNow(c.get("deps").clock));
    // docs/security.md §1 (docs/security.md §3): a replay's stored log is for keys that may read it.
    return created ? c.json(log, 201) : c.json(replayedLogForCaller(c.get("caller"), log), 200);
  },
);

interactionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/contacts/{contactId}/interactions",
    operationId: "listInteractionLogs",
    summary: "List a contact's interaction logs",
    description: "Newest first. Filter by interactionTypeId (or \"note\") and by a since/until window on the log's date.",
    tags,
    security,
    middleware: reading("contacts:read"),
    request: { params: ContactIdParam, query: ListInteractionsQuery },
    responses: { 200: json(InteractionList, "One page, newest first."), ...commonErrors, 404: errors[404] },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const page = await listInteractions(c.get("db"), c.get("deps").cursors, c.get("caller").projectId, n, c.req.valid("query"));
    return c.json(page, 200);
  },
);

interactionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/interactions/batch",
    operationId: "batchInteractions",
    summary: "Add up to 1,000 interaction logs",
    description:
      "Items { contactId, interactionTypeId | type, note, date, fields, uniqueIdentifier } are applied in order, each exactly as " +
      "POST /contacts/{contactId}/interactions would be: created (201), replayed by its uniqueIdentifier (200), or that call's error. " +
      "atomic: all or nothing (422 ERR_BATCH_REJECTED). Limits as POST /contacts/batch; accepts an Idempotency-Key.",
    tags,
    security,
    middleware: writing("interactions:write", { prepare: takeItemsOfBatch(InteractionBatchBody), alone: true }),
    request: { body: jsonRequest(InteractionBatchBody) },
    responses: { 200: json(InteractionBatchAnswer, "Every item's result, in order, and their counts."), ...commonErrors, 413: errors[413], 415: errors[415] },
  }),
  async (c) => {
    const answer = await applyInteractionBatch(c.get("db"), c.get("caller").projectId, c.req.valid("json"), isoNow(c.get("deps").clock));
    c.get("deps").statistics.noteRowsWritten("interaction_logs", answer.summary.created);
    return c.json(answer, 200);
  },
);
