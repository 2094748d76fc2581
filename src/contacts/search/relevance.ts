import type { Db } from "../../storage/schema.ts";
import { listContactRows, type ContactFilters } from "../list-query.ts";
import type { ContactView } from "../repository.ts";
import type { ResolvedSearch } from "./query.ts";

/** A contact's relevance rank (docs/api.md §11.6): its weakest word's best match. */
export const RANK = { exact: 0, prefix: 1, typo: 2 } as const;

/**
 * One page of `sort=relevance` (docs/api.md §11.6), `limit + 1` rows: contacts whose every
 * word matches a whole term (rank 0), then the other matches (rank 1), each tier newest
 * update first. A word matched through a typo has no exact or prefix match in the project,
 * so then every contact found is rank 2, in update order. `after` is the last row's
 * [rank, updatedAt, contact number]; each tier is the list query with its own filter.
 */
export async function relevanceRows(
  db: Db,
  projectId: string,
  filters: ContactFilters,
  search: ResolvedSearch,
  after: [number, string, number] | undefined,
  limit: number,
): Promise<Array<ContactView & { rank: number }>> {
  const keys = (rank: number) => (after && after[0] === rank ? ([after[1], after[2]] as [string, number]) : undefined);
  if (search.typo) {
    const rows = await listContactRows(db, projectId, { ...filters, after: keys(RANK.typo) }, limit);
    return rows.map((r) => ({ ...r, rank: RANK.typo }));
  }
  const exact = search.words.map((w) => w.exact);
  const rows: Array<ContactView & { rank: number }> = [];
  if (!after || after[0] === RANK.exact) {
    const tier = await listContactRows(db, projectId, { ...filters, searchWords: exact.map((m) => ({ matches: m, exact: m })), after: keys(RANK.exact) }, limit);
    rows.push(...tier.map((r) => ({ ...r, rank: RANK.exact })));
    if (rows.length > limit) return rows;
  }
  const rest = await listContactRows(db, projectId, { ...filters, notAll: exact, after: keys(RANK.prefix) }, limit - rows.length);
  rows.push(...rest.map((r) => ({ ...r, rank: RANK.prefix })));
  return rows;
}
