import type { FC } from "hono/jsx";
import { formatContactId } from "../../contacts/service.ts";
import { mergesOfSurvivor, type MergeRow } from "../../merges/repository.ts";
import { jsonColumn } from "../../storage/query.ts";
import type { Db } from "../../storage/schema.ts";
import { Time } from "../ui.tsx";
import { listed } from "./merge-choices.ts";

/**
 * The merges a contact survived, on its timeline (docs/api.md §20.4, "Undo from the
 * survivor's timeline"): beside the change record of each merge, the contacts it took in
 * and "Undo merge" while it can be undone, or why it no longer can.
 */

/** Merges read for one page of the timeline: the newest this many (a contact survives few merges within 30 days). */
const MERGES_READ = 50;

export interface MergeInfo {
  id: string;
  mergedContactIds: string[];
  undoUntil: string;
  undoneAt: string | null;
  /** Its snapshot was dropped: a contact of it was erased (or its 30 days ended and the retention job ran). */
  forgotten: boolean;
}

/** When a merge can be undone at `now`; otherwise, why not (what undoMerge would answer). */
export function undoState(m: Pick<MergeInfo, "undoUntil" | "undoneAt" | "forgotten">, now: string): "possible" | "undone" | "expired" | "erased" {
  if (m.undoneAt !== null) return "undone";
  if (now > m.undoUntil) return "expired";
  return m.forgotten ? "erased" : "possible";
}

/**
 * The merges of survivor `survivorId` among `at` (the times of the page's "merged" change
 * records: a merge and its record share their time), by that time in milliseconds.
 */
export async function mergesAt(db: Db, survivorId: number, at: number[]): Promise<Map<number, MergeInfo>> {
  const found = new Map<number, MergeInfo>();
  if (at.length === 0) return found;
  const rows = (await mergesOfSurvivor(db, survivorId, MERGES_READ)).filter((r) => at.includes(Date.parse(r.at)));
  const ids = [...new Set(rows.flatMap((r) => jsonColumn<number[]>(r.merged_ids)))];
  const numbers = new Map<number, number>();
  if (ids.length > 0) {
    for (const r of await db.selectFrom("contacts").select(["id", "contact_number"]).where("id", "in", ids).execute()) numbers.set(Number(r.id), Number(r.contact_number));
  }
  for (const row of rows as MergeRow[]) {
    const merged = jsonColumn<number[]>(row.merged_ids)
      .flatMap((id) => (numbers.has(id) ? [numbers.get(id)!] : []))
      .sort((a, b) => a - b)
      .map(formatContactId);
    found.set(Date.parse(row.at), { id: row.id, mergedContactIds: merged, undoUntil: row.undo_until, undoneAt: row.undone_at, forgotten: row.snapshot === null });
  }
  return found;
}

/** Under a merge's change record: who it took in, and "Undo merge" (to its confirmation) or why not. */
export const MergeStatus: FC<{ merge: MergeInfo; here: string; now: string }> = ({ merge, here, now }) => {
  const state = undoState(merge, now);
  const ids = merge.mergedContactIds;
  return (
    <>
      <p>
        {ids.length ? `${listed(ids)} ${ids.length === 1 ? "was" : "were"} merged into this contact.` : "Contacts were merged into this contact."}
        {state === "undone" ? " They are back." : null}
      </p>
      {state === "possible" ? (
        <p class="actions">
          <a class="button secondary" href={`${here}/merges/${encodeURIComponent(merge.id)}/undo`}>
            Undo merge
          </a>
          <span class="meta">
            possible until <Time at={merge.undoUntil} />
          </span>
        </p>
      ) : (
        <p class="hint">
          {state === "undone" ? (
            <>
              Undone <Time at={merge.undoneAt} />.
            </>
          ) : state === "expired" ? (
            <>
              Can no longer be undone: its 30 days ended <Time at={merge.undoUntil} />.
            </>
          ) : (
            "Can no longer be undone: one of its contacts was erased."
          )}
        </p>
      )}
    </>
  );
};
