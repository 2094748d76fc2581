/**
 * Auto-pagination (docs/api.md §11): every list answers
 * `{ data: [...], pagination: { nextCursor, hasMore } }` and takes the previous page's
 * `nextCursor` as its `cursor` query parameter. `paginate` turns that into one
 * AsyncIterable of items, fetched a page at a time as the loop asks for more.
 */
import type { Client, FetchOptions } from "openapi-fetch";
import type { paths } from "./schema.js";
type GetOperation<P extends keyof paths> = paths[P] extends {
    get: infer Op;
} ? Op : never;
type OkBody<Op> = Op extends {
    responses: {
        200: {
            content: {
                "application/json": infer Body;
            };
        };
    };
} ? Body : never;
/** Paths whose GET answers a page (`data` + `pagination`). */
export type ListPath = {
    [P in keyof paths]: OkBody<GetOperation<P>> extends {
        data: unknown[];
        pagination: unknown;
    } ? P : never;
}[keyof paths];
/** The item type of the list at `P`, e.g. `ListItem<"/contacts">` is a contact. */
export type ListItem<P extends ListPath> = OkBody<GetOperation<P>> extends {
    data: (infer Item)[];
} ? Item : never;
/** Options of the first page's GET (filters, `limit`, path parameters, headers, signal). */
export type PaginateInit<P extends ListPath> = FetchOptions<GetOperation<P>>;
type RequiredKeys<T> = {
    [K in keyof T]-?: {} extends Pick<T, K> ? never : K;
}[keyof T];
/** `init` is required only when the path has parameters to fill in. */
export type PaginateArgs<P extends ListPath> = RequiredKeys<PaginateInit<P>> extends never ? [init?: PaginateInit<P>] : [init: PaginateInit<P>];
/** Builds `paginate` over an openapi-fetch client; a failed page throws `CrmApiError`. */
export declare function paginator(client: Client<paths>): <P extends ListPath>(path: P, ...[init]: PaginateArgs<P>) => AsyncIterable<ListItem<P>>;
export {};
