import type { Database, Db } from "../storage/schema.ts";
import { jsonColumn } from "../storage/query.ts";
import type { ContactState } from "../contacts/state.ts";

/** How long a merge can be undone (docs/api.md §20.4). */
export const UNDO_DAYS = 30;

/** What an undo needs (docs/api.md §20.4): kept UNDO_DAYS, then dropped with every erase that touches the merge. */
export interface MergeSnapshot {
  survivor: { before: ContactState; after: ContactState };
  merged: Array<{
    id: number;
    contactNumber: number;
    /** The logs that moved to the survivor. */
    logs: string[];
    /** Logs that gave up their uniqueIdentifier to one the survivor already had: id → the identifier. */
    identifiers: Record<string, string>;
  }>;
}

export type MergeRow = Database["merges"];

export async function insertMerge(db: Db, row: Omit<MergeRow, "undone_at">) {
  await db.insertInto("merges").values({ ...row, undone_at: null }).execute();
}

export async function findMerge(db: Db, projectId: string, mergeId: string): Promise<MergeRow | undefined> {
  const row = await db.selectFrom("merges").selectAll().where("id", "=", mergeId).where("project_id", "=", projectId).executeTakeFirst();
  return row && { ...row, survivor_id: Number(row.survivor_id) };
}

export const snapshotOf = (row: MergeRow) => (row.snapshot === null ? null : jsonColumn<MergeSnapshot>(row.snapshot));

export async function markUndone(db: Db, mergeId: string, now: string) {
  await db.updateTable("merges").set({ undone_at: now, snapshot: null }).where("id", "=", mergeId).execute();
}

/** The merges a contact took part in, newest first (the console's timeline). */
export async function mergesOfSurvivor(db: Db, survivorId: number, limit = 20) {
  return db.selectFrom("merges").selectAll().where("survivor_id", "=", survivorId).orderBy("at", "desc").limit(limit).execute();
}

/**
 * An erase drops what the merges it touches keep of the contact (docs/api.md §20.4): their
 * snapshots, so they can no longer be undone (409), while their rows stay.
 */
export async function forgetMergesOf(db: Db, contactId: number) {
  const row = await db.selectFrom("contacts").select("merged_into").where("id", "=", contactId).executeTakeFirst();
  const survivors = [contactId, ...(row?.merged_into != null ? [Number(row.merged_into)] : [])];
  const merges = await db.selectFrom("merges").select(["id", "survivor_id", "merged_ids"]).where("survivor_id", "in", survivors).where("snapshot", "is not", null).execute();
  const touched = merges.filter((m) => Number(m.survivor_id) === contactId || jsonColumn<number[]>(m.merged_ids).includes(contactId)).map((m) => m.id);
  if (touched.length > 0) await db.updateTable("merges").set({ snapshot: null }).where("id", "in", touched).execute();
  // The contacts merged into an erased survivor were the same person: their rows keep only the redirect.
  await scrubMergedInto(db, contactId);
}

const SCRUBBED = { first_name: null, last_name: null, email: null, phone: null, business_name: null, website: null, address: "{}", notes: null, custom_fields: "{}", trashed_tags: null };

async function scrubMergedInto(db: Db, survivorId: number, ids?: number[]) {
  let query = db.updateTable("contacts").set(SCRUBBED).where("merged_into", "=", survivorId);
  if (ids) query = query.where("id", "in", ids);
  await query.execute();
}

/**
 * Merges past their undo window (docs/api.md §20.4), `limit` at a time, by the retention job:
 * the snapshot goes, and the merged-away rows keep only what their redirect needs (number,
 * survivor); their personal data is no longer kept for an undo. The number handled.
 */
export async function expireMerges(db: Db, now: string, limit: number): Promise<number> {
  const due = await db.selectFrom("merges").select(["id", "survivor_id", "merged_ids"]).where("snapshot", "is not", null).where("undo_until", "<", now).limit(limit).execute();
  for (const merge of due) {
    await db.updateTable("merges").set({ snapshot: null }).where("id", "=", merge.id).execute();
    const ids = jsonColumn<number[]>(merge.merged_ids);
    if (ids.length > 0) await scrubMergedInto(db, Number(merge.survivor_id), ids);
  }
  return due.length;
}

/**
 * The live contact a merged-away number leads to, following later merges (at most 10
 * hops); null when the number is not merged away (or its survivor is gone).
 */
export async function mergedTarget(db: Db, projectId: string, contactNumber: number): Promise<number | null> {
  let row = await db.selectFrom("contacts").select(["contact_number", "merged_into", "deleted_at"]).where("project_id", "=", projectId).where("contact_number", "=", contactNumber).executeTakeFirst();
  if (!row || row.merged_into === null) return null;
  for (let hop = 0; hop < 10 && row && row.merged_into !== null; hop++) {
    row = await db.selectFrom("contacts").select(["contact_number", "merged_into", "deleted_at"]).where("id", "=", Number(row.merged_into)).executeTakeFirst();
  }
  return row && row.merged_into === null && row.deleted_at === null ? Number(row.contact_number) : null;
}
