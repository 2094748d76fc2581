import { z } from "@hono/zod-openapi";
import type { CursorCodec } from "./cursor.ts";

/** `limit` of every list: default 50, 1–200 (docs/api.md §11). */
export const limitParam = z.coerce
  .number({ error: "must be an integer from 1 to 200." })
  .int("must be an integer from 1 to 200.")
  .min(1, "must be an integer from 1 to 200.")
  .max(200, "must be an integer from 1 to 200.")
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
