import type { Db } from "../../storage/schema.ts";

/** How long a project's contact count is kept, and for how many projects at most. */
export const PROJECT_SIZE_TTL_MS = 60_000;
const MAX_PROJECTS = 10_000;

const kept = new Map<string, { count: number; at: number }>();

/**
 * The project's number of contacts, read at most once a minute per project and node. It only
 * sizes the search's count limit (src/contacts/list-query.ts, the cap): it steers which index
 * a search reads, never what it finds, so a count a minute old does no harm, and a search
 * saves a statement (on PostgreSQL a round trip and a plan).
 */
export async function projectSizeHint(db: Db, projectId: string, now = performance.now()): Promise<number> {
  const hit = kept.get(projectId);
  if (hit && now - hit.at < PROJECT_SIZE_TTL_MS) return hit.count;
  const row = await db.selectFrom("projects").select("contact_count").where("id", "=", projectId).executeTakeFirst();
  const count = Number(row?.contact_count ?? 0);
  if (kept.size >= MAX_PROJECTS) kept.clear();
  kept.set(projectId, { count, at: now });
  return count;
}
