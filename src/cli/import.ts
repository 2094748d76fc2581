import { sql, type Kysely } from "kysely";
import type { ContactInput } from "../contacts/schemas.ts";
import { createContact } from "../contacts/service.ts";
import type { Database, Db } from "../db/schema.ts";
import { ApiError } from "../errors.ts";
import { findProject } from "../projects/service.ts";
import { allCustomFields } from "../reference/repository.ts";
import { runtime } from "../runtime/index.ts";
import { UsageError } from "./args.ts";
import type { Input } from "./commands.ts";
import { CsvError, parseCsv } from "./csv.ts";
import { buildRow, mapHeader, type RowResult } from "./import-columns.ts";
import { progress } from "./progress.ts";

/**
 * Rows are read 500 at a time; each transaction writes rows for at most 50 ms, then the
 * import pauses 15 ms. The server's writers wait on the lock polling (busy_timeout, every
 * 100 ms at most): back-to-back long transactions starved them for seconds (500s past the
 * 5 s timeout, measured); short transactions with gaps let them in within a few polls.
 */
const BATCH_SIZE = 500;
const TRANSACTION_BUDGET_MS = 50;
const PAUSE_MS = 15;
/** Skipped rows listed in the summary; past it only `skippedCount` grows (constant memory). */
const MAX_LISTED_SKIPS = 10_000;
const QUOTA_REASON = "contact quota exhausted";

interface Skip {
  row: number;
  reason: string;
  fieldName?: string;
}

class DryRunRollback extends Error {}

/** What one run did; `row` numbers count data rows from 1 (the header is not a row). */
class Summary {
  created = 0;
  rows = 0;
  skippedCount = 0;
  skipped: Skip[] = [];
  quotaLeft: number | null = null;
  quotaExhausted = false;

  skip(entry: Skip) {
    this.skippedCount++;
    if (this.skipped.length < MAX_LISTED_SKIPS) this.skipped.push(entry);
  }
}

/**
 * Creates the batch's contacts through the API's own createContact (every rule of
 * decisions §5, quota included), without contact.created (interface §6.1), in short
 * transactions. Each row runs under a SAVEPOINT (standard SQL), so a row that fails is
 * undone alone and the rest of its transaction commits. A dry run rolls each one back.
 */
async function writeBatch(db: Kysely<Database>, projectId: string, batch: Array<{ row: number; input: ContactInput }>, s: Summary, dryRun: boolean) {
  const attempt = async (trx: Db, row: number, input: ContactInput) => {
    // A dry run rolls every batch back, so the quota is counted here across batches.
    if (s.quotaExhausted || (dryRun && s.quotaLeft !== null && s.created >= s.quotaLeft)) {
      s.quotaExhausted = true;
      return s.skip({ row, reason: QUOTA_REASON });
    }
    await sql`savepoint import_row`.execute(trx);
    try {
      await createContact(trx, projectId, input, { source: "import", emitEvent: false });
      await sql`release savepoint import_row`.execute(trx);
      s.created++;
    } catch (error) {
      await sql`rollback to savepoint import_row`.execute(trx);
      await sql`release savepoint import_row`.execute(trx);
      if (!(error instanceof ApiError)) throw error;
      if (error.code === "ERR_QUOTA_EXCEEDED") s.quotaExhausted = true;
      s.skip(s.quotaExhausted ? { row, reason: QUOTA_REASON } : { row, reason: error.message, fieldName: error.fieldName });
    }
  };
  let next = 0;
  while (next < batch.length) {
    try {
      await db.transaction().execute(async (trx) => {
        const started = Date.now();
        do await attempt(trx, batch[next]!.row, batch[next++]!.input);
        while (next < batch.length && Date.now() - started < TRANSACTION_BUDGET_MS);
        if (dryRun) throw new DryRunRollback();
      });
    } catch (error) {
      if (!(error instanceof DryRunRollback)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  batch.length = 0;
}

/** Counts the bytes that go by, for the progress bar. */
async function* counted(source: AsyncIterable<Uint8Array>, total: { bytes: number }) {
  for await (const chunk of source) {
    total.bytes += chunk.length;
    yield chunk;
  }
}

/** `crm import FILE.csv --project ID [--dry-run] [--json]` (decisions §3, §5). */
export async function importCommand(db: Kysely<Database>, { values, args }: Input<"import">): Promise<void> {
  const file = args[0]!;
  const projectId = values.project;
  const dryRun = values["dry-run"] ?? false;
  const project = await findProject(db, projectId);
  if (!project) throw new UsageError(`no project ${projectId}`);
  const size = runtime.fileSize(file);
  if (size === null) throw new UsageError(`no file ${file}`);

  const s = new Summary();
  s.quotaLeft = project.contactQuota === null ? null : Math.max(project.contactQuota - project.contactCount, 0);
  const fields = await allCustomFields(db, projectId);
  const read = { bytes: 0 };
  const bar = progress(dryRun ? "import (dry run)" : "import", size);
  const batch: Array<{ row: number; input: ContactInput }> = [];
  let columns: ReturnType<typeof mapHeader> | undefined;
  let failure: string | undefined;
  try {
    for await (const record of parseCsv(counted(runtime.readStream(file), read))) {
      if (!columns) {
        columns = mapHeader(record, fields);
        continue;
      }
      const row = ++s.rows;
      const built: RowResult = s.quotaExhausted ? { ok: false, reason: QUOTA_REASON } : buildRow(columns, record);
      if (built.ok) batch.push({ row, input: built.input });
      else s.skip({ row, reason: built.reason, fieldName: built.fieldName });
      if (batch.length >= BATCH_SIZE) await writeBatch(db, projectId, batch, s, dryRun);
      bar.update(row, read.bytes);
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    failure = `${file}: ${error.record === 1 ? "header" : `row ${error.record - 1}`}: ${error.reason}`;
  }
  if (!columns && !failure) throw new UsageError(`${file} has no header row`);
  await writeBatch(db, projectId, batch, s, dryRun);
  bar.done(s.rows, read.bytes);
  printSummary(values.json, s, { projectId, file, dryRun, failure });
  if (failure) throw new UsageError(`${failure} Rows before it were ${dryRun ? "checked" : "imported"}; see the summary.`);
}

function printSummary(json: boolean | undefined, s: Summary, run: { projectId: string; file: string; dryRun: boolean; failure?: string }) {
  if (json) {
    const { created, skipped, skippedCount, rows } = s;
    console.log(JSON.stringify({ created, skipped, skippedCount, rows, dryRun: run.dryRun, projectId: run.projectId, ...(run.failure && { error: run.failure }) }));
    return;
  }
  const verb = run.dryRun ? "would be created (dry run: nothing was written)" : "created";
  const lines = [`${run.file}: ${s.rows} rows, ${s.created} contacts ${verb} in ${run.projectId}, ${s.skippedCount} skipped.`];
  for (const k of s.skipped.slice(0, 50)) lines.push(`  row ${k.row}: ${k.reason}${k.fieldName ? ` (${k.fieldName})` : ""}`);
  if (s.skippedCount > 50) lines.push(`  … and ${s.skippedCount - 50} more (--json lists up to ${MAX_LISTED_SKIPS}).`);
  console.log(lines.join("\n"));
}
