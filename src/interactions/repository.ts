import { keysetAfter } from "../storage/keyset.ts";
import { preparedQuery } from "../storage/prepared.ts";
import type { Selectable } from "kysely";
import type { Database, Db } from "../storage/schema.ts";

const columns = [
  "interaction_logs.id",
  "interaction_logs.interaction_type_id",
  "interaction_logs.note",
  "interaction_logs.fields",
  "interaction_logs.date",
  "interaction_logs.unique_identifier",
  "interaction_logs.created_at",
  "interaction_types.name as type_name",
] as const;

const withType = (db: Db) =>
  db.selectFrom("interaction_logs").leftJoin("interaction_types", "interaction_types.id", "interaction_logs.interaction_type_id").select(columns);

export async function findLogByUniqueIdentifier(db: Db, contactId: number, uniqueIdentifier: string) {
  return withType(db)
    .where("interaction_logs.contact_id", "=", contactId)
    .where("interaction_logs.unique_identifier", "=", uniqueIdentifier)
    .executeTakeFirst();
}

/** Every column of a new log (db/0001_init.sql); LOG_COLUMNS puts them in one order, so the insert is compiled once. */
export type NewLogRow = Selectable<Database["interaction_logs"]>;
const LOG_COLUMNS = ["id", "project_id", "contact_id", "interaction_type_id", "note", "fields", "date", "unique_identifier", "created_at"] as const;

// A concurrent first call with the same uniqueIdentifier (another node, docs/scaling.md §6):
// the database waits for it to commit, then writes nothing and returns no row.
const insertLogRow = preparedQuery<unknown[], { id: string }>(LOG_COLUMNS.length, (db, ...slots) =>
  db
    .insertInto("interaction_logs")
    .values(Object.fromEntries(LOG_COLUMNS.map((column, i) => [column, slots[i]])) as never)
    .onConflict((oc) => oc.columns(["contact_id", "unique_identifier"]).doNothing())
    .returning("id"),
);

/** Inserts the log; false when a log with its uniqueIdentifier was there first. */
export async function insertLog(db: Db, row: NewLogRow): Promise<boolean> {
  return (await insertLogRow(db, ...LOG_COLUMNS.map((column) => row[column]))).length > 0;
}

export interface LogFilters {
  interactionTypeId?: string;
  since?: string;
  until?: string;
  after?: [string, string];
}

/** A contact's timeline, newest `date` first then id (docs/api.md §12). */
export async function listLogs(db: Db, contactId: number, f: LogFilters, limit: number) {
  let q = withType(db).where("interaction_logs.contact_id", "=", contactId);
  if (f.interactionTypeId === "note") q = q.where("interaction_logs.interaction_type_id", "is", null);
  else if (f.interactionTypeId !== undefined) q = q.where("interaction_logs.interaction_type_id", "=", f.interactionTypeId);
  if (f.since) q = q.where("interaction_logs.date", ">=", f.since);
  if (f.until) q = q.where("interaction_logs.date", "<=", f.until);
  if (f.after) q = q.where((eb) => keysetAfter(eb as never, ["interaction_logs.date", "interaction_logs.id"], f.after!, "desc"));
  return q.orderBy("interaction_logs.date", "desc").orderBy("interaction_logs.id", "desc").limit(limit + 1).execute();
}

/** A log as read, with its interaction type's name. */
export type LogRow = Omit<NewLogRow, "project_id" | "contact_id"> & { type_name: string | null };
