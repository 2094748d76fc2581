import type { Db } from "../storage/schema.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import { toIso } from "../lib/time.ts";
import { ApiError } from "../errors.ts";
import { contactTypeIdsOfCategory, findContactType, findTagIds } from "../reference/repository.ts";
import { emailKey, phoneKey } from "./matching.ts";
import { resolveSearch } from "./search/query.ts";
import { listTotal, pageRows, planList, type ConsoleSort, type KeyRow, type Part, type Position } from "./console-list-query.ts";
import { contactRowsByIds, projectRegion } from "./repository.ts";
import type { Contact, ListContactsFilters } from "./schemas.ts";
import { toContacts } from "./service.ts";

export { CONSOLE_SORTS, type ConsoleSort } from "./console-list-query.ts";

/** Past this many matching contacts the console says "more than 10,000" instead of counting on (docs/admin.md §3). */
export const COUNT_LIMIT = 10_000;

export interface ConsoleListInput {
  filters: Omit<ListContactsFilters, "limit" | "cursor">;
  sort: ConsoleSort;
  limit: number;
  cursor?: string;
}

export interface ConsoleListPage {
  contacts: Contact[];
  /** Exact, or `exact: false` when more than `count` match. */
  total: { count: number; exact: boolean };
  /** The next page's cursor; null on the last page. */
  next: string | null;
  /** The previous page's cursor, "" when it is the first page (no cursor), null on the first page. */
  previous: string | null;
}

/**
 * The console's contacts list (docs/admin.md §3): GET /v1/contacts's filters and rules
 * (docs/api.md §11: an unknown contact type is 422, an unknown tag an empty list), sorted by
 * update (newest first, as the API), creation (newest first) or name (A→Z), with cursors that
 * go both ways and a total. Cursors are signed and bound to the filters and the sort.
 */
export async function listConsoleContacts(
  db: Db,
  cursors: CursorCodec,
  projectId: string,
  input: ConsoleListInput,
  /** Tests make both bounds small: `countLimit` (COUNT_LIMIT) and `smallSet` (console-list-query.ts SMALL_SET; 0: always walk). */
  options: { countLimit?: number; smallSet?: number } = {},
): Promise<ConsoleListPage> {
  const { filters, sort, limit } = input;
  const tags = filters.tag === undefined ? undefined : [filters.tag].flat();
  const bound = { ...filters, tag: tags, sort };
  const position = input.cursor ? decodePosition(cursors, input.cursor, bound) : undefined;
  const parts = await partsOf(db, projectId, filters, tags);
  if (parts === null) return { contacts: [], total: { count: 0, exact: true }, next: null, previous: position ? "" : null };

  const plan = await planList(db, projectId, parts, sort, options.smallSet);
  const total = await listTotal(db, projectId, plan, options.countLimit ?? COUNT_LIMIT);
  const encode = (dir: Position["dir"], row: KeyRow) => cursors.encode([dir === "after" ? "a" : "b", row.key, row.number], bound);

  if (position?.dir === "before") {
    const rows = await pageRows(db, projectId, plan, sort, position, limit);
    // Nothing more before: this is the first page, read as the first page is.
    if (rows.length > limit) {
      const page = rows.slice(0, limit).reverse();
      return { contacts: await contactsOf(db, projectId, page), total, next: encode("after", page[page.length - 1]!), previous: encode("before", page[0]!) };
    }
  }
  const from = position?.dir === "after" ? position : undefined;
  const rows = await pageRows(db, projectId, plan, sort, from, limit);
  const page = rows.slice(0, limit);
  const next = rows.length > limit ? encode("after", page[page.length - 1]!) : null;
  const previous = from ? (page.length > 0 ? encode("before", page[0]!) : "") : null;
  return { contacts: await contactsOf(db, projectId, page), total, next, previous };
}

/** A cursor's position; one the service never issued, or issued for other filters or another sort, is 422 `cursor`. */
function decodePosition(cursors: CursorCodec, cursor: string, bound: unknown): Position {
  const p = cursors.decode(cursor, bound);
  const [dir, key, number] = p;
  if (p.length !== 3 || (dir !== "a" && dir !== "b") || typeof key !== "string" || !Number.isSafeInteger(number)) {
    throw new ApiError("ERR_FORM_VALIDATION", "cursor is not valid for this list.", "cursor");
  }
  return { dir: dir === "a" ? "after" : "before", key, number: number as number };
}

/** The filters as parts (console-list-query.ts); null when they can match nothing (an unknown tag, an empty category). */
async function partsOf(db: Db, projectId: string, f: ConsoleListInput["filters"], tags: string[] | undefined): Promise<Part[] | null> {
  const parts: Part[] = [];
  if (f.email !== undefined) {
    const key = emailKey(f.email);
    if (key === null) return null;
    parts.push({ kind: "email", key });
  }
  if (f.phone !== undefined) {
    const key = phoneKey(f.phone, await projectRegion(db, projectId));
    if (!key) return null;
    parts.push({ kind: "phone", key });
  }
  let typeIds: string[] | undefined;
  if (f.contactTypeId !== undefined) {
    if (!(await findContactType(db, projectId, f.contactTypeId))) {
      throw new ApiError("ERR_FORM_VALIDATION", "contactTypeId is not a contact type of this project.", "contactTypeId");
    }
    typeIds = [f.contactTypeId];
  }
  if (f.contactTypeCategory !== undefined) {
    const ids = await contactTypeIdsOfCategory(db, projectId, f.contactTypeCategory);
    typeIds = typeIds ? typeIds.filter((id) => ids.includes(id)) : ids;
  }
  if (typeIds) {
    if (typeIds.length === 0) return null;
    parts.push({ kind: "types", ids: typeIds });
  }
  if (tags) {
    const tagIds = await findTagIds(db, projectId, tags);
    if (tagIds === null) return null;
    for (const id of new Set(tagIds)) parts.push({ kind: "tag", id });
  }
  if (f.updatedSince !== undefined) parts.push({ kind: "since", at: toIso(f.updatedSince)! });
  // The API's own search (docs/api.md §11.6): the same words, folding, phones and typos.
  if (f.search !== undefined) for (const word of (await resolveSearch(db, projectId, f.search)).words) parts.push({ kind: "term", matches: word.matches });
  return parts;
}

/** The page's contacts, as the API shows them, in the page's order. */
async function contactsOf(db: Db, projectId: string, page: KeyRow[]): Promise<Contact[]> {
  if (page.length === 0) return [];
  return toContacts(db, await contactRowsByIds(db, projectId, page.map((r) => Number(r.id))));
}
