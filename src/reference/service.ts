import type { Db } from "../storage/schema.ts";
import { CUSTOM_FIELD_TYPES, READ_ONLY_TYPES, TYPES_WITH_OPTIONS } from "./custom-fields.ts";
import { createContactType, createCustomField, createInteractionType } from "./repository.ts";
import { CATEGORIES } from "./schemas.ts";

/**
 * Creating reference data (docs/cli.md §4, docs/api.md §10): the rules that `crm contact-type create`,
 * `crm interaction-type create`, `crm custom-field create` and the admin console's
 * reference page (docs/admin.md §3) share, so neither has a second copy. The API only reads
 * reference data.
 */

/**
 * Input the rules refuse: which input (`name`, `category`, `title`, `type`, `options`, `unique`) and
 * why, as a predicate ("is required for select"). The CLI puts its option in front
 * (`--options is required for select`), the console its field's label.
 */
export class ReferenceInputError extends Error {
  constructor(
    readonly field: "name" | "category" | "title" | "type" | "options" | "unique",
    readonly predicate: string,
  ) {
    super(`${field} ${predicate}`);
  }
}

/** A name or title: trimmed, 1–255 characters. */
function checkName(field: "name" | "title", value: string): string {
  const name = value.trim();
  if (name === "" || name.length > 255) throw new ReferenceInputError(field, "must have 1–255 characters");
  return name;
}

/** A contact type; the name defaults to the category; a default type takes the flag from the project's previous one. */
export async function addContactType(db: Db, projectId: string, input: { name?: string | null; category: string; isDefault?: boolean }, now: string) {
  const { category } = input;
  if (!(CATEGORIES as readonly string[]).includes(category)) throw new ReferenceInputError("category", `must be one of ${CATEGORIES.join(", ")}`);
  const name = input.name == null || input.name.trim() === "" ? category : checkName("name", input.name);
  return createContactType(db, projectId, name, category, input.isDefault ?? false, now);
}

export async function addInteractionType(db: Db, projectId: string, name: string, now: string) {
  return createInteractionType(db, projectId, checkName("name", name), now);
}

/** Comma-separated choices → the list (blanks dropped). */
export const parseOptions = (text: string | null | undefined): string[] =>
  text?.split(",").map((o) => o.trim()).filter(Boolean) ?? [];

/** The one type a custom field may be declared unique of (docs/api.md §18.3). */
export const UNIQUE_FIELD_TYPE = "text";

/**
 * A custom field (docs/api.md §10): a known type; options (comma-separated) required for
 * select, radio and multiselect and kept only for them; a title unique in the project;
 * `unique` only for type text (docs/api.md §18.3).
 */
export async function addCustomField(
  db: Db,
  projectId: string,
  input: { title: string; type: string; options?: string | null; unique?: boolean },
  now: string,
) {
  const title = checkName("title", input.title);
  const { type } = input;
  if (!(CUSTOM_FIELD_TYPES as readonly string[]).includes(type)) throw new ReferenceInputError("type", `must be one of ${CUSTOM_FIELD_TYPES.join(", ")}`);
  const unique = input.unique ?? false;
  if (unique && type !== UNIQUE_FIELD_TYPE) throw new ReferenceInputError("unique", `is only for type ${UNIQUE_FIELD_TYPE}, not ${type}`);
  const list = parseOptions(input.options);
  const withOptions = TYPES_WITH_OPTIONS.includes(type);
  if (withOptions && list.length === 0) throw new ReferenceInputError("options", `is required for ${type}`);
  const exists = await db.selectFrom("custom_fields").select("id").where("project_id", "=", projectId).where("title", "=", title).executeTakeFirst();
  if (exists) throw new ReferenceInputError("title", `is already used by custom field ${exists.id}`);
  const created = await createCustomField(db, projectId, title, type, withOptions ? list : null, now, unique);
  return { ...created, options: created.options ?? undefined, writable: !READ_ONLY_TYPES.includes(type) };
}
