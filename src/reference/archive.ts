import type { Db } from "../storage/schema.ts";
import { ReferenceInUseError } from "./edit.ts";

/**
 * Archiving a custom field in the console (docs/admin.md §3). An archived field is only
 * no longer offered by the console: its New/Edit contact form leaves it out and the form
 * builder offers it to no form that does not already ask for it. Nothing else changes:
 * contacts keep their values, the API lists, returns and accepts it as before, a form that
 * asks for it keeps taking it, and Restore offers it again.
 */

/** Archives (`at`, the clock's now) or restores (null) a custom field of the project. */
export async function setCustomFieldArchived(db: Db, projectId: string, id: string, at: string | null) {
  const done = await db.updateTable("custom_fields").set({ archived_at: at }).where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
  if (Number(done.numUpdatedRows) === 0) throw new ReferenceInUseError("This custom field no longer exists.");
}

/** The ids of the project's archived custom fields. */
export async function archivedFieldIds(db: Db, projectId: string): Promise<Set<string>> {
  const rows = await db.selectFrom("custom_fields").select("id").where("project_id", "=", projectId).where("archived_at", "is not", null).execute();
  return new Set(rows.map((r) => r.id));
}
