import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { findProject } from "../projects/service.ts";
import { CUSTOM_FIELD_TYPES, TYPES_WITH_OPTIONS } from "../reference/custom-fields.ts";
import { createContactType, createCustomField, createInteractionType } from "../reference/repository.ts";
import { CATEGORIES } from "../reference/schemas.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

async function projectOf(db: Kysely<Database>, id: string) {
  if (!(await findProject(db, id))) throw new UsageError(`no project ${id}`);
  return id;
}

/** `crm contact-type create` (decisions §3, §4). */
export async function contactTypeCreate(db: Kysely<Database>, { values }: Input<"contact-type create">): Promise<void> {
  const projectId = await projectOf(db, values.project);
  const category = values.category;
  if (!(CATEGORIES as readonly string[]).includes(category)) throw new UsageError(`--category is one of ${CATEGORIES.join(", ")}`);
  const name = values.name ?? category;
  const created = await db.transaction().execute((trx) => createContactType(trx, projectId, name, category, values.default ?? false));
  output(values.json, created, `Created contact type ${created.name} (${created.id}).`);
}

/** `crm interaction-type create` (decisions §3, §4). */
export async function interactionTypeCreate(db: Kysely<Database>, { values }: Input<"interaction-type create">): Promise<void> {
  const projectId = await projectOf(db, values.project);
  const created = await createInteractionType(db, projectId, values.name);
  output(values.json, created, `Created interaction type ${created.name} (${created.id}).`);
}

/** `crm custom-field create` (decisions §3, §4). */
export async function customFieldCreate(db: Kysely<Database>, { values }: Input<"custom-field create">): Promise<void> {
  const projectId = await projectOf(db, values.project);
  const { title, type } = values;
  if (!(CUSTOM_FIELD_TYPES as readonly string[]).includes(type)) throw new UsageError(`--type is one of ${CUSTOM_FIELD_TYPES.join(", ")}`);
  const list = values.options?.split(",").map((o) => o.trim()).filter(Boolean) ?? [];
  if (TYPES_WITH_OPTIONS.includes(type) && list.length === 0) throw new UsageError(`--options is required for ${type}`);
  const exists = await db.selectFrom("custom_fields").select("id").where("project_id", "=", projectId).where("title", "=", title).executeTakeFirst();
  if (exists) throw new UsageError(`a custom field titled ${title} exists (${exists.id})`);
  const created = await createCustomField(db, projectId, title, type, TYPES_WITH_OPTIONS.includes(type) ? list : null);
  const writable = type !== "image" && type !== "offering-list";
  output(values.json, { ...created, options: created.options ?? undefined, writable }, `Created custom field ${title} (${created.id}).`);
}
