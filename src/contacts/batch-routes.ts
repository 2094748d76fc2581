import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { takeItemsOfBatch } from "../auth/limits.ts";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, errors, json, jsonRequest, security, writing } from "../http/openapi.ts";
import { isoNow } from "../lib/time.ts";
import { applyContactBatch, ContactBatchAnswer, ContactBatchBody } from "./batch.ts";

/** Batch writes of contacts (docs/api.md §18.4): thin, as every route. */
export const contactBatchRoutes = new OpenAPIHono<AppEnv>();

contactBatchRoutes.openapi(
  createRoute({
    method: "post",
    path: "/contacts/batch",
    operationId: "batchContacts",
    summary: "Create, upsert or update up to 1,000 contacts",
    description:
      "Items are applied in order, each exactly as its single call (POST /contacts, PUT /contacts?matchOn, PATCH /contacts/{contactId}) " +
      "would be: its status and error are that call's. atomic: all or nothing (422 ERR_BATCH_REJECTED). One request of the minute " +
      "bucket; its items take tokens from the key's batch-items bucket, which the RateLimit headers describe here. Body up to 5 MiB. " +
      "Accepts an Idempotency-Key.",
    tags: ["Contacts"],
    security,
    middleware: writing("contacts:write", { prepare: takeItemsOfBatch(ContactBatchBody), alone: true }),
    request: { body: jsonRequest(ContactBatchBody) },
    responses: {
      200: json(ContactBatchAnswer, "Every item's result, in order, and their counts."),
      ...commonErrors,
      413: errors[413],
      415: errors[415],
    },
  }),
  async (c) => {
    const batch = c.req.valid("json");
    const answer = await applyContactBatch(c.get("db"), c.get("caller").projectId, batch, isoNow(c.get("deps").clock));
    // Plans right after a bulk load (docs/performance.md): the statistics follow a table that grew.
    c.get("deps").statistics.noteRowsWritten("contacts", answer.summary.created);
    return c.json(answer, 200);
  },
);
