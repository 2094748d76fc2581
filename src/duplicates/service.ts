import type { Db } from "../storage/schema.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import type { Page } from "../lib/pagination.ts";
import { formatContactId } from "../contacts/service.ts";
import { reasonOf, type DuplicateReason } from "./keys.ts";
import { groupRows, MAX_GROUP_MEMBERS, membersOf } from "./repository.ts";

export interface DuplicateGroup {
  reasons: DuplicateReason[];
  contactIds: string[];
}

const REASON_ORDER: DuplicateReason[] = ["email", "phone", "name"];

/**
 * `GET /duplicates` (docs/api.md §20.1): groups of live contacts that share a key, the group
 * last written to first. Keys held by the same contacts make one group with every reason;
 * a key left with one holder (its group row not yet pruned) is passed by.
 */
export async function readDuplicates(db: Db, cursors: CursorCodec, projectId: string, query: { limit: number; cursor?: string }): Promise<Page<DuplicateGroup>> {
  const binding = { list: "duplicates", projectId };
  let after: { lastAt: string; key: string } | null = null;
  if (query.cursor) {
    const [lastAt, key] = cursors.decode(query.cursor, binding);
    after = { lastAt: String(lastAt), key: String(key) };
  }
  const groups: Array<DuplicateGroup & { members: string; lastAt: string }> = [];
  let position = after;
  let hasMore = false;
  const chunk = Math.min(query.limit + 1, 100);
  scan: for (;;) {
    const rows = await groupRows(db, projectId, position, chunk);
    const members = await Promise.all(rows.map((r) => membersOf(db, projectId, r.key)));
    for (const [i, row] of rows.entries()) {
      const numbers = members[i]!;
      if (numbers.length >= 2) {
        const shown = numbers.slice(0, MAX_GROUP_MEMBERS);
        const set = [...shown].sort((a, b) => a - b).join(",");
        const reason = reasonOf(row.key);
        const same = groups.find((g) => g.members === set && g.lastAt === row.last_at);
        if (same) {
          if (!same.reasons.includes(reason)) same.reasons.push(reason);
        } else if (groups.length === query.limit) {
          hasMore = true;
          break scan;
        } else {
          groups.push({ reasons: [reason], contactIds: shown.map(formatContactId), members: set, lastAt: row.last_at });
        }
      }
      position = { lastAt: row.last_at, key: row.key };
    }
    if (rows.length < chunk) break;
  }
  return {
    data: groups.map((g) => ({ reasons: REASON_ORDER.filter((r) => g.reasons.includes(r)), contactIds: g.contactIds })),
    pagination: { nextCursor: hasMore && position ? cursors.encode([position.lastAt, position.key], binding) : null, hasMore },
  };
}
