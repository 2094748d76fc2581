import { keysetAfter } from "../storage/keyset.ts";
import type { Db } from "../storage/schema.ts";

/** Events of the project, oldest first from `since` (docs/webhooks.md §2: 30 days readable). */
export async function listEvents(db: Db, projectId: string, since: string, limit: number, after?: [string, string]) {
  let q = db.selectFrom("events").select(["id", "created_at", "body"]).where("project_id", "=", projectId).where("created_at", ">=", since);
  if (after) {
    q = q.where((eb) => keysetAfter(eb as never, ["created_at", "id"], after, "asc"));
  }
  return q.orderBy("created_at").orderBy("id").limit(limit + 1).execute();
}

/** Events of the project among `ids`, created at or after `since`. */
export async function findEvents(db: Db, projectId: string, ids: string[], since: string) {
  return db.selectFrom("events").select(["id", "type"]).where("project_id", "=", projectId).where("created_at", ">=", since).where("id", "in", ids).execute();
}

/** Up to `limit` events of the project created in [since, until], oldest first. */
export async function eventsBetween(db: Db, projectId: string, since: string, until: string | null, limit: number) {
  let q = db.selectFrom("events").select(["id", "type"]).where("project_id", "=", projectId).where("created_at", ">=", since);
  if (until !== null) q = q.where("created_at", "<=", until);
  return q.orderBy("created_at").orderBy("id").limit(limit).execute();
}

/**
 * The console's event log (docs/admin.md §3): events of the project created in [since,
 * until], of one type when given, newest first, `limit + 1` rows from after `before`.
 */
export async function listEventLog(
  db: Db,
  projectId: string,
  filters: { type?: string; since: string; until?: string },
  limit: number,
  before?: [string, string],
) {
  let q = db.selectFrom("events").select(["id", "type", "created_at", "body"]).where("project_id", "=", projectId).where("created_at", ">=", filters.since);
  if (filters.until !== undefined) q = q.where("created_at", "<=", filters.until);
  if (filters.type !== undefined) q = q.where("type", "=", filters.type);
  if (before) q = q.where((eb) => keysetAfter(eb as never, ["created_at", "id"], before, "desc"));
  return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit + 1).execute();
}
