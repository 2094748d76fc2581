import { z } from "@hono/zod-openapi";
import type { CursorCodec } from "./cursor.ts";

const LIMIT_MESSAGE = "must be an integer from 1 to 200.";

/**
 * A query integer as the document's `type: integer` reads it (docs/api.md §3.3): plain
 * decimal digits, no sign, exponent, fraction, leading zero or space (`05`, `+5`, `5.0`,
 * `1e1`, ` 5` are 422). Anything else is left as it came, for the number schema to refuse.
 */
export const queryInteger = (value: unknown) => (typeof value === "string" && /^-?(0|[1-9]\d*)$/.test(value) ? Number(value) : value);

/** `limit` of every list: default 50, 1–200 (docs/api.md §5). */
export const limitParam = z
  .preprocess(queryInteger, z.number({ error: LIMIT_MESSAGE }).int(LIMIT_MESSAGE).min(1, LIMIT_MESSAGE).max(200, LIMIT_MESSAGE))
  .default(50)
  .openapi({ description: "Page size, 1–200.", example: 50 });

export const cursorParam = z.string().min(1).optional().openapi({ description: "pagination.nextCursor of the previous page." });

export const paginationSchema = z
  .object({ nextCursor: z.string().nullable(), hasMore: z.boolean() })
  .openapi("Pagination");

export const listEnvelope = <T extends z.ZodType>(item: T, name: string) =>
  z.object({ data: z.array(item), pagination: paginationSchema }).openapi(name);

export interface Page<T> {
  data: T[];
  pagination: { nextCursor: string | null; hasMore: boolean };
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only tells that more exist,
 * so the page that takes the last item already says hasMore false (docs/api.md §5).
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  position: (row: R) => Array<string | number>,
  map: (row: R) => T,
  cursors: CursorCodec,
  filters: unknown,
): Page<T> {
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return {
    data: kept.map(map),
    pagination: { nextCursor: hasMore && last ? cursors.encode(position(last), filters) : null, hasMore },
  };
}
