import type { Db } from "../storage/schema.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import { toPage } from "../lib/pagination.ts";
import { toIso } from "../lib/time.ts";
import { ApiError } from "../errors.ts";
import { contactTypeIdsOfCategory, findContactType, findTagIds } from "../reference/repository.ts";
import { emailKey, phoneKey } from "./matching.ts";
import { listContactRows, type ContactFilters } from "./list-query.ts";
import { relevanceRows } from "./search/relevance.ts";
import { resolveSearch } from "./search/query.ts";
import { projectRegion } from "./repository.ts";
import type { ListContactsFilters } from "./schemas.ts";
import { toContacts } from "./service.ts";

/**
 * GET /contacts (docs/api.md §11): filters combine with AND, newest update first (or by
 * relevance with a search, §11.6), keyset cursor bound to the filter set and the order.
 */
export async function listContacts(db: Db, cursors: CursorCodec, projectId: string, query: ListContactsFilters) {
  const { limit, cursor, sort, ...rest } = query;
  const relevance = sort === "relevance";
  if (relevance && rest.search === undefined) throw new ApiError("ERR_FORM_VALIDATION", "sort=relevance needs a search.", "sort");
  const tags = rest.tag === undefined ? undefined : [rest.tag].flat();
  // The default order's cursors stay as they were; a relevance cursor is bound to that order too.
  const boundFilters = { ...rest, tag: tags, sort: relevance ? sort : undefined };
  const filters: ContactFilters = {};
  const position = cursor ? cursors.decode(cursor, boundFilters) : undefined;
  if (position && !relevance) filters.after = position as [string, number];

  if (rest.email !== undefined) filters.emailKey = emailKey(rest.email);
  if (rest.phone !== undefined) filters.phoneKey = phoneKey(rest.phone, await projectRegion(db, projectId)) ?? "";
  if (rest.contactTypeId !== undefined) {
    // An unknown contact type is 422 here as in a body (docs/api.md §11); only an unknown tag
    // name in ?tag= is an empty list.
    if (!(await findContactType(db, projectId, rest.contactTypeId))) {
      throw new ApiError("ERR_FORM_VALIDATION", "contactTypeId is not a contact type of this project.", "contactTypeId");
    }
    filters.contactTypeIds = [rest.contactTypeId];
  }
  if (rest.contactTypeCategory !== undefined) {
    const ids = await contactTypeIdsOfCategory(db, projectId, rest.contactTypeCategory);
    filters.contactTypeIds = filters.contactTypeIds ? filters.contactTypeIds.filter((id) => ids.includes(id)) : ids;
  }
  if (tags) {
    const tagIds = await findTagIds(db, projectId, tags);
    if (tagIds === null) return { data: [], pagination: { nextCursor: null, hasMore: false } };
    filters.tagIds = tagIds;
  }
  if (rest.updatedSince !== undefined) filters.updatedSince = toIso(rest.updatedSince)!;
  const search = rest.search === undefined ? undefined : await resolveSearch(db, projectId, rest.search);
  if (search) filters.searchWords = search.words;
  // A search of blanks alone has no word: it lists as no search does, and has no relevance.
  if (relevance && !search?.words.length) throw new ApiError("ERR_FORM_VALIDATION", "sort=relevance needs a search with a word in it.", "sort");

  if (relevance) {
    const rows = await relevanceRows(db, projectId, filters, search!, position as [number, string, number] | undefined, limit);
    const page = toPage(rows, limit, (r) => [r.rank, r.updated_at, r.contact_number], (r) => r, cursors, boundFilters);
    return { data: await toContacts(db, page.data), pagination: page.pagination };
  }
  const rows = await listContactRows(db, projectId, filters, limit);
  const page = toPage(rows, limit, (r) => [r.updated_at, r.contact_number], (r) => r, cursors, boundFilters);
  return { data: await toContacts(db, page.data), pagination: page.pagination };
}
