import { sql } from "kysely";
import { keysetAfter } from "../storage/keyset.ts";
import { preparedQuery } from "../storage/prepared.ts";
import type { ContactTypeRow, Db } from "../storage/schema.ts";
import { newId } from "../lib/ids.ts";
import type { CustomField } from "./custom-fields.ts";

/** Keyset page ordered by name then id (docs/api.md §10): fetches `limit + 1` rows. */
type NamedTable = "contact_types" | "interaction_types" | "tags";

export async function listNamed<T extends NamedTable>(db: Db, table: T, projectId: string, limit: number, after?: [string, string]) {
  let q = db.selectFrom(table as NamedTable).selectAll().where("project_id", "=", projectId);
  if (after) {
    q = q.where((eb) => keysetAfter(eb as never, ["name", "id"], after, "asc"));
  }
  return q.orderBy("name").orderBy("id").limit(limit + 1).execute();
}

export async function listCustomFields(db: Db, projectId: string, limit: number, after?: [string, string]) {
  let q = db.selectFrom("custom_fields").selectAll().where("project_id", "=", projectId);
  if (after) {
    q = q.where((eb) => keysetAfter(eb as never, ["title", "id"], after, "asc"));
  }
  return q.orderBy("title").orderBy("id").limit(limit + 1).execute();
}

export async function allCustomFields(db: Db, projectId: string): Promise<CustomField[]> {
  const rows = await db.selectFrom("custom_fields").select(["id", "title", "type", "options"]).where("project_id", "=", projectId).execute();
  return rows.map((r) => ({ ...r, options: r.options ? (JSON.parse(r.options) as string[]) : null }));
}

const contactTypeById = preparedQuery<[string, string], ContactTypeRow>(2, (db, projectId, id) =>
  db.selectFrom("contact_types").selectAll().where("project_id", "=", projectId).where("id", "=", id),
);

export async function findContactType(db: Db, projectId: string, id: string) {
  return (await contactTypeById(db, projectId, id))[0];
}

/** The type a new contact gets: the default one, else the first Customer type, else the oldest. */
const defaultContactTypeOf = preparedQuery<[string], ContactTypeRow>(1, (db, projectId) =>
  db
    .selectFrom("contact_types")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("is_default", "desc")
    .orderBy(sql`category = 'Customer'`, "desc")
    .orderBy("created_at")
    .limit(1),
);

export async function defaultContactType(db: Db, projectId: string) {
  return (await defaultContactTypeOf(db, projectId))[0];
}

export async function contactTypeIdsOfCategory(db: Db, projectId: string, category: string): Promise<string[]> {
  const rows = await db.selectFrom("contact_types").select("id").where("project_id", "=", projectId).where("category", "=", category).execute();
  return rows.map((r) => r.id);
}

const interactionTypeById = preparedQuery<[string, string], { id: string; name: string }>(2, (db, projectId, id) =>
  db.selectFrom("interaction_types").select(["id", "name"]).where("project_id", "=", projectId).where("id", "=", id),
);

export async function findInteractionType(db: Db, projectId: string, id: string) {
  return (await interactionTypeById(db, projectId, id))[0];
}

export async function createContactType(db: Db, projectId: string, name: string, category: string, isDefault: boolean, now: string) {
  const id = newId("ct");
  if (isDefault) await db.updateTable("contact_types").set({ is_default: 0 }).where("project_id", "=", projectId).execute();
  await db
    .insertInto("contact_types")
    .values({ id, project_id: projectId, name, category, is_default: isDefault ? 1 : 0, created_at: now })
    .execute();
  return { id, name, category, isDefault };
}

export async function createInteractionType(db: Db, projectId: string, name: string, now: string) {
  const id = newId("it");
  await db.insertInto("interaction_types").values({ id, project_id: projectId, name, created_at: now }).execute();
  return { id, name };
}

/** `unique`: no two contacts of the project may hold one value (docs/api.md §18.3); fixed from creation on. */
export async function createCustomField(db: Db, projectId: string, title: string, type: string, options: string[] | null, now: string, unique = false) {
  const id = newId("cf");
  await db
    .insertInto("custom_fields")
    .values({ id, project_id: projectId, title, type, options: options ? JSON.stringify(options) : null, is_unique: unique ? 1 : 0, created_at: now })
    .execute();
  return { id, title, type, options, unique };
}

const tagById = preparedQuery<[string, string], { id: string; name: string }>(2, (db, projectId, id) =>
  db.selectFrom("tags").select(["id", "name"]).where("project_id", "=", projectId).where("id", "=", id),
);

const tagByNameKey = preparedQuery<[string, string], { id: string; name: string }>(2, (db, projectId, nameKey) =>
  db.selectFrom("tags").select(["id", "name"]).where("project_id", "=", projectId).where("name_key", "=", nameKey),
);

/** A tag by id, or by name case-insensitively (docs/api.md §11.1 rule 3); undefined when there is none. */
export async function findTag(db: Db, projectId: string, ref: string): Promise<{ id: string; name: string } | undefined> {
  const byId = ref.startsWith("tag_") ? (await tagById(db, projectId, ref))[0] : undefined;
  return byId ?? (await tagByNameKey(db, projectId, ref.toLowerCase()))[0];
}

/** Tags by id, or by name case-insensitively; unknown names are created at `now` (docs/api.md §11.1 rule 3). */
export async function resolveTags(db: Db, projectId: string, refs: string[], now: string): Promise<Array<{ id: string; name: string }>> {
  const out = new Map<string, { id: string; name: string }>();
  for (const ref of refs) {
    const key = ref.toLowerCase();
    const found = await findTag(db, projectId, ref);
    if (found) {
      out.set(found.id, found);
      continue;
    }
    const tag = { id: newId("tag"), name: ref };
    // Another node may create the same name at once: the unique key keeps one, which both use (docs/scaling.md §6).
    const inserted = await db
      .insertInto("tags")
      .values({ ...tag, project_id: projectId, name_key: key, created_at: now })
      .onConflict((oc) => oc.columns(["project_id", "name_key"]).doNothing())
      .executeTakeFirst();
    const made = Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0 ? tag : (await tagByNameKey(db, projectId, key))[0]!;
    out.set(made.id, made);
  }
  return [...out.values()];
}

/** Tag ids for `?tag=` filters; null when a name or id is unknown (the list is then empty). */
export async function findTagIds(db: Db, projectId: string, refs: string[]): Promise<string[] | null> {
  const ids: string[] = [];
  for (const ref of refs) {
    const row = await db
      .selectFrom("tags")
      .select("id")
      .where("project_id", "=", projectId)
      .where((eb) => eb.or([eb("id", "=", ref), eb("name_key", "=", ref.toLowerCase())]))
      .executeTakeFirst();
    if (!row) return null;
    ids.push(row.id);
  }
  return ids;
}
