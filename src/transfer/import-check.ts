import { CsvError, parseCsv } from "./csv.ts";
import type { HeaderPlan } from "./import-columns.ts";
import { buildRow, isBlankRecord, type ContactTypeNames } from "./import-rows.ts";
import { describeCsvError } from "./import.ts";
import type { ContactReference } from "../contacts/apply.ts";
import { newContactState } from "../contacts/service.ts";
import { ApiError } from "../errors.ts";
import type { CustomField } from "../reference/custom-fields.ts";

/**
 * The console's check of an upload's values before its import starts (docs/import-export.md
 * §1.6): every row through the checks the import applies (src/transfer/import-rows.ts, then
 * the API's own rules against the project's custom fields, contact types and quota), writing
 * nothing. What needs the database row by row (a value a unique custom field already holds)
 * is left to the import. Streams the file; keeps counts and, per reason, its first rows.
 * Bounded in time too: past `budgetMs` the rows are only counted, and the report says how
 * many were checked (a 20 MiB file is checked whole in a few seconds on an idle server).
 */

/** Row numbers listed per reason. */
const ROWS_LISTED = 5;
/** Distinct reasons kept; past it, rows count under "other reasons". */
const REASONS_KEPT = 50;
const QUOTA_REASON = "contact quota exhausted";

export interface ReasonGroup {
  reason: string;
  fieldName?: string;
  count: number;
  /** The first rows with it (data rows from 1, as the import's summary numbers them). */
  rows: number[];
}

export interface CheckReport {
  rows: number;
  /** Rows checked; fewer than `rows` when the time budget ran out. */
  checked: number;
  blankRows: number;
  /** Rows the import would create (before values a unique custom field already holds). */
  passing: number;
  failing: number;
  /** Most frequent first. */
  reasons: ReasonGroup[];
  /** Failing rows whose reason was past the kept ones. */
  otherReasons: number;
  /** A malformed record, where the import would stop: "row N: …". */
  failure: string | null;
}

/** The project's reference data in memory: tags are accepted by name (the import creates unknown ones). */
function memoryReference(fields: CustomField[], typeIds: ReadonlySet<string>): ContactReference {
  return {
    contactTypeExists: async (id) => typeIds.has(id),
    tags: async (refs) => [...new Map(refs.map((ref) => [ref.toLowerCase(), { id: `tag:${ref.toLowerCase()}`, name: ref }])).values()],
    customFields: async () => fields,
  };
}

export async function checkRows(
  source: AsyncIterable<Uint8Array>,
  plan: HeaderPlan,
  context: { fields: CustomField[]; types: ContactTypeNames | undefined; typeIds: ReadonlySet<string>; quotaLeft: number | null; budgetMs?: number },
): Promise<CheckReport> {
  const report: CheckReport = { rows: 0, checked: 0, blankRows: 0, passing: 0, failing: 0, reasons: [], otherReasons: 0, failure: null };
  const deadline = performance.now() + (context.budgetMs ?? Infinity);
  let inTime = true;
  const groups = new Map<string, ReasonGroup>();
  const reference = memoryReference(context.fields, context.typeIds);
  const fail = (row: number, reason: string, fieldName?: string) => {
    report.failing++;
    const key = `${fieldName ?? ""}\n${reason}`;
    let group = groups.get(key);
    if (!group) {
      if (groups.size >= REASONS_KEPT) return void report.otherReasons++;
      groups.set(key, (group = { reason, ...(fieldName && { fieldName }), count: 0, rows: [] }));
    }
    group.count++;
    if (group.rows.length < ROWS_LISTED) group.rows.push(row);
  };
  let header = true;
  try {
    for await (const record of parseCsv(source)) {
      if (header) {
        header = false;
        continue;
      }
      const row = ++report.rows;
      if (isBlankRecord(record)) {
        report.blankRows++;
        continue;
      }
      if (!inTime || (row % 256 === 0 && performance.now() > deadline && !(inTime = false))) continue;
      report.checked = row;
      const built = buildRow(plan.matches, record, context.types);
      if (!built.ok) {
        fail(row, built.reason, built.fieldName);
        continue;
      }
      try {
        await newContactState(reference, built.input, { source: "import", contactTypeId: null });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        fail(row, error.message, error.fieldName);
        continue;
      }
      if (context.quotaLeft !== null && report.passing >= context.quotaLeft) fail(row, QUOTA_REASON);
      else report.passing++;
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    report.failure = describeCsvError(error);
  }
  if (inTime) report.checked = report.rows;
  report.reasons = [...groups.values()].sort((a, b) => b.count - a.count || a.rows[0]! - b.rows[0]!);
  return report;
}
