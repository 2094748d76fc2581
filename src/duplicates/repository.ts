import { sql } from "kysely";
import type { Db } from "../storage/schema.ts";
import { preparedInsert, preparedQuery } from "../storage/prepared.ts";
import { keysetAfter } from "../storage/keyset.ts";
import { keyValue, reasonOf, type DuplicateReason } from "./keys.ts";

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

/** Up to this many keys go in one statement compiled once per shape (src/storage/prepared.ts); more (a batch's) in grouped statements. */
const FEW = 8;

type Probe = (db: Db, ...args: string[]) => Promise<Array<{ i: number; n: number }>>;
const probes = new Map<string, Probe>();

/** One statement: for each key, how many live contacts hold it (counted up to 2). */
function probeFor(reasons: DuplicateReason[]): Probe {
  const shape = reasons.join(",");
  let probe = probes.get(shape);
  if (!probe) {
    probe = preparedQuery<string[], { i: number; n: number }>(reasons.length + 1, (db, projectId, ...values) => {
      const holders = (reason: DuplicateReason, value: never) =>
        reason === "name"
          ? db.selectFrom("contact_name_keys").select("contact_id as id").where("project_id", "=", projectId).where("key", "=", value).limit(2)
          : db.selectFrom("contacts").select("id").where("project_id", "=", projectId).where(reason === "email" ? "email_key" : "phone_key", "=", value).limit(2);
      const counted = reasons.map((reason, i) =>
        db.selectFrom(holders(reason, values[i]!).as("h")).select((eb) => [sql.lit(i).as("i"), eb.fn.countAll<number>().as("n")]),
      );
      return counted.slice(1).reduce((all, next) => all.unionAll(next as never), counted[0]!) as never;
    }) as Probe;
    probes.set(shape, probe);
  }
  return probe;
}

const touches = new Map<number, (db: Db, ...args: string[]) => Promise<never[]>>();
function touchFor(count: number) {
  let touch = touches.get(count);
  if (!touch) {
    touch = preparedQuery<string[], never>(count + 2, (db, at, projectId, ...keys) =>
      db.updateTable("duplicate_groups").set({ last_at: at }).where("project_id", "=", projectId).where("key", "in", keys),
    );
    touches.set(count, touch);
  }
  return touch;
}

/** Of `keys`, those two or more live contacts hold now. */
export async function sharedKeys(db: Db, projectId: string, keys: string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  if (keys.length <= FEW) {
    const rows = await probeFor(keys.map(reasonOf))(db, projectId, ...keys.map(keyValue));
    return rows.filter((r) => Number(r.n) >= 2).map((r) => keys[Number(r.i)]!);
  }
  return sharedKeysGrouped(db, projectId, keys);
}

async function sharedKeysGrouped(db: Db, projectId: string, keys: string[]): Promise<string[]> {
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
  if (keys.length <= FEW) {
    await touchFor(keys.length)(db, at, projectId, ...keys);
    return;
  }
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
  // With the first column's own bound, the index seeks to the cursor instead of walking every newer group.
  if (after) query = query.where((eb) => keysetAfter(eb as never, ["last_at", "key"], [after.lastAt, after.key], "desc"));
  return query.orderBy("last_at", "desc").orderBy("key", "desc").limit(limit).execute();
}

export interface Member {
  contact_number: number;
  first_name: string | null;
  last_name: string | null;
  business_name: string | null;
  email_key: string | null;
  phone_key: string | null;
}

/** The numbers of the live contacts holding `key`, most recently updated first (at most MAX_GROUP_MEMBERS + 1). */
export async function membersOf(db: Db, projectId: string, key: string): Promise<number[]> {
  return (await membersWithKeys(db, projectId, key)).map((m) => m.contact_number);
}

/** The live contacts holding `key` with their keyed fields, most recently updated first (at most MAX_GROUP_MEMBERS + 1). */
export async function membersWithKeys(db: Db, projectId: string, key: string): Promise<Member[]> {
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
    .select(["contacts.contact_number", "contacts.first_name", "contacts.last_name", "contacts.business_name", "contacts.email_key", "contacts.phone_key"])
    .where("contacts.deleted_at", "is", null)
    .orderBy("contacts.updated_at", "desc")
    .orderBy("contacts.contact_number", "desc")
    .limit(MAX_GROUP_MEMBERS + 1)
    .execute();
  return rows.map((r) => ({ ...r, contact_number: Number(r.contact_number) }));
}

/**
 * membersWithKeys for many keys at once: one statement per kind, each key's holders numbered
 * by recency (row_number over the key) and cut at MAX_GROUP_MEMBERS + 1, so a page of groups
 * costs a few round trips, not one per group (PostgreSQL).
 */
export async function membersOfKeys(db: Db, projectId: string, keys: string[]): Promise<Map<string, Member[]>> {
  const found = new Map<string, Member[]>(keys.map((k) => [k, []]));
  const byKind = { email: [] as string[], phone: [] as string[], name: [] as string[] };
  for (const key of keys) byKind[reasonOf(key)].push(keyValue(key));
  const columns = ["contacts.contact_number", "contacts.first_name", "contacts.last_name", "contacts.business_name", "contacts.email_key", "contacts.phone_key"] as const;
  const kinds = [
    ["email", "contacts.email_key"],
    ["phone", "contacts.phone_key"],
    ["name", "contact_name_keys.key"],
  ] as const;
  for (const [kind, column] of kinds) {
    const values = byKind[kind];
    if (values.length === 0) continue;
    const base =
      kind === "name"
        ? db.selectFrom("contact_name_keys").innerJoin("contacts", "contacts.id", "contact_name_keys.contact_id").where("contact_name_keys.project_id", "=", projectId)
        : db.selectFrom("contacts").where("contacts.project_id", "=", projectId);
    const ranked = base
      .select([...columns, sql<string>`${sql.ref(column)}`.as("held"), sql<number>`row_number() over (partition by ${sql.ref(column)} order by contacts.updated_at desc, contacts.contact_number desc)`.as("rank")])
      .where(sql.ref(column), "in", values)
      .where("contacts.deleted_at", "is", null);
    const rows = await db.selectFrom(ranked.as("r")).selectAll().where("rank", "<=", MAX_GROUP_MEMBERS + 1).orderBy("held").orderBy("rank").execute();
    for (const r of rows) {
      const key = kind === "name" ? r.held : `${kind}:${r.held}`;
      found.get(key)?.push({
        contact_number: Number(r.contact_number),
        first_name: r.first_name,
        last_name: r.last_name,
        business_name: r.business_name,
        email_key: r.email_key,
        phone_key: r.phone_key,
      });
    }
  }
  return found;
}

/** How many live contacts hold each of `keys` (grouped per kind: one statement each). */
export async function holderCounts(db: Db, projectId: string, keys: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const byKind = { email: [] as string[], phone: [] as string[], name: [] as string[] };
  for (const key of keys) byKind[reasonOf(key)].push(keyValue(key));
  for (const column of ["email_key", "phone_key"] as const) {
    const values = byKind[column === "email_key" ? "email" : "phone"];
    if (values.length === 0) continue;
    const rows = await db
      .selectFrom("contacts")
      .select([`${column} as value` as "email_key as value", (eb) => eb.fn.countAll<number>().as("n")])
      .where("project_id", "=", projectId)
      .where(column, "in", values)
      .groupBy(column)
      .execute();
    for (const r of rows) counts.set((column === "email_key" ? "email:" : "phone:") + r.value, Number(r.n));
  }
  if (byKind.name.length > 0) {
    const rows = await db
      .selectFrom("contact_name_keys")
      .select(["key", (eb) => eb.fn.countAll<number>().as("n")])
      .where("project_id", "=", projectId)
      .where("key", "in", byKind.name)
      .groupBy("key")
      .execute();
    for (const r of rows) counts.set(r.key, Number(r.n));
  }
  return counts;
}

/** The last_at of the groups of `keys` that have a row. */
export async function groupTimes(db: Db, projectId: string, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db.selectFrom("duplicate_groups").select(["key", "last_at"]).where("project_id", "=", projectId).where("key", "in", keys).execute();
  return new Map(rows.map((r) => [r.key, r.last_at]));
}
