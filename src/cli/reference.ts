import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { findProject } from "../projects/service.ts";
import { CUSTOM_FIELD_TYPES, TYPES_WITH_OPTIONS } from "../reference/custom-fields.ts";
import { createContactType, createCustomField, createInteractionType } from "../reference/repository.ts";
import { CATEGORIES } from "../reference/schemas.ts";
import { options, output, required, UsageError } from "./args.ts";

async function projectOf(db: Kysely<Database>, value: string | undefined) {
  const id = required(value, "--project");
  if (!(await findProject(db, id))) throw new UsageError(`no project ${id}`);
  return id;
}

/** `crm contact-type|interaction-type|custom-field create` (decisions §3, §4). */
export async function referenceCommand(db: Kysely<Database>, kind: string, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== "create") throw new UsageError(`usage: crm ${kind} create --project ID ...`);
  const { values } = options(rest, {
    project: { type: "string" },
    name: { type: "string" },
    title: { type: "string" },
    category: { type: "string" },
    type: { type: "string" },
    options: { type: "string" },
    default: { type: "boolean" },
  });
  const projectId = await projectOf(db, values.project);
  if (kind === "contact-type") {
    const category = required(values.category, "--category");
    if (!(CATEGORIES as readonly string[]).includes(category)) throw new UsageError(`--category is one of ${CATEGORIES.join(", ")}`);
    const name = values.name ?? category;
    const created = await db.transaction().execute((trx) => createContactType(trx, projectId, name, category, values.default ?? false));
    return output(values.json, created, `Created contact type ${created.name} (${created.id}).`);
  }
  if (kind === "interaction-type") {
    const created = await createInteractionType(db, projectId, required(values.name, "--name"));
    return output(values.json, created, `Created interaction type ${created.name} (${created.id}).`);
  }
  const title = required(values.title, "--title");
  const type = required(values.type, "--type");
  if (!(CUSTOM_FIELD_TYPES as readonly string[]).includes(type)) throw new UsageError(`--type is one of ${CUSTOM_FIELD_TYPES.join(", ")}`);
  const list = values.options?.split(",").map((o) => o.trim()).filter(Boolean) ?? [];
  if (TYPES_WITH_OPTIONS.includes(type) && list.length === 0) throw new UsageError(`--options is required for ${type}`);
  const exists = await db.selectFrom("custom_fields").select("id").where("project_id", "=", projectId).where("title", "=", title).executeTakeFirst();
  if (exists) throw new UsageError(`a custom field titled ${title} exists (${exists.id})`);
  const created = await createCustomField(db, projectId, title, type, TYPES_WITH_OPTIONS.includes(type) ? list : null);
  const writable = type !== "image" && type !== "offering-list";
  return output(values.json, { ...created, options: created.options ?? undefined, writable }, `Created custom field ${title} (${created.id}).`);
}
