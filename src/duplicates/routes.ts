import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, json, reading, security } from "../http/openapi.ts";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";
import { readDuplicates } from "./service.ts";

/** `GET /duplicates` (docs/api.md §20.1). */
export const duplicateRoutes = new OpenAPIHono<AppEnv>();

const DuplicateGroupSchema = z
  .object({
    reasons: z.array(z.enum(["email", "phone", "name"])).openapi({
      description:
        "What the contacts share: email (its match key), phone (its match key), name (the full name, case and accents ignored, " +
        "with the same businessName or email domain).",
    }),
    contactIds: z.array(z.string()).openapi({ description: "At least 2, at most 50: the most recently updated first.", example: ["CR-12", "CR-7"] }),
  })
  .openapi("DuplicateGroup");

export const DuplicatesQuery = z.object({ limit: limitParam, cursor: cursorParam });

duplicateRoutes.openapi(
  createRoute({
    method: "get",
    path: "/duplicates",
    operationId: "listDuplicates",
    summary: "Groups of likely duplicate contacts",
    description:
      "Live contacts that share a normalised email, a phone, or a full name (case and accents ignored) with the same businessName " +
      "or email domain; the group written to most recently first. Merge a group with POST /contacts/{contactId}/merge.",
    tags: ["Duplicates"],
    security,
    middleware: reading("contacts:read"),
    request: { query: DuplicatesQuery },
    responses: { 200: json(listEnvelope(DuplicateGroupSchema, "DuplicateGroupList"), "One page of groups."), ...commonErrors },
  }),
  async (c) => c.json(await readDuplicates(c.get("db"), c.get("deps").cursors, c.get("caller").projectId, c.req.valid("query")), 200),
);
