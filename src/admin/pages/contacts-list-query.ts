import { CONSOLE_SORTS, type ConsoleListInput, type ConsoleSort } from "../../contacts/console-list.ts";
import { ListContactsQuery } from "../../contacts/schemas.ts";
import { ApiError } from "../../errors.ts";
import { validationFailure } from "../../http/validation.ts";

/**
 * The contacts list's address (docs/admin.md §3): GET /v1/contacts's filters (all but the
 * cursor), the sort, and the console's own cursor. Read from the page's URL, and from the
 * list address a bulk action carries back (`back`), so both read it alike.
 */

/** The query parameters of GET /v1/contacts the list takes (src/contacts/schemas.ts ListContactsQuery), all but the cursor. */
const FILTERS = ["search", "contactTypeId", "contactTypeCategory", "tag", "email", "phone", "updatedSince", "limit"] as const;
/** Filters that have no field in the search form but come in links (a duplicate's "show") and stay on every page. */
export const CARRIED = ["email", "phone", "updatedSince", "limit"] as const;

/** The list's parameters as sent, blank ones dropped, in order; the tag field may name several tags, comma-separated. */
export type Query = Array<[string, string]>;

export const SORT_LABELS: Record<ConsoleSort, string> = {
  updated: "Last updated",
  created: "Newest first",
  name: "Name (A–Z)",
};

/** The filters and the sort of `params` (a page's URL or a carried list address); the cursor apart. */
export function readQuery(params: URLSearchParams): { query: Query; cursor?: string } {
  const query: Query = [];
  for (const name of FILTERS) {
    for (const raw of params.getAll(name)) {
      const values = name === "tag" ? raw.split(",") : [raw];
      for (const v of values) if (v.trim() !== "") query.push([name, v.trim()]);
    }
  }
  const sort = params.get("sort")?.trim();
  if (sort && sort !== "updated") query.push(["sort", sort]);
  return { query, cursor: params.get("cursor") || undefined };
}

/** The list's input for listConsoleContacts, checked as GET /v1/contacts checks its query; a refusal is an ApiError naming its field. */
export function listInput(query: Query, cursor?: string): ConsoleListInput {
  const input: Record<string, string | string[]> = {};
  let sort: string = "updated";
  for (const [k, v] of query) {
    if (k === "sort") {
      sort = v;
      continue;
    }
    const had = input[k];
    input[k] = had === undefined ? v : [had, v].flat();
  }
  if (!(CONSOLE_SORTS as readonly string[]).includes(sort)) {
    throw new ApiError("ERR_FORM_VALIDATION", `sort must be one of ${CONSOLE_SORTS.join(", ")}.`, "sort");
  }
  const parsed = ListContactsQuery.safeParse(input);
  if (!parsed.success) throw validationFailure(parsed.error, { input, target: "query" });
  const { limit, cursor: _, ...filters } = parsed.data;
  return { filters, sort: sort as ConsoleSort, limit, cursor };
}

/** The list's address for `query`, at `cursor` ("" or none: the first page). */
export function listHref(base: string, query: Query, cursor?: string | null): string {
  const params = new URLSearchParams(query);
  if (cursor) params.append("cursor", cursor);
  const search = params.toString();
  return search ? `${base}?${search}` : base;
}

/** "1 contact", "1,234 contacts", "more than 10,000 contacts". */
export function totalText(total: { count: number; exact: boolean }, filtered: boolean): string {
  const n = total.count.toLocaleString("en-US");
  const noun = total.count === 1 && total.exact ? "contact" : "contacts";
  const count = total.exact ? `${n} ${noun}` : `More than ${n} ${noun}`;
  return filtered ? `${count} ${total.count === 1 && total.exact ? "matches" : "match"}` : count;
}
