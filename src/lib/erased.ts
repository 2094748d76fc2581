import { z } from "@hono/zod-openapi";

/**
 * The shape of a record after its contact was erased (docs/import-export.md §3): events and
 * stored idempotent answers keep their ids, and every other field is null (src/events/scrub.ts).
 */
export const erasedShape = <S extends z.ZodRawShape>(shape: S, kept: readonly string[]) =>
  Object.fromEntries(Object.keys(shape).map((key) => [key, kept.includes(key) ? shape[key]! : z.null()])) as { [K in keyof S]: z.ZodType };
