import type { Kysely } from "kysely";
import { EXPORT_FORMATS, exportContacts, isExportFormat, type ExportFormat } from "../transfer/export.ts";
import type { Database } from "../storage/schema.ts";
import { memoryKeeper } from "../jobs/memory.ts";
import { findProject, listProjects } from "../projects/service.ts";
import { runtime } from "../runtime/index.ts";
import type { TextSink } from "../runtime/types.ts";
import { UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

/** Projects named in the refusal of an unknown one; past it, `crm project list`. */
const LISTED_PROJECTS = 10;

/**
 * `crm export --project ID [--format csv|jsonl] [--output FILE] [--raw]` (docs/import-export.md §2, docs/security.md §8):
 * the shared exporter (src/transfer/export.ts) to standard output, or to FILE. CSV cells that
 * a spreadsheet would run as formulas get a leading `'` unless --raw (JSON lines are always
 * exact). Standard output carries the export and nothing else; with --output the text goes
 * to FILE.partial, renamed onto FILE once whole, so FILE is never a half export, and one
 * summary line goes to stderr.
 */
export async function exportCommand(db: Kysely<Database>, { values }: Input<"export">): Promise<void> {
  const format = values.format ?? "csv";
  if (!isExportFormat(format)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(", ")}, not "${format}"`);
  const project = await findProject(db, values.project);
  if (!project) throw new UsageError(await unknownProject(db, values.project));
  const raw = values.raw ?? false;
  if (values.output === undefined) return toStdout(db, project.id, format, raw);

  const file = values.output;
  const partial = `${file}.partial`;
  const progress = { contacts: 0 };
  const sink = await runtime.openSink(partial).catch((error) => {
    throw new UsageError(`cannot write ${partial}: ${(error as Error).message}`);
  });
  // Interrupted (Ctrl-C, a stop): no half file is left behind, under either name.
  const abandon = () => {
    runtime.removeFile(partial);
    runtime.exit(130);
  };
  runtime.onSignal("SIGINT", abandon);
  runtime.onSignal("SIGTERM", abandon);
  try {
    await pour(exportContacts(db, project.id, format, { progress, raw }), sink);
    await runtime.renameFile(partial, file).catch((error) => {
      throw new UsageError(`cannot write ${file}: ${(error as Error).message}`);
    });
  } catch (error) {
    await sink.close().catch(() => {});
    runtime.removeFile(partial);
    throw error;
  }
  runtime.writeStderr(`exported ${progress.contacts} contacts of ${project.id} to ${file}\n`);
}

async function toStdout(db: Kysely<Database>, projectId: string, format: ExportFormat, raw: boolean): Promise<void> {
  try {
    await pour(exportContacts(db, projectId, format, { raw }), await runtime.openSink());
  } catch (error) {
    // The reader went away (`crm export … | head`): it has what it wanted; stop quietly.
    if ((error as { code?: string }).code === "EPIPE") return;
    throw error;
  }
}

/** Chunks (pages of contacts) between two checks of the memory target. */
const CHUNKS_PER_MEMORY_CHECK = 3;

/**
 * Writes every chunk, each awaited (backpressure), then closes the sink. Every few chunks
 * the server's soft memory target applies (src/jobs/memory.ts): without it JavaScriptCore let
 * the pages' garbage pile up, peak RSS 253 MB at 1 M contacts against 148 MB at 10 k; with a
 * check every page, 144 MB but 45% slower; every third page, within ~10% of both
 * (bench/export.ts measures it).
 */
async function pour(chunks: AsyncIterable<string>, sink: TextSink): Promise<void> {
  const keepMemory = memoryKeeper(runtime.collectGarbage);
  let written = 0;
  for await (const chunk of chunks) {
    await sink.write(chunk);
    if (++written % CHUNKS_PER_MEMORY_CHECK === 0) keepMemory();
  }
  await sink.close();
}

async function unknownProject(db: Kysely<Database>, id: string): Promise<string> {
  const projects = await listProjects(db);
  const listed = projects.slice(0, LISTED_PROJECTS).map((p) => `${p.id} (${p.name})`);
  const more = projects.length > LISTED_PROJECTS ? `, … (crm project list shows all ${projects.length})` : "";
  return `no project ${id}; the projects are: ${listed.join(", ") || "none"}${more}`;
}
