import type { Db } from "../storage/schema.ts";
import { ApiError, validationError } from "../errors.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import type { Page } from "../lib/pagination.ts";
import { isChangeField } from "./diff.ts";
import { changesAfter, contactChanges, feedPosition, type ChangeRow } from "./repository.ts";
import type { ChangeRecord } from "./schemas.ts";

/** A stored row → the API's record; an erased contact's (no actor) keeps seq, at, object, id and action only. */
export function toRecord(row: ChangeRow): ChangeRecord {
  const record: ChangeRecord = { seq: row.seq, at: row.at, object: row.object as ChangeRecord["object"], id: row.object_id, action: row.action as ChangeRecord["action"] };
  if (row.actor === null) return record;
  if (row.changes !== null) record.changes = JSON.parse(row.changes);
  record.actor = JSON.parse(row.actor);
  record.requestId = row.request_id;
  return record;
}

const asList = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** A feed cursor names a seq of one project, whatever the object filter: a list's Changes-Cursor resumes any feed. */
const feedBinding = (projectId: string) => ({ changes: projectId });

/** The cursor of the project's feed position now: a list's Changes-Cursor (docs/api.md §19.2). */
export async function currentFeedCursor(db: Db, cursors: CursorCodec, projectId: string): Promise<string> {
  const { lastSeq } = await feedPosition(db, projectId);
  return cursors.encode([lastSeq], feedBinding(projectId));
}

/**
 * `GET /changes` (docs/api.md §19.2): changes after the cursor, oldest first. nextCursor is
 * always set: the last change given, or the cursor itself on an empty page. A cursor from
 * before the retention's reach is 410: changes after it are gone.
 */
export async function readFeed(
  db: Db,
  cursors: CursorCodec,
  projectId: string,
  query: { after?: string; limit: number; object?: string | string[] },
): Promise<Page<ChangeRecord> & { pagination: { nextCursor: string } }> {
  const { prunedThrough } = await feedPosition(db, projectId);
  let after = prunedThrough;
  if (query.after !== undefined) {
    const [seq] = cursors.decode(query.after, feedBinding(projectId), "after");
    if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0) throw validationError("after", "after is not a valid cursor.");
    if (seq < prunedThrough) {
      throw new ApiError("ERR_CURSOR_EXPIRED", "The changes after this cursor are past the change log's retention; read the contacts again and follow from a new cursor.");
    }
    after = seq;
  }
  const rows = await changesAfter(db, projectId, after, asList(query.object), query.limit + 1);
  const hasMore = rows.length > query.limit;
  const kept = rows.slice(0, query.limit);
  const last = kept.at(-1)?.seq ?? after;
  return { data: kept.map(toRecord), pagination: { nextCursor: cursors.encode([last], feedBinding(projectId)), hasMore } };
}

/** `GET /contacts/{contactId}/history` (docs/api.md §19.2): a contact's records, newest first; `internalId` is its row, found by the caller. */
export async function readHistory(
  db: Db,
  cursors: CursorCodec,
  internalId: number,
  query: { field?: string | string[]; limit: number; cursor?: string },
): Promise<Page<ChangeRecord>> {
  const fields = asList(query.field);
  for (const field of fields) {
    if (!isChangeField(field)) throw validationError("field", `field ${JSON.stringify(field)} is not a contact field.`);
  }
  const binding = { history: internalId, fields };
  const before = query.cursor ? Number(cursors.decode(query.cursor, binding)[0]) : null;
  const rows = await contactChanges(db, internalId, before, fields, query.limit + 1);
  const hasMore = rows.length > query.limit;
  const kept = rows.slice(0, query.limit);
  return {
    data: kept.map(toRecord),
    pagination: { nextCursor: hasMore ? cursors.encode([kept.at(-1)!.seq], binding) : null, hasMore },
  };
}
