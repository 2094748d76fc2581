/**
 * Auto-pagination (docs/api.md §11): every list answers
 * `{ data: [...], pagination: { nextCursor, hasMore } }` and takes the previous page's
 * `nextCursor` as its `cursor` query parameter. `paginate` turns that into one
 * AsyncIterable of items, fetched a page at a time as the loop asks for more.
 */
import type { Client, FetchOptions } from "openapi-fetch";
import { CrmApiError } from "./errors.js";
import type { paths } from "./schema.js";

type GetOperation<P extends keyof paths> = paths[P] extends { get: infer Op } ? Op : never;
type OkBody<Op> = Op extends { responses: { 200: { content: { "application/json": infer Body } } } } ? Body : never;

/** Paths whose GET answers a page (`data` + `pagination`). */
export type ListPath = {
  [P in keyof paths]: OkBody<GetOperation<P>> extends { data: unknown[]; pagination: unknown } ? P : never;
}[keyof paths];

/** The item type of the list at `P`, e.g. `ListItem<"/contacts">` is a contact. */
export type ListItem<P extends ListPath> = OkBody<GetOperation<P>> extends { data: (infer Item)[] } ? Item : never;

/** Options of the first page's GET (filters, `limit`, path parameters, headers, signal). */
export type PaginateInit<P extends ListPath> = FetchOptions<GetOperation<P>>;

type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
/** `init` is required only when the path has parameters to fill in. */
export type PaginateArgs<P extends ListPath> = RequiredKeys<PaginateInit<P>> extends never ? [init?: PaginateInit<P>] : [init: PaginateInit<P>];

interface Page {
  data: unknown[];
  pagination: { nextCursor: string | null; hasMore: boolean };
}

/** Builds `paginate` over an openapi-fetch client; a failed page throws `CrmApiError`. */
export function paginator(client: Client<paths>) {
  const get = client.GET as unknown as (path: string, init: object) => Promise<{ data?: Page; error?: unknown; response: Response }>;
  return function paginate<P extends ListPath>(path: P, ...[init]: PaginateArgs<P>): AsyncIterable<ListItem<P>> {
    const base = (init ?? {}) as { params?: { query?: Record<string, unknown> } };
    return {
      async *[Symbol.asyncIterator]() {
        let cursor = base.params?.query?.cursor as string | undefined;
        for (;;) {
          const query = cursor === undefined ? base.params?.query : { ...base.params?.query, cursor };
          const { data, error, response } = await get(path, { ...base, params: { ...base.params, query } });
          if (data === undefined || error !== undefined) throw new CrmApiError(error, response);
          yield* data.data as ListItem<P>[];
          if (!data.pagination.hasMore || data.pagination.nextCursor === null) return;
          cursor = data.pagination.nextCursor;
        }
      },
    };
  };
}
