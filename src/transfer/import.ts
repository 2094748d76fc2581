import { actingAs } from "../changes/actor.ts";
import { CsvError, parseCsv } from "./csv.ts";
import { mapHeader, type ColumnChoices, type HeaderPlan } from "./import-columns.ts";
import { buildRow, contactTypeNames, isBlankRecord, type ContactTypeNames, type RowResult } from "./import-rows.ts";
import type { RejectedRows } from "./rejected-rows.ts";
import type { BulkWrites } from "../storage/port.ts";
import type { Db } from "../storage/schema.ts";
import { inSavepoint, type UnitOfWork } from "../storage/unit-of-work.ts";
import { ApiError } from "../errors.ts";
import { allCustomFields } from "../reference/repository.ts";
import type { ContactInput } from "../contacts/schemas.ts";
import { createContact } from "../contacts/service.ts";
import type { Clock } from "../lib/clock.ts";
import { isoNow } from "../lib/time.ts";

/**
 * The one CSV importer (docs/cli.md §4, docs/api.md §11, docs/import-export.md §1), shared by `crm import` (src/cli/import.ts)
 * and the admin console's import (src/admin/imports.ts): each row is checked by the API's
 * create schema and written by the API's createContact (source `import`, every rule of
 * docs/api.md §11.10, the quota included), without contact.created (docs/webhooks.md §1.1).
 *
 * Rows are read 100 at a time (a stop is looked at between batches: at PostgreSQL's import
 * rate a batch of 500 outlasted the shutdown's 10 s); each transaction writes rows for a short time (50 ms by
 * default), then the import pauses 15 ms. The server's writers wait on the lock polling
 * (busy_timeout, every 100 ms at most): back-to-back long transactions starved them for
 * seconds (500s past the 5 s timeout, measured); short transactions with gaps let them in
 * within a few polls.
 */
const BATCH_SIZE = 100;
const TRANSACTION_BUDGET_MS = 50;
const PAUSE_MS = 15;
/** Skipped rows listed in the summary; past it only `skippedCount` grows (constant memory). */
export const MAX_LISTED_SKIPS = 10_000;
const QUOTA_REASON = "contact quota exhausted";

export interface Skip {
  row: number;
  reason: string;
  fieldName?: string;
}

class DryRunRollback extends Error {}

/** What one run did; `row` numbers count data rows from 1 (the header is not a row). */
export class Summary {
  created = 0;
  rows = 0;
  /** Rows whose every cell is empty: skipped, not rejected (docs/import-export.md §1.1); counted in `rows`. */
  blankRows = 0;
  skippedCount = 0;
  skipped: Skip[] = [];
  quotaLeft: number | null = null;
  quotaExhausted = false;

  skip(entry: Skip) {
    this.skippedCount++;
    if (this.skipped.length < MAX_LISTED_SKIPS) this.skipped.push(entry);
  }
}

export interface ImportOptions {
  project: { id: string; contactQuota: number | null; contactCount: number };
  /** The console's import id, named by the change records it makes (the CLI's have none). */
  importId?: string;
  /** Each row's createdAt is read from it: the service's clock in the console, the system's in the CLI (issue 11). */
  clock: Clock;
  dryRun?: boolean;
  /**
   * Where each short transaction runs, under the project's share of the queue: the CLI's
   * own unit of work, or the server's, shared with the API (docs/api.md §7), so API requests
   * are not starved.
   */
  writes: UnitOfWork;
  /** How long a transaction refused for room in a full write queue is tried again (the console: a minute); none by default. */
  patienceMs?: number;
  /** How long one transaction may keep writing rows (default 50 ms). */
  budgetMs?: number;
  /** --map, the console's choices and --ignore-unknown (docs/import-export.md §1). */
  columns?: ColumnChoices;
  /** The summary to fill; the caller keeps what was done even when the import throws. */
  summary?: Summary;
  /** After each data record is read (progress); awaited when it returns a promise. */
  onRecord?(summary: Summary, bytesRead: number): void | Promise<void>;
  /** Asked after each record: true stops the read there, once the rows read so far are written (a server shutting down). */
  stopRequested?(): boolean;
  /** Told after each batch of rows is written, so the planner's statistics follow the load (src/jobs/statistics.ts). */
  statistics?: BulkWrites;
  /** Keeps the rejected rows' cells for the rejected-rows CSV (the console's, docs/import-export.md §1.11). */
  rejected?: RejectedRows;
}

export interface ImportOutcome {
  summary: Summary;
  bytesRead: number;
  /** The header's columns and what each fills; null for an empty file (no header row). */
  plan: HeaderPlan | null;
  /** The CSV error that stopped the read; the rows before it were imported. */
  failure: CsvError | null;
  /** Whether `stopRequested` ended the read early; every row up to `summary.rows` was then written or rejected. */
  stopped: boolean;
}

/** Where a CSV error is: "header: …" or "row N: …" (N counts data rows, as the summary's). */
export const describeCsvError = (error: CsvError) => `${error.record === 1 ? "header" : `row ${error.record - 1}`}: ${error.reason}`;

/**
 * Creates the batch's contacts in short transactions. Each row runs under a SAVEPOINT
 * (standard SQL), so a row that fails is undone alone and the rest of its transaction
 * commits. A dry run rolls each one back.
 */
type Pending = { row: number; input: ContactInput; record?: string[] };

async function writeBatch(batch: Pending[], s: Summary, o: ImportOptions) {
  const projectId = o.project.id;
  const dryRun = o.dryRun ?? false;
  const budget = o.budgetMs ?? TRANSACTION_BUDGET_MS;
  const reject = (item: Pending, skip: Skip) => {
    s.skip(skip);
    if (item.record) o.rejected?.add(item.row, item.record, skip.reason);
  };
  const attempt = async (trx: Db, item: Pending) => {
    const { row, input } = item;
    // A dry run rolls every batch back, so the quota is counted here across batches.
    if (s.quotaExhausted || (dryRun && s.quotaLeft !== null && s.created >= s.quotaLeft)) {
      s.quotaExhausted = true;
      return reject(item, { row, reason: QUOTA_REASON });
    }
    const done = await inSavepoint(trx, "import_row", () => createContact(trx, projectId, input, { source: "import", emitEvent: false, now: isoNow(o.clock) }));
    if (done.ok) return void s.created++;
    const error = done.error;
    if (!(error instanceof ApiError)) throw error;
    if (error.code === "ERR_QUOTA_EXCEEDED") s.quotaExhausted = true;
    reject(item, s.quotaExhausted ? { row, reason: QUOTA_REASON } : { row, reason: error.message, fieldName: error.fieldName });
  };
  const createdBefore = s.created;
  let next = 0;
  while (next < batch.length) {
    try {
      const chunk = async (trx: Db) => {
        const started = performance.now();
        do await attempt(trx, batch[next++]!);
        while (next < batch.length && performance.now() - started < budget);
        if (dryRun) throw new DryRunRollback();
      };
      // The rows' change records name the import (docs/api.md §19.1), whoever started it.
      const acting = { actor: { type: "import" as const, id: o.importId ?? null }, requestId: null };
      await actingAs(acting, () => o.writes.run(projectId, chunk, { patienceMs: o.patienceMs }));
    } catch (error) {
      if (!(error instanceof DryRunRollback)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  if (!dryRun && s.created > createdBefore) o.statistics?.noteRowsWritten("contacts", s.created - createdBefore);
  batch.length = 0;
}

/** Counts the bytes that go by, for progress. */
async function* counted(source: AsyncIterable<Uint8Array>, total: { bytes: number }) {
  for await (const chunk of source) {
    total.bytes += chunk.length;
    yield chunk;
  }
}

/** The project's contact types, read once per import when a column names types (docs/import-export.md §1: by name). */
async function typesOf(db: Db, projectId: string, plan: HeaderPlan): Promise<ContactTypeNames | undefined> {
  if (!plan.matches.some((m) => m.column?.kind === "contactType")) return undefined;
  return contactTypeNames(await projectContactTypes(db, projectId));
}

/** The project's contact types, oldest first (of two named alike, the oldest wins). */
export const projectContactTypes = (db: Db, projectId: string) =>
  db.selectFrom("contact_types").select(["id", "name"]).where("project_id", "=", projectId).orderBy("created_at").orderBy("id").execute();

/**
 * Streams a CSV file into the project's contacts, in constant memory. The header maps
 * columns to fields (src/transfer/import-columns.ts); an unknown or repeated column throws
 * (a ColumnPlanError naming it) before anything is written. A malformed record stops the read:
 * the rows before it are still written, and `failure` says where and why.
 */
export async function importCsv(db: Db, source: AsyncIterable<Uint8Array>, o: ImportOptions): Promise<ImportOutcome> {
  const s = o.summary ?? new Summary();
  s.quotaLeft = o.project.contactQuota === null ? null : Math.max(o.project.contactQuota - o.project.contactCount, 0);
  const fields = await allCustomFields(db, o.project.id);
  const read = { bytes: 0 };
  const batch: Pending[] = [];
  let plan: HeaderPlan | null = null;
  let types: ContactTypeNames | undefined;
  let failure: CsvError | null = null;
  let stopped = false;
  try {
    for await (const record of parseCsv(counted(source, read))) {
      if (!plan) {
        plan = mapHeader(record, fields, o.columns);
        types = await typesOf(db, o.project.id, plan);
        o.rejected?.header(record);
        continue;
      }
      const row = ++s.rows;
      if (isBlankRecord(record)) s.blankRows++;
      else {
        const built: RowResult = s.quotaExhausted ? { ok: false, reason: QUOTA_REASON } : buildRow(plan.matches, record, types);
        if (built.ok) batch.push({ row, input: built.input, ...(o.rejected && { record }) });
        else {
          s.skip({ row, reason: built.reason, fieldName: built.fieldName });
          o.rejected?.add(row, record, built.reason);
        }
      }
      if (batch.length >= BATCH_SIZE) await writeBatch(batch, s, o);
      const pending = o.onRecord?.(s, read.bytes);
      if (pending) await pending;
      if (o.stopRequested?.()) {
        stopped = true;
        break;
      }
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    failure = error;
  }
  await writeBatch(batch, s, o);
  return { summary: s, bytesRead: read.bytes, plan, failure, stopped };
}
