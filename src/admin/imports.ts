import type { Selectable } from "kysely";
import { ColumnPlanError, type ColumnChoices } from "../transfer/import-columns.ts";
import { describeCsvError, importCsv, Summary, type Skip } from "../transfer/import.ts";
import { RejectedRows } from "../transfer/rejected-rows.ts";
import type { Database, Db } from "../storage/schema.ts";
import type { AppDeps } from "../http/env.ts";
import { isoNow } from "../lib/time.ts";

/**
 * The console's CSV imports (docs/admin.md §3, docs/import-export.md §1), run in the background of the server
 * process that took the upload, through the same importer as `crm import`
 * (src/transfer/import.ts). Their progress and summary live in `admin_imports`, so a page
 * served by any node shows them.
 */
export type ImportRow = Selectable<Database["admin_imports"]>;

/** Rejected rows kept with an import (the table's `skipped`); the count goes on past it. */
export const STORED_SKIPS = 1_000;
/** The rejected rows' CSV (docs/import-export.md §1.11): at most this many rows and bytes, kept this long after the import ends. */
export const REJECTED_ROWS_KEPT = STORED_SKIPS;
const REJECTED_BYTES_KEPT = 2 * 1024 * 1024;
export const REJECTED_TTL_MS = 7 * 24 * 60 * 60_000;
/** Progress is written at most this often while an import runs. */
const PROGRESS_EVERY_MS = 1_000;
/**
 * A running import heard from last this long ago has stopped with its process (a restart,
 * a crash): it writes its progress at least every few seconds while it runs.
 */
export const STALE_MS = 2 * 60_000;
/** One transaction of the import writes rows for at most this long: it shares the API's write queue (docs/operations.md §3.1). */
const IMPORT_BUDGET_MS = 20;
/** How long the import waits for room in a full write queue before it gives up. */
const QUEUE_PATIENCE_MS = 60_000;

export async function insertImport(db: Db, row: { id: string; projectId: string; fileName: string; bytesTotal: number; now: string }) {
  await db
    .insertInto("admin_imports")
    .values({ id: row.id, project_id: row.projectId, file_name: row.fileName, status: "running", bytes_total: row.bytesTotal, created_at: row.now, updated_at: row.now })
    .execute();
}

export async function findImport(db: Db, projectId: string, id: string) {
  return db.selectFrom("admin_imports").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

export async function recentImports(db: Db, projectId: string, limit = 20) {
  return db.selectFrom("admin_imports").selectAll().where("project_id", "=", projectId).orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
}

/** What an import's page shows: its stored status, or `interrupted` when a running one stopped being heard from. */
export function importStatus(row: ImportRow, now: number): ImportRow["status"] | "interrupted" {
  return row.status === "running" && now - Date.parse(row.updated_at) > STALE_MS ? "interrupted" : row.status;
}

/** A project's import still running (on any node), which a new upload waits for. */
export async function runningImport(db: Db, projectId: string, now: number) {
  const rows = await db.selectFrom("admin_imports").selectAll().where("project_id", "=", projectId).where("status", "=", "running").execute();
  return rows.find((row) => importStatus(row, now) === "running");
}

export const storedSkips = (row: ImportRow): Skip[] => JSON.parse(row.skipped) as Skip[];

/**
 * Clears the rejected rows' cells of imports that ended more than 7 days ago, in every project
 * (the retention job runs it with the uploads' expiry; secure_delete zeroes them on SQLite,
 * docs/security.md §7).
 */
export async function clearExpiredRejectedRows(db: Db, now: number): Promise<void> {
  const before = new Date(now - REJECTED_TTL_MS).toISOString();
  await db.updateTable("admin_imports").set({ rejected_csv: null }).where("rejected_csv", "is not", null).where("updated_at", "<", before).execute();
}

/** Deletes an import's rejected rows at once (its page's "Delete rejected rows"). */
export async function clearRejectedRows(db: Db, projectId: string, id: string): Promise<void> {
  await db.updateTable("admin_imports").set({ rejected_csv: null }).where("project_id", "=", projectId).where("id", "=", id).execute();
}

function counts(s: Summary, bytesRead: number) {
  return { bytes_read: bytesRead, rows_read: s.rows, created: s.created, skipped_count: s.skippedCount, blank_rows: s.blankRows };
}

/** Imports being run by this process, per service (its database), which its shutdown stops and waits for. */
const runners = new WeakMap<object, { stopping: boolean; inFlight: Set<Promise<void>> }>();
const runnerOf = (db: object) => {
  let runner = runners.get(db);
  if (!runner) runners.set(db, (runner = { stopping: false, inFlight: new Set() }));
  return runner;
};

/**
 * SIGTERM (docs/operations.md §6.2): each import the service (`db`) runs stops once the rows it has
 * read are written, and records where it stopped, so its page says which rows to upload
 * again; waits up to `timeoutMs` for them.
 */
export async function stopImports(db: object, timeoutMs = 10_000): Promise<void> {
  const runner = runnerOf(db);
  runner.stopping = true;
  if (runner.inFlight.size === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([Promise.allSettled([...runner.inFlight]), timeout]);
  clearTimeout(timer);
}

/** One import to run: the stored row's id, the project, the file and the fields chosen for columns (the preview's). */
export interface ImportJob {
  id: string;
  project: { id: string; contactQuota: number | null; contactCount: number };
  file: Blob;
  columns?: ColumnChoices;
}

/**
 * Starts the import of `file` into the project, in the background: the caller has stored
 * the `admin_imports` row `id` and answers the request at once. Every write, rows and
 * progress, goes through the API's write queue in short transactions under the project's
 * share (docs/operations.md §3.1).
 */
export function startImport(deps: AppDeps, job: ImportJob): void {
  const task = runImport(deps, job).catch((error) => {
    deps.log.error("admin import failed", { importId: job.id, projectId: job.project.id, error: String(error?.message ?? error) });
  });
  const { inFlight } = runnerOf(deps.db);
  inFlight.add(task);
  void task.finally(() => inFlight.delete(task));
}

async function runImport(deps: AppDeps, job: ImportJob) {
  const projectId = job.project.id;
  const save = (patch: Partial<ImportRow>) =>
    deps.writes.run(projectId, (trx) => trx.updateTable("admin_imports").set({ ...patch, updated_at: isoNow(deps.clock) }).where("id", "=", job.id).execute(), {
      patienceMs: QUEUE_PATIENCE_MS,
    });

  const summary = new Summary();
  const rejected = new RejectedRows(REJECTED_ROWS_KEPT, REJECTED_BYTES_KEPT);
  let bytes = 0;
  let lastSaved = performance.now();
  let status: "done" | "failed" = "done";
  let error: string | null = null;
  try {
    const outcome = await importCsv(deps.db, job.file.stream() as unknown as AsyncIterable<Uint8Array>, {
      project: job.project,
      importId: job.id,
      clock: deps.clock,
      columns: job.columns,
      summary,
      rejected,
      writes: deps.writes,
      statistics: deps.statistics,
      patienceMs: QUEUE_PATIENCE_MS,
      budgetMs: IMPORT_BUDGET_MS,
      stopRequested: () => runnerOf(deps.db).stopping,
      onRecord: (s, bytesRead) => {
        bytes = bytesRead;
        if (performance.now() - lastSaved < PROGRESS_EVERY_MS) return;
        lastSaved = performance.now();
        return save(counts(s, bytesRead)).then(() => undefined);
      },
    });
    bytes = outcome.bytesRead;
    if (outcome.failure) [status, error] = ["failed", `${describeCsvError(outcome.failure)} The rows before it were imported.`];
    else if (!outcome.plan) [status, error] = ["failed", "The file is empty: it has no header row."];
    else if (outcome.stopped) {
      const rows = outcome.summary.rows.toLocaleString("en");
      [status, error] = ["failed", `The server stopped during the import, after row ${rows}: the rows up to it were imported or rejected (below). Upload the rows after it again.`];
    }
  } catch (thrown) {
    status = "failed";
    // A header the importer cannot map (an unknown or repeated column) says which; anything else is logged, not shown.
    if (thrown instanceof ColumnPlanError) error = thrown.message;
    else {
      deps.log.error("admin import stopped", { importId: job.id, projectId, error: String((thrown as Error)?.message ?? thrown) });
      error = "The import stopped on an unexpected error; the rows before it were imported.";
    }
  }
  await save({ ...counts(summary, bytes), status, error, skipped: JSON.stringify(summary.skipped.slice(0, STORED_SKIPS)), rejected_csv: rejected.csv() });
}
