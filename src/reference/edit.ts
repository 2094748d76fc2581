import type { Db } from "../storage/schema.ts";
import { TYPES_WITH_OPTIONS } from "./custom-fields.ts";
import { parseOptions, ReferenceInputError } from "./service.ts";
import { CATEGORIES } from "./schemas.ts";

/**
 * Changing and removing reference data (docs/admin.md §3): the console's edits of contact
 * types, interaction types and custom fields, under the rules that create them
 * (src/reference/service.ts). A record is removed only while nothing refers to it (a
 * contact, trashed or merged away included, a log, a form, a subscription's filter, a merge
 * that can still be undone): a removal never changes a contact. A rename changes no
 * contact either: contacts hold the id, and show the new name from then on.
 */

/** A removal or change refused because of what refers to the record: the sentence says what and what to do. */
export class ReferenceInUseError extends Error {}

/** A name or title: trimmed, 1–255 characters (as created). */
function checkName(field: "name" | "title", value: string): string {
  const name = value.trim();
  if (name === "" || name.length > 255) throw new ReferenceInputError(field, "must have 1–255 characters");
  return name;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

async function count(q: { executeTakeFirstOrThrow(): Promise<{ n: number | string | bigint }> }): Promise<number> {
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Merges that can still be undone whose snapshot names `id` (undo writes it back, docs/api.md §20.5). */
async function undoableMergesNaming(db: Db, projectId: string, id: string): Promise<number> {
  return count(
    db
      .selectFrom("merges")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("project_id", "=", projectId)
      .where("snapshot", "is not", null)
      .where("snapshot", "like", `%"${id}"%`),
  );
}

/** Subscriptions whose filter names `text` (a tag id, `customFields.<id>`), by description or id. */
export async function filtersNaming(db: Db, projectId: string, text: string): Promise<string[]> {
  const rows = await db
    .selectFrom("webhooks")
    .select(["id", "description"])
    .where("project_id", "=", projectId)
    .where("filter", "like", `%"${text}"%`)
    .execute();
  return rows.map((r) => r.description ?? r.id);
}

/** A contact type's name, category, and whether it becomes the default (the flag moves; it is never just cleared). */
export async function editContactType(db: Db, projectId: string, id: string, input: { name: string; category: string; makeDefault: boolean }) {
  const { category } = input;
  if (!(CATEGORIES as readonly string[]).includes(category)) throw new ReferenceInputError("category", `must be one of ${CATEGORIES.join(", ")}`);
  const name = input.name.trim() === "" ? category : checkName("name", input.name);
  if (input.makeDefault) await db.updateTable("contact_types").set({ is_default: 0 }).where("project_id", "=", projectId).where("id", "!=", id).execute();
  const set = input.makeDefault ? { name, category, is_default: 1 } : { name, category };
  const done = await db.updateTable("contact_types").set(set).where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
  if (Number(done.numUpdatedRows) === 0) throw new ReferenceInUseError("This contact type no longer exists.");
}

/** Removes a contact type no contact has (trash included), unless it is the default. */
export async function removeContactType(db: Db, projectId: string, id: string) {
  const type = await db.selectFrom("contact_types").select(["is_default"]).where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
  if (!type) return;
  if (type.is_default === 1) throw new ReferenceInUseError("The default type cannot be deleted: make another type the default first.");
  const held = await count(db.selectFrom("contacts").select((eb) => eb.fn.countAll<number>().as("n")).where("contact_type_id", "=", id));
  if (held > 0) throw new ReferenceInUseError(`${plural(held, "contact has", "contacts have")} this type (the trash included): give them another type first.`);
  if ((await undoableMergesNaming(db, projectId, id)) > 0) throw new ReferenceInUseError("A merge that can still be undone holds this type: it can be deleted once that undo has expired.");
  await db.deleteFrom("contact_types").where("project_id", "=", projectId).where("id", "=", id).execute();
}

export async function editInteractionType(db: Db, projectId: string, id: string, name: string) {
  const done = await db.updateTable("interaction_types").set({ name: checkName("name", name) }).where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
  if (Number(done.numUpdatedRows) === 0) throw new ReferenceInUseError("This interaction type no longer exists.");
}

/** Removes an interaction type no log has (the logs of trashed contacts included). */
export async function removeInteractionType(db: Db, projectId: string, id: string) {
  const held = await count(db.selectFrom("interaction_logs").select((eb) => eb.fn.countAll<number>().as("n")).where("project_id", "=", projectId).where("interaction_type_id", "=", id));
  if (held > 0) throw new ReferenceInUseError(`${plural(held, "interaction log has", "interaction logs have")} this type: it cannot be deleted.`);
  await db.deleteFrom("interaction_types").where("project_id", "=", projectId).where("id", "=", id).execute();
}

/** The values contacts of the project hold for a custom field (trash included), read from the rows that mention it. */
async function heldValues(db: Db, projectId: string, fieldId: string): Promise<unknown[]> {
  const rows = await db
    .selectFrom("contacts")
    .select("custom_fields")
    .where("project_id", "=", projectId)
    .where("custom_fields", "like", `%"${fieldId}"%`)
    .execute();
  return rows.map((r) => (JSON.parse(r.custom_fields) as Record<string, unknown>)[fieldId]).filter((v) => v !== undefined && v !== null);
}

/**
 * A custom field's title (unique in the project) and, for select, radio and multiselect,
 * its options (comma-separated, at least one). An option some contact holds stays: taking
 * it away would leave values the API refuses on the next write of that contact.
 */
export async function editCustomField(db: Db, projectId: string, id: string, input: { title: string; options?: string | null }) {
  const field = await db.selectFrom("custom_fields").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
  if (!field) throw new ReferenceInUseError("This custom field no longer exists.");
  const title = checkName("title", input.title);
  const taken = await db.selectFrom("custom_fields").select("id").where("project_id", "=", projectId).where("title", "=", title).where("id", "!=", id).executeTakeFirst();
  if (taken) throw new ReferenceInputError("title", `is already used by custom field ${taken.id}`);
  let options = field.options;
  if (TYPES_WITH_OPTIONS.includes(field.type)) {
    const list = [...new Set(parseOptions(input.options))];
    if (list.length === 0) throw new ReferenceInputError("options", `is required for ${field.type}`);
    const before = field.options ? (JSON.parse(field.options) as string[]) : [];
    const dropped = before.filter((o) => !list.includes(o));
    if (dropped.length > 0) {
      const held = new Set((await heldValues(db, projectId, id)).flatMap((v) => [v].flat()));
      const used = dropped.filter((o) => held.has(o));
      if (used.length > 0) throw new ReferenceInputError("options", `must keep ${used.join(", ")}: contacts hold ${used.length === 1 ? "it" : "them"}`);
    }
    options = JSON.stringify(list);
  }
  await db.updateTable("custom_fields").set({ title, options }).where("id", "=", id).execute();
}

/** Removes a custom field nothing refers to: no contact's value, form, subscription filter or undoable merge. */
export async function removeCustomField(db: Db, projectId: string, id: string) {
  const held = (await heldValues(db, projectId, id)).length;
  if (held > 0) throw new ReferenceInUseError(`${plural(held, "contact holds a value", "contacts hold values")} of this field (the trash included): it cannot be deleted.`);
  const forms = await db.selectFrom("forms").select("name").where("project_id", "=", projectId).where("fields", "like", `%"${id}"%`).execute();
  if (forms.length > 0) throw new ReferenceInUseError(`The form${forms.length === 1 ? "" : "s"} ${forms.map((f) => f.name).join(", ")} ask${forms.length === 1 ? "s" : ""} for this field: take it off first.`);
  const hooks = await filtersNaming(db, projectId, `customFields.${id}`);
  if (hooks.length > 0) throw new ReferenceInUseError(`The webhook filter of ${hooks.join(", ")} names this field: change it first.`);
  if ((await undoableMergesNaming(db, projectId, id)) > 0) throw new ReferenceInUseError("A merge that can still be undone holds this field: it can be deleted once that undo has expired.");
  await db.deleteFrom("contact_unique_values").where("field_id", "=", id).execute();
  await db.deleteFrom("custom_fields").where("project_id", "=", projectId).where("id", "=", id).execute();
}

