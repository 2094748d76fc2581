import { checkRows, type CheckReport } from "../transfer/import-check.ts";
import type { HeaderPlan } from "../transfer/import-columns.ts";
import { projectContactTypes } from "../transfer/import.ts";
import { contactTypeNames } from "../transfer/import-rows.ts";
import type { CustomField } from "../reference/custom-fields.ts";
import type { Db } from "../storage/schema.ts";
import { uploadBlob, type UploadRow } from "./import-uploads.ts";

/** How long the preview's page checks values; past it the rest of the rows are counted only (the page says so). */
const CHECK_BUDGET_MS = 15_000;

/**
 * The preview's check of an upload's values (docs/import-export.md §1.6, src/transfer/import-check.ts)
 * against the project's custom fields, contact types and quota as they are now.
 */
export async function checkUpload(
  db: Db,
  project: { id: string; contactQuota: number | null; contactCount: number },
  upload: UploadRow,
  plan: HeaderPlan,
  fields: CustomField[],
): Promise<CheckReport> {
  const types = await projectContactTypes(db, project.id);
  return checkRows(uploadBlob(upload).stream() as unknown as AsyncIterable<Uint8Array>, plan, {
    fields,
    types: contactTypeNames(types),
    typeIds: new Set(types.map((t) => t.id)),
    quotaLeft: project.contactQuota === null ? null : Math.max(project.contactQuota - project.contactCount, 0),
    budgetMs: CHECK_BUDGET_MS,
  });
}
