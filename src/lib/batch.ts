import { z } from "@hono/zod-openapi";
import { ApiError } from "../errors.ts";
import { validationFailure } from "../http/validation.ts";
import type { Db } from "../storage/schema.ts";
import { inSavepoint } from "../storage/unit-of-work.ts";

/**
 * Batch writes (docs/api.md §18.4): items applied in order, each as its single call would
 * be, each in a savepoint of the request's one transaction, so a failed item leaves nothing
 * behind and the next item sees every earlier item's writes. With `atomic`, one failure
 * rejects the whole batch: the request rolls back and answers 422 ERR_BATCH_REJECTED with
 * the results, passing items marked "skipped".
 */
export const MAX_BATCH_ITEMS = 1000;

export const batchItems = z
  .array(z.unknown())
  .min(1, `must have 1 to ${MAX_BATCH_ITEMS} items.`)
  .max(MAX_BATCH_ITEMS, `must have 1 to ${MAX_BATCH_ITEMS} items.`)
  .openapi({ description: `1 to ${MAX_BATCH_ITEMS} items, each validated and applied as the single call's body would be.` });

export const atomicFlag = z
  .boolean()
  .optional()
  .openapi({ description: "Default false. All or nothing: if any item fails, nothing is written and the answer is 422 ERR_BATCH_REJECTED." });

export const ItemErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  fieldName: z.string().optional(),
  mergedInto: z.string().optional().openapi({ description: "ERR_CONTACT_MERGED only: the contact it was merged into (docs/api.md §20.3)." }),
});

/** One item's outcome: `status` and `error` are what its single call would have answered. */
export interface ItemResult {
  index: number;
  status: number;
  result: string;
  contactId?: string;
  id?: string;
  error?: z.infer<typeof ItemErrorSchema>;
}

/** What an item's work answers when it succeeds. */
export type ItemOutcome = Omit<ItemResult, "index" | "error">;

export async function runBatch(
  trx: Db,
  items: readonly unknown[],
  atomic: boolean | undefined,
  applyItem: (item: unknown, index: number) => Promise<ItemOutcome>,
): Promise<ItemResult[]> {
  const results: ItemResult[] = [];
  for (const [index, item] of items.entries()) results.push(await applyInSavepoint(trx, index, () => applyItem(item, index)));
  return settle(results, atomic);
}

/** One item applied in a savepoint of `trx`: its outcome, or the error its single call would answer. */
export async function applyInSavepoint(trx: Db, index: number, work: () => Promise<ItemOutcome>): Promise<ItemResult> {
  const attempt = await inSavepoint(trx, "batch_item", work);
  if (attempt.ok) return { index, ...attempt.value };
  if (attempt.error instanceof ApiError) return errorResult(index, attempt.error);
  throw attempt.error;
}

/** A batch's results as answered; with `atomic` and a failed item, the whole batch is rejected (the request rolls back). */
export function settle(results: ItemResult[], atomic: boolean | undefined): ItemResult[] {
  if (atomic && results.some((r) => r.result === "error")) {
    const failed = results.filter((r) => r.result === "error").length;
    throw new ApiError(
      "ERR_BATCH_REJECTED",
      `${failed} of ${results.length} items failed; the batch is atomic, so nothing was written.`,
      undefined,
      undefined,
      { results: results.map(skippedUnlessFailed) as never },
    );
  }
  return results;
}

/** An item's error: what its single call would have answered. */
export function errorResult(index: number, error: ApiError): ItemResult {
  const body: ItemResult["error"] = { code: error.code, message: error.message };
  if (error.fieldName !== undefined) body.fieldName = error.fieldName;
  if (error.details?.mergedInto !== undefined) body.mergedInto = error.details.mergedInto;
  return { index, status: error.status, result: "error", error: body };
}

/** An atomic batch's passing item, after the rollback: skipped; a contact it created does not exist. */
function skippedUnlessFailed(r: ItemResult): ItemResult {
  if (r.result === "error") return r;
  const { contactId, id, ...rest } = r;
  return { ...rest, result: "skipped", ...(r.result === "created" ? {} : { contactId }) };
}

/** Counts of a batch's results by outcome. */
export function summarise<K extends string>(results: readonly ItemResult[], outcomes: readonly K[]) {
  const summary = Object.fromEntries([...outcomes, "failed"].map((k) => [k, 0])) as Record<K | "failed", number>;
  for (const r of results) {
    const key = (r.result === "error" ? "failed" : r.result) as K | "failed";
    if (key in summary) summary[key] += 1;
  }
  return summary;
}

/** An item checked by its single call's body schema: the same 422, message and fieldName as that call. */
export function parseItem<T extends z.ZodType>(schema: T, item: unknown): z.infer<T> {
  const parsed = schema.safeParse(item);
  if (!parsed.success) throw validationFailure(parsed.error, { input: item, target: "json" });
  return parsed.data;
}
