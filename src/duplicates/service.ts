import type { Db } from "../storage/schema.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import type { Page } from "../lib/pagination.ts";
import { formatContactId } from "../contacts/service.ts";
import { duplicateKeysOf, keyedFieldsOfRow, reasonOf, type DuplicateReason } from "./keys.ts";
import { groupRows, groupTimes, holderCounts, MAX_GROUP_MEMBERS, membersOfKeys, type GroupRow, type Member } from "./repository.ts";

export interface DuplicateGroup {
  reasons: DuplicateReason[];
  contactIds: string[];
}

const REASON_ORDER: DuplicateReason[] = ["email", "phone", "name"];

/** A group row with its holders and the other keys held by exactly the same contacts. */
interface Candidate {
  row: GroupRow;
  members: Member[];
  /** Keys every member holds (its own first); narrowed below to those no one else holds. */
  common: string[];
}

/**
 * `GET /duplicates` (docs/api.md §20.1): groups of live contacts that share a key, the group
 * last written to first. Contacts that share several keys are one group with every reason:
 * it is listed at the first of those keys in the list's order (newest last_at, then key),
 * and passed by at the others, so a page never shows it twice and no later page repeats
 * it. A key left with one holder (its row not yet pruned) is passed by.
 */
export async function readDuplicates(db: Db, cursors: CursorCodec, projectId: string, query: { limit: number; cursor?: string }): Promise<Page<DuplicateGroup>> {
  const binding = { list: "duplicates", projectId };
  let position: { lastAt: string; key: string } | null = null;
  if (query.cursor) {
    const [lastAt, key] = cursors.decode(query.cursor, binding);
    position = { lastAt: String(lastAt), key: String(key) };
  }
  const groups: DuplicateGroup[] = [];
  let hasMore = false;
  const chunk = Math.min(query.limit + 1, 100);
  scan: for (;;) {
    const rows = await groupRows(db, projectId, position, chunk);
    const { candidates, counts, times } = await candidatesOf(db, projectId, rows);
    for (const c of candidates) {
      const exact = exactKeys(c, counts, times);
      if (exact) {
        if (groups.length === query.limit) {
          hasMore = true;
          break scan;
        }
        groups.push({
          reasons: REASON_ORDER.filter((r) => exact.some((k) => reasonOf(k) === r)),
          contactIds: c.members.slice(0, MAX_GROUP_MEMBERS).map((m) => formatContactId(m.contact_number)),
        });
      }
      position = { lastAt: c.row.last_at, key: c.row.key };
    }
    if (rows.length < chunk) break;
  }
  return {
    data: groups,
    pagination: { nextCursor: hasMore && position ? cursors.encode([position.lastAt, position.key], binding) : null, hasMore },
  };
}

/**
 * The keys a row's contacts share with no one else (`counts`: holders per key), or null when
 * the row is not where their group is listed (`times`: last_at of the other keys' rows).
 */
function exactKeys(c: Candidate, counts: Map<string, number>, times: Map<string, string>): string[] | null {
  if (c.members.length < 2) return null;
  const exact = c.common.filter((k) => k === c.row.key || counts.get(k) === c.members.length);
  // Listed at the first of its keys in the list's order (last_at desc, key desc).
  const first = exact.reduce((best, k) => {
    const at = k === c.row.key ? c.row.last_at : times.get(k);
    if (at === undefined) return best;
    return at > best.at || (at === best.at && k > best.key) ? { key: k, at } : best;
  }, { key: c.row.key, at: c.row.last_at });
  return first.key === c.row.key ? exact : null;
}

/** A chunk's rows with their holders, and what exactKeys needs of the other keys they share. */
async function candidatesOf(db: Db, projectId: string, rows: GroupRow[]) {
  const members = await membersOfKeys(db, projectId, rows.map((r) => r.key));
  const candidates = rows.map((row): Candidate => {
    const list = members.get(row.key) ?? [];
    // A group too large to list whole is shown by its own key only.
    if (list.length < 2 || list.length > MAX_GROUP_MEMBERS) return { row, members: list, common: [row.key] };
    const keySets = list.map((m) => new Set(duplicateKeysOf(keyedFieldsOfRow(m))));
    const common = [...keySets[0]!].filter((k) => k !== row.key && keySets.every((s) => s.has(k)));
    return { row, members: list, common: [row.key, ...common] };
  });
  const others = [...new Set(candidates.flatMap((c) => c.common.slice(1)))];
  return { candidates, counts: await holderCounts(db, projectId, others), times: await groupTimes(db, projectId, others) };
}
