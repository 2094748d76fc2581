import { sql } from "kysely";
import type { Db } from "../storage/schema.ts";
import { preparedQuery } from "../storage/prepared.ts";

export interface ChangeRow {
  seq: number;
  at: string;
  object: string;
  object_id: string;
  action: string;
  changes: string | null;
  actor: string | null;
  request_id: string | null;
}

const COLUMNS = ["seq", "at", "object", "object_id", "action", "changes", "actor", "request_id"] as const;

/** The project's feed position: the last seq given, and the last one retention removed (0, 0 before any change). */
export async function feedPosition(db: Db, projectId: string): Promise<{ lastSeq: number; prunedThrough: number }> {
  const row = await counter(db, projectId);
  return { lastSeq: Number(row[0]?.last_seq ?? 0), prunedThrough: Number(row[0]?.pruned_through ?? 0) };
}
const counter = preparedQuery<[string], { last_seq: number; pruned_through: number }>(1, (db, projectId) =>
  db.selectFrom("change_counters").select(["last_seq", "pruned_through"]).where("project_id", "=", projectId),
);

/** Up to `limit` changes after `afterSeq`, oldest first, of the objects given (all when empty). */
export async function changesAfter(db: Db, projectId: string, afterSeq: number, objects: string[], limit: number): Promise<ChangeRow[]> {
  let query = db.selectFrom("changes").select(COLUMNS).where("project_id", "=", projectId).where("seq", ">", afterSeq);
  if (objects.length > 0) query = query.where("object", "in", objects);
  return (await query.orderBy("seq").limit(limit).execute()).map(numeric);
}

/** Up to `limit` change records of a contact before `beforeSeq`, newest first; `fields` keeps those naming one of them (or a part of one). */
export async function contactChanges(db: Db, contactId: number, beforeSeq: number | null, fields: string[], limit: number): Promise<ChangeRow[]> {
  let query = db.selectFrom("changes").select(COLUMNS).where("contact_id", "=", contactId).where("object", "=", "contact");
  if (beforeSeq !== null) query = query.where("seq", "<", beforeSeq);
  if (fields.length > 0) {
    // The stored JSON names each field as "field":"<name>"; a top-level name also takes its parts.
    query = query.where((eb) =>
      eb.or(
        fields.flatMap((f) => [
          eb(sql`changes`, "like", `%"field":"${escapeLike(f)}"%`),
          eb(sql`changes`, "like", `%"field":"${escapeLike(f)}.%`),
        ]).map((cond) => sql<boolean>`${cond} escape '\\'`),
      ),
    );
  }
  return (await query.orderBy("seq", "desc").limit(limit).execute()).map(numeric);
}

const escapeLike = (text: string) => JSON.stringify(text).slice(1, -1).replace(/[\\%_]/g, (c) => `\\${c}`);
const numeric = (row: ChangeRow): ChangeRow => ({ ...row, seq: Number(row.seq) });

/**
 * Removes the change records older than `cutoff` (docs/api.md §19.2: kept 90 days), project
 * by project as a prefix of seqs, and moves `pruned_through` on: a cursor before it is 410.
 */
export async function pruneChanges(db: Db, cutoff: string, batch = 5000): Promise<number> {
  const ends = await db
    .selectFrom("changes")
    .select(["project_id", (eb) => eb.fn.max("seq").as("seq")])
    .where("at", "<", cutoff)
    .groupBy("project_id")
    .execute();
  let removed = 0;
  for (const { project_id: projectId, seq } of ends) {
    const through = Number(seq);
    const lowest = await db.selectFrom("changes").select("seq").where("project_id", "=", projectId).orderBy("seq").limit(1).executeTakeFirst();
    const upTo = Math.min(through, Number(lowest?.seq ?? through) + batch - 1);
    const result = await db.deleteFrom("changes").where("project_id", "=", projectId).where("seq", "<=", upTo).executeTakeFirst();
    removed += Number(result.numDeletedRows ?? 0);
    await db
      .updateTable("change_counters")
      .set({ pruned_through: sql<number>`case when pruned_through > ${upTo} then pruned_through else ${upTo} end` })
      .where("project_id", "=", projectId)
      .execute();
  }
  return removed;
}

/**
 * Erasure (docs/import-export.md §3): the contact's change records, and its logs', keep only
 * seq, at, object, id and action, and no longer point at the contact's row.
 */
export async function redactChangesOf(db: Db, contactId: number): Promise<number> {
  const result = await db
    .updateTable("changes")
    .set({ changes: null, actor: null, request_id: null, contact_id: null })
    .where("contact_id", "=", contactId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows ?? 0);
}
