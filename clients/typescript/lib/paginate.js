/* @ts-self-types="./paginate.d.ts" */
import { CrmApiError } from "./errors.js";
/** Builds `paginate` over an openapi-fetch client; a failed page throws `CrmApiError`. */
export function paginator(client) {
    const get = client.GET;
    return function paginate(path, ...[init]) {
        const base = (init ?? {});
        return {
            async *[Symbol.asyncIterator]() {
                let cursor = base.params?.query?.cursor;
                for (;;) {
                    const query = cursor === undefined ? base.params?.query : { ...base.params?.query, cursor };
                    const { data, error, response } = await get(path, { ...base, params: { ...base.params, query } });
                    if (data === undefined || error !== undefined)
                        throw new CrmApiError(error, response);
                    yield* data.data;
                    if (!data.pagination.hasMore || data.pagination.nextCursor === null)
                        return;
                    cursor = data.pagination.nextCursor;
                }
            },
        };
    };
}
