import type { Db } from "../storage/schema.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import { toPage } from "../lib/pagination.ts";
import { toIso } from "../lib/time.ts";
import { ApiError } from "../errors.ts";
import { contactTypeIdsOfCategory, findContactType, findTagIds } from "../reference/repository.ts";
import { emailKey, phoneKey, searchTokens } from "./matching.ts";
import { listContactRows, type ContactFilters } from "./list-query.ts";
import { projectRegion } from "./repository.ts";
import type { ListContactsFilters } from "./schemas.ts";
import { toContacts } from "./service.ts";

/**
 * GET /contacts (docs/api.md §11): filters combine with AND, newest update
 * first, keyset cursor bound to the filter set.
 */
export async function listContacts(db: Db, cursors: CursorCodec, projectId: string, query: ListContactsFilters) {
  const { limit, cursor, ...rest } = query;
  const tags = rest.tag === undefined ? undefined : [rest.tag].flat();
  const boundFilters = { ...rest, tag: tags };
  const filters: ContactFilters = {};
  if (cursor) filters.after = cursors.decode(cursor, boundFilters) as [string, number];

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
  if (rest.search !== undefined) filters.searchTokens = searchTokens(rest.search);

  const rows = await listContactRows(db, projectId, filters, limit);
  const page = toPage(rows, limit, (r) => [r.updated_at, r.contact_number], (r) => r, cursors, boundFilters);
  return { data: await toContacts(db, page.data), pagination: page.pagination };
}
