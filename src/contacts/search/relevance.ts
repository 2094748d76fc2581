import type { Db } from "../../storage/schema.ts";
import { listContactRows, type ContactFilters } from "../list-query.ts";
import type { RangeCounts } from "./driver.ts";
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
  // The tiers count the same ranges (two words' pair term): each is counted once.
  const counts: RangeCounts = new Map();
  const rows: Array<ContactView & { rank: number }> = [];
  if (!after || after[0] === RANK.exact) {
    const tier = await listContactRows(db, projectId, { ...filters, searchWords: exact.map((m) => ({ matches: m, exact: m })), after: keys(RANK.exact) }, limit, counts);
    rows.push(...tier.map((r) => ({ ...r, rank: RANK.exact })));
    if (rows.length > limit) return rows;
  }
  const wanted = limit - rows.length;
  if (!after) {
    // The first page read the first tier whole: its contacts are known, so the second tier is
    // the plain search less them (`leaveOut`), rather than a lookup of every word's whole
    // terms on each row it reads (`notAll`): every first-tier contact is also a match of the
    // plain search (a whole term is a prefix of itself).
    const leaveOut = new Set(rows.map((r) => Number(r.id)));
    const plain = await listContactRows(db, projectId, { ...filters, after: undefined, leaveOut }, wanted, counts);
    rows.push(...plain.map((r) => ({ ...r, rank: RANK.prefix })));
    return rows;
  }
  const rest = await listContactRows(db, projectId, { ...filters, notAll: exact, after: keys(RANK.prefix) }, wanted, counts);
  rows.push(...rest.map((r) => ({ ...r, rank: RANK.prefix })));
  return rows;
}
