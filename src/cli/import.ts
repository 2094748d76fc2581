import type { Kysely } from "kysely";
import { describeCsvError, importCsv, MAX_LISTED_SKIPS, type Summary } from "../transfer/import.ts";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { systemClock } from "../lib/clock.ts";
import { findProject } from "../projects/service.ts";
import { runtime } from "../runtime/index.ts";
import { UsageError } from "./args.ts";
import type { Input } from "./commands.ts";
import { ColumnPlanError, fieldOf, parseMapOption, SKIP_REASONS, type HeaderPlan } from "../transfer/import-columns.ts";
import { progress } from "./progress.ts";

/**
 * `crm import FILE.csv --project ID [--map "Header=field,…"] [--ignore-unknown] [--dry-run]
 * [--json]` (docs/cli.md §4, docs/api.md §11, docs/import-export.md §1): the shared importer (src/transfer/import.ts) over the
 * file, in short units of work of its own (`writes`, over this process's storage), with a
 * progress bar on stderr and the summary, the columns' fields among it, on stdout.
 */
export async function importCommand(db: Kysely<Database>, writes: UnitOfWork, { values, args }: Input<"import">): Promise<void> {
  const file = args[0]!;
  const projectId = values.project;
  const dryRun = values["dry-run"] ?? false;
  const columns = { map: mapOption(values.map), ignoreUnknown: values["ignore-unknown"] ?? false };
  const project = await findProject(db, projectId);
  if (!project) throw new UsageError(`no project ${projectId}`);
  const size = runtime.fileSize(file);
  if (size === null) throw new UsageError(`no file ${file}`);

  const bar = progress(dryRun ? "import (dry run)" : "import", size);
  const { summary: s, bytesRead, plan, failure: csvError } = await importCsv(db, runtime.readStream(file), {
    project,
    clock: systemClock,
    dryRun,
    columns,
    writes,
    onRecord: (summary, bytes) => bar.update(summary.rows, bytes),
  }).catch(asUsage);
  const failure = csvError ? `${file}: ${describeCsvError(csvError)}` : undefined;
  if (!plan && !failure) throw new UsageError(`${file} has no header row`);
  bar.done(s.rows, bytesRead);
  printSummary(values.json, s, plan, { projectId, file, dryRun, failure });
  if (failure) throw new UsageError(`${failure} Rows before it were ${dryRun ? "checked" : "imported"}; see the summary.`);
}

/** A header or --map the importer refuses is the command line's mistake: exit 2 (docs/cli.md §4). */
function asUsage(error: unknown): never {
  throw error instanceof ColumnPlanError ? new UsageError(error.message) : error;
}

function mapOption(value: string | undefined) {
  try {
    return parseMapOption(value);
  } catch (error) {
    return asUsage(error);
  }
}

/** The summary's `columns` (each header and the field it filled, null when skipped) and `skippedColumns` (headers). */
function columnsOf(plan: HeaderPlan | null) {
  const matches = plan?.matches ?? [];
  return {
    columns: matches.map((m) => ({ header: m.header, field: m.column ? fieldOf(m.column) : null })),
    skippedColumns: matches.filter((m) => !m.column).map((m) => m.header),
  };
}

function printSummary(json: boolean | undefined, s: Summary, plan: HeaderPlan | null, run: { projectId: string; file: string; dryRun: boolean; failure?: string }) {
  if (json) {
    const { created, skipped, skippedCount, rows, blankRows } = s;
    const summary = { created, skipped, skippedCount, rows, blankRows, ...columnsOf(plan), dryRun: run.dryRun, projectId: run.projectId };
    console.log(JSON.stringify({ ...summary, ...(run.failure && { error: run.failure }) }));
    return;
  }
  const verb = run.dryRun ? "would be created (dry run: nothing was written)" : "created";
  const blank = s.blankRows > 0 ? `, ${s.blankRows} blank row${s.blankRows === 1 ? "" : "s"} skipped` : "";
  const lines = [`${run.file}: ${s.rows} rows, ${s.created} contacts ${verb} in ${run.projectId}, ${s.skippedCount} skipped${blank}.`];
  const skippedColumns = (plan?.matches ?? []).flatMap((m, i) => (m.skipped ? [`${m.header.trim() || `column ${i + 1}`} (${SKIP_REASONS[m.skipped]})`] : []));
  if (skippedColumns.length > 0) lines.push(`skipped columns: ${skippedColumns.join(", ")}`);
  for (const k of s.skipped.slice(0, 50)) lines.push(`  row ${k.row}: ${k.reason}${k.fieldName ? ` (${k.fieldName})` : ""}`);
  if (s.skippedCount > 50) lines.push(`  … and ${s.skippedCount - 50} more (--json lists up to ${MAX_LISTED_SKIPS}).`);
  console.log(lines.join("\n"));
}
