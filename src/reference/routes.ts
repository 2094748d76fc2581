import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, json, reading, security } from "../http/openapi.ts";
import { toPage } from "../lib/pagination.ts";
import { READ_ONLY_TYPES, TYPES_WITH_OPTIONS } from "./custom-fields.ts";
import { listCustomFields, listNamed } from "./repository.ts";
import { ContactTypeList, CustomFieldList, InteractionTypeList, ReferenceListQuery, TagList } from "./schemas.ts";
import type { CATEGORIES } from "./schemas.ts";

/** The four reference-data lists (interface §4.4, decisions §4); scope contacts:read. */
export const referenceRoutes = new OpenAPIHono<AppEnv>();

const listRoute = (path: string, schema: typeof ContactTypeList | typeof InteractionTypeList | typeof CustomFieldList | typeof TagList, summary: string) =>
  createRoute({
    method: "get",
    path,
    summary,
    tags: ["Reference data"],
    security,
    middleware: reading("contacts:read"),
    request: { query: ReferenceListQuery },
    responses: { 200: json(schema, "One page, ordered by name."), ...commonErrors },
  });

const byName = (row: { name: string; id: string }) => [row.name, row.id];

referenceRoutes.openapi(listRoute("/contact-types", ContactTypeList, "List contact types"), async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const { cursors } = c.var.deps;
  const filters = { list: "contact-types" };
  const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
  const rows = await listNamed(c.var.db, "contact_types", c.var.caller.projectId, limit, after);
  const page = toPage(rows, limit, byName, (r) => ({
    id: r.id,
    name: r.name,
    category: r.category as (typeof CATEGORIES)[number],
    isDefault: r.is_default === 1,
  }), cursors, filters);
  return c.json(page, 200);
});

referenceRoutes.openapi(listRoute("/interaction-types", InteractionTypeList, "List interaction types"), async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const { cursors } = c.var.deps;
  const filters = { list: "interaction-types" };
  const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
  const rows = await listNamed(c.var.db, "interaction_types", c.var.caller.projectId, limit, after);
  return c.json(toPage(rows, limit, byName, (r) => ({ id: r.id, name: r.name }), cursors, filters), 200);
});

referenceRoutes.openapi(listRoute("/tags", TagList, "List tags"), async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const { cursors } = c.var.deps;
  const filters = { list: "tags" };
  const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
  const rows = await listNamed(c.var.db, "tags", c.var.caller.projectId, limit, after);
  return c.json(toPage(rows, limit, byName, (r) => ({ id: r.id, name: r.name }), cursors, filters), 200);
});

referenceRoutes.openapi(listRoute("/custom-fields", CustomFieldList, "List custom fields"), async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const { cursors } = c.var.deps;
  const filters = { list: "custom-fields" };
  const after = cursor ? (cursors.decode(cursor, filters) as [string, string]) : undefined;
  const rows = await listCustomFields(c.var.db, c.var.caller.projectId, limit, after);
  const page = toPage(rows, limit, (r) => [r.title, r.id], (r) => ({
    id: r.id,
    title: r.title,
    type: r.type,
    ...(TYPES_WITH_OPTIONS.includes(r.type) ? { options: r.options ? (JSON.parse(r.options) as string[]) : [] } : {}),
    writable: !READ_ONLY_TYPES.includes(r.type),
  }), cursors, filters);
  return c.json(page, 200);
});
