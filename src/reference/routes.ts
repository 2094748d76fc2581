import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, json, reading, security } from "../http/openapi.ts";
import { toPage } from "../lib/pagination.ts";
import { READ_ONLY_TYPES, TYPES_WITH_OPTIONS } from "./custom-fields.ts";
import { listCustomFields, listNamed } from "./repository.ts";
import { ContactTypeList, CustomFieldList, InteractionTypeList, ReferenceListQuery, TagList } from "./schemas.ts";
import type { CATEGORIES } from "./schemas.ts";

/** The four reference-data lists (docs/api.md §10); scope contacts:read. */
export const referenceRoutes = new OpenAPIHono<AppEnv>();

const listRoute = (
  path: string,
  schema: typeof ContactTypeList | typeof InteractionTypeList | typeof CustomFieldList | typeof TagList,
  operationId: string,
  summary: string,
) =>
  createRoute({
    method: "get",
    path,
    operationId,
    summary,
    description: "One page, ordered by name then id. Read-only through the API: made with the CLI (`crm contact-type create`, …) or the admin console.",
    tags: ["Reference data"],
    security,
    middleware: reading("contacts:read"),
    request: { query: ReferenceListQuery },
    responses: { 200: json(schema, "One page, ordered by name."), ...commonErrors },
  });

type Ctx = Context<AppEnv, string, { out: { query: { limit: number; cursor?: string } } }>;

/** One page of a reference list; the cursor is bound to the list it came from. */
async function referencePage<R, T>(
  c: Ctx,
  list: string,
  fetch: (limit: number, after?: [string, string]) => Promise<R[]>,
  position: (row: R) => [string, string],
  map: (row: R) => T,
) {
  const { limit, cursor } = c.req.valid("query");
  const { cursors } = c.get("deps");
  const filters = { list };
  const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
  return toPage(await fetch(limit, after), limit, position, map, cursors, filters);
}

const byName = (row: { name: string; id: string }): [string, string] => [row.name, row.id];

referenceRoutes.openapi(listRoute("/contact-types", ContactTypeList, "listContactTypes", "List contact types"), async (c) => {
  const projectId = c.get("caller").projectId;
  const page = await referencePage(c, "contact-types", (limit, after) => listNamed(c.get("db"), "contact_types", projectId, limit, after), byName, (r) => ({
    id: r.id,
    name: r.name,
    category: r.category as (typeof CATEGORIES)[number],
    isDefault: r.is_default === 1,
  }));
  return c.json(page, 200);
});

referenceRoutes.openapi(listRoute("/interaction-types", InteractionTypeList, "listInteractionTypes", "List interaction types"), async (c) => {
  const projectId = c.get("caller").projectId;
  const page = await referencePage(c, "interaction-types", (limit, after) => listNamed(c.get("db"), "interaction_types", projectId, limit, after), byName, (r) => ({ id: r.id, name: r.name }));
  return c.json(page, 200);
});

referenceRoutes.openapi(listRoute("/tags", TagList, "listTags", "List tags"), async (c) => {
  const projectId = c.get("caller").projectId;
  const page = await referencePage(c, "tags", (limit, after) => listNamed(c.get("db"), "tags", projectId, limit, after), byName, (r) => ({ id: r.id, name: r.name }));
  return c.json(page, 200);
});

referenceRoutes.openapi(listRoute("/custom-fields", CustomFieldList, "listCustomFields", "List custom fields"), async (c) => {
  const projectId = c.get("caller").projectId;
  const page = await referencePage(c, "custom-fields", (limit, after) => listCustomFields(c.get("db"), projectId, limit, after), (r) => [r.title, r.id], (r) => ({
    id: r.id,
    title: r.title,
    type: r.type,
    ...(TYPES_WITH_OPTIONS.includes(r.type) ? { options: r.options ? (JSON.parse(r.options) as string[]) : [] } : {}),
    writable: !READ_ONLY_TYPES.includes(r.type),
    unique: r.is_unique === 1,
  }));
  return c.json(page, 200);
});
