import type { Db } from "../storage/schema.ts";
import { locksUntilCommit } from "../storage/query.ts";
import { duplicateKeysOf, keyedFieldsOfRow } from "./keys.ts";
import * as repo from "./repository.ts";

/** A contact's duplicate keys before and after a write ([] for a new, trashed or merged-away contact). */
export interface KeyChange {
  contactId: number;
  before: string[];
  after: string[];
}

/** The duplicate keys of a contact row as stored (email and phone as their match keys). */
export const keysOfRow = (row: Parameters<typeof keyedFieldsOfRow>[0]) => duplicateKeysOf(keyedFieldsOfRow(row));

/** The lock of one duplicate key: writers that add or remove it take turns across nodes (PostgreSQL). */
const keyLock = (projectId: string, key: string) => `duplicate:${projectId}:${key}`;

/**
 * Keeps GET /duplicates' groups in step with written contacts (docs/api.md §20.1), in the
 * write's transaction: the name keys stored, a key two live contacts now share becomes (or
 * stays) a group stamped `now`, a group a member of was written moves to the top, and a key
 * left with one holder stops being a group.
 *
 * Writers that add or remove one key take turns on it (sorted, after the contacts' own
 * locks), so two nodes creating the second holder of a key at once cannot both miss the
 * other; writes that keep their keys take no lock.
 */
export async function indexDuplicates(db: Db, projectId: string, changes: KeyChange[], now: string): Promise<void> {
  const added = new Set<string>();
  const removed = new Set<string>();
  const kept = new Set<string>();
  const newNameKeys: Array<{ projectId: string; key: string; contactId: number }> = [];
  for (const change of changes) {
    const before = new Set(change.before);
    const after = new Set(change.after);
    const gone = change.before.filter((k) => !after.has(k));
    const come = change.after.filter((k) => !before.has(k));
    for (const k of gone) removed.add(k);
    for (const k of come) added.add(k);
    for (const k of change.after) if (before.has(k)) kept.add(k);
    const goneNames = gone.filter((k) => k.startsWith("name:"));
    if (goneNames.length > 0) await repo.deleteNameKeys(db, change.contactId, goneNames);
    for (const key of come) if (key.startsWith("name:")) newNameKeys.push({ projectId, key, contactId: change.contactId });
  }
  await locksUntilCommit(db, [...new Set([...added, ...removed])].sort().map((key) => keyLock(projectId, key)));
  await repo.insertNameKeys(db, newNameKeys);
  if (added.size > 0) await repo.touchGroups(db, projectId, await repo.sharedKeys(db, projectId, [...added]), now);
  const keptOnly = [...kept].filter((k) => !added.has(k));
  await repo.touchExistingGroups(db, projectId, keptOnly, now);
  const candidates = [...removed].filter((k) => !added.has(k));
  if (candidates.length > 0) {
    const stillShared = new Set(await repo.sharedKeys(db, projectId, candidates));
    await repo.deleteGroups(db, projectId, candidates.filter((k) => !stillShared.has(k)));
  }
}
