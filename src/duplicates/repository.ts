import { sql } from "kysely";
import type { Db } from "../storage/schema.ts";
import { preparedInsert } from "../storage/prepared.ts";
import { keyValue, reasonOf } from "./keys.ts";

/** Most contactIds a group lists (docs/api.md §20.1): the most recently updated first. */
export const MAX_GROUP_MEMBERS = 50;

const insertNameKeyRows = preparedInsert("contact_name_keys", ["project_id", "key", "contact_id"], { maxRows: 1024 });

export async function insertNameKeys(db: Db, rows: Array<{ projectId: string; key: string; contactId: number }>) {
  await insertNameKeyRows(db, rows.map((r) => [r.projectId, r.key, r.contactId]));
}

export async function deleteNameKeys(db: Db, contactId: number, keys?: string[]) {
  if (keys?.length === 0) return;
  let query = db.deleteFrom("contact_name_keys").where("contact_id", "=", contactId);
  if (keys) query = query.where("key", "in", keys);
  await query.execute();
}

/** Of `keys`, those two or more live contacts hold now (grouped per kind: one statement each). */
export async function sharedKeys(db: Db, projectId: string, keys: string[]): Promise<string[]> {
  const byKind = { email: [] as string[], phone: [] as string[], name: [] as string[] };
  for (const key of keys) byKind[reasonOf(key)].push(keyValue(key));
  const shared: string[] = [];
  for (const column of ["email_key", "phone_key"] as const) {
    const values = byKind[column === "email_key" ? "email" : "phone"];
    if (values.length === 0) continue;
    const rows = await db
      .selectFrom("contacts")
      .select(`${column} as value` as "email_key as value")
      .where("project_id", "=", projectId)
      .where(column, "in", values)
      .groupBy(column)
      .having(sql`count(*)`, ">=", 2)
      .execute();
    const prefix = column === "email_key" ? "email:" : "phone:";
    for (const r of rows) shared.push(prefix + r.value);
  }
  if (byKind.name.length > 0) {
    const rows = await db
      .selectFrom("contact_name_keys")
      .select("key")
      .where("project_id", "=", projectId)
      .where("key", "in", byKind.name)
      .groupBy("key")
      .having(sql`count(*)`, ">=", 2)
      .execute();
    for (const r of rows) shared.push(r.key);
  }
  return shared;
}

/** Marks `keys` as groups written to at `at` (a new group, or one a member of was written). */
export async function touchGroups(db: Db, projectId: string, keys: string[], at: string) {
  if (keys.length === 0) return;
  await db
    .insertInto("duplicate_groups")
    .values(keys.map((key) => ({ project_id: projectId, key, last_at: at })))
    .onConflict((oc) => oc.columns(["project_id", "key"]).doUpdateSet({ last_at: at }))
    .execute();
}

/** Moves the groups of `keys` that exist to the top (a member was written; membership unchanged). */
export async function touchExistingGroups(db: Db, projectId: string, keys: string[], at: string) {
  if (keys.length === 0) return;
  await db.updateTable("duplicate_groups").set({ last_at: at }).where("project_id", "=", projectId).where("key", "in", keys).execute();
}

export async function deleteGroups(db: Db, projectId: string, keys: string[]) {
  if (keys.length === 0) return;
  await db.deleteFrom("duplicate_groups").where("project_id", "=", projectId).where("key", "in", keys).execute();
}

export interface GroupRow {
  key: string;
  last_at: string;
}

/** Group rows newest first, after (last_at, key) when given. */
export async function groupRows(db: Db, projectId: string, after: { lastAt: string; key: string } | null, limit: number): Promise<GroupRow[]> {
  let query = db.selectFrom("duplicate_groups").select(["key", "last_at"]).where("project_id", "=", projectId);
  if (after) {
    query = query.where((eb) => eb.or([eb("last_at", "<", after.lastAt), eb.and([eb("last_at", "=", after.lastAt), eb("key", "<", after.key)])]));
  }
  return query.orderBy("last_at", "desc").orderBy("key", "desc").limit(limit).execute();
}

/** The live contacts holding `key`, most recently updated first (at most MAX_GROUP_MEMBERS + 1). */
export async function membersOf(db: Db, projectId: string, key: string): Promise<number[]> {
  const reason = reasonOf(key);
  const base =
    reason === "name"
      ? db
          .selectFrom("contact_name_keys")
          .innerJoin("contacts", "contacts.id", "contact_name_keys.contact_id")
          .where("contact_name_keys.project_id", "=", projectId)
          .where("contact_name_keys.key", "=", key)
      : db
          .selectFrom("contacts")
          .where("contacts.project_id", "=", projectId)
          .where(reason === "email" ? "contacts.email_key" : "contacts.phone_key", "=", keyValue(key));
  const rows = await base
    .select("contacts.contact_number")
    .where("contacts.deleted_at", "is", null)
    .orderBy("contacts.updated_at", "desc")
    .orderBy("contacts.contact_number", "desc")
    .limit(MAX_GROUP_MEMBERS + 1)
    .execute();
  return rows.map((r) => Number(r.contact_number));
}
