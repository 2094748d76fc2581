import type { Selectable } from "kysely";
import { CsvError, parseCsv } from "../transfer/csv.ts";
import { describeCsvError } from "../transfer/import.ts";
import { clearExpiredRejectedRows } from "./imports.ts";
import type { Database, Db } from "../storage/schema.ts";

/**
 * A CSV uploaded in the console, kept until its matched columns are checked and the import
 * is started (docs/import-export.md §1: "the admin console's import shows the matched columns before
 * it runs"). Stored in the database, not in the process, so the preview and the start may
 * be served by any node. The import takes the upload's id when it starts.
 *
 * The row is deleted when the import starts or once it has expired, and on SQLite its bytes
 * are zeroed as they are freed (`secure_delete`, docs/security.md §7); the
 * import keeps only its rejected rows' cells, for 7 days (docs/import-export.md §1.11), and
 * its summary's row numbers and reasons (src/admin/imports.ts).
 */
export type UploadRow = Selectable<Database["admin_import_uploads"]>;

/** An upload not started within the hour is gone (its page and its start answer 404). */
export const UPLOAD_TTL_MS = 60 * 60_000;

const cutoff = (now: number) => new Date(now - UPLOAD_TTL_MS).toISOString();

/**
 * Deletes the uploads of every project older than the hour (each new upload runs it first; so
 * does the retention job), and the rejected rows of imports that ended over 7 days ago
 * (docs/import-export.md §1.11).
 */
export async function deleteExpiredUploads(db: Db, now: number): Promise<void> {
  await db.deleteFrom("admin_import_uploads").where("created_at", "<", cutoff(now)).execute();
  await clearExpiredRejectedRows(db, now);
}

/** Stores an upload; uploads of every project older than the hour are deleted first. */
export async function storeUpload(db: Db, row: { id: string; projectId: string; fileName: string; body: Uint8Array; now: number }) {
  await deleteExpiredUploads(db, row.now);
  await db
    .insertInto("admin_import_uploads")
    .values({ id: row.id, project_id: row.projectId, file_name: row.fileName, body: row.body, created_at: new Date(row.now).toISOString() })
    .execute();
}

/** The project's upload, unless it is older than the hour. */
export async function findUpload(db: Db, projectId: string, id: string, now: number): Promise<UploadRow | undefined> {
  return db
    .selectFrom("admin_import_uploads")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .where("created_at", ">=", cutoff(now))
    .executeTakeFirst();
}

/** Deletes the upload as its import starts; false when it was already gone (a second start of it). */
export async function takeUpload(db: Db, projectId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom("admin_import_uploads").where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** The body as a Blob to read again (SQLite gives a Uint8Array, PostgreSQL a Buffer: both are byte views). */
export const uploadBlob = (row: UploadRow) => new Blob([row.body as Uint8Array<ArrayBuffer>]);

export interface UploadPreview {
  /** The header row; null when the file has none (empty, or its first record malformed). */
  header: string[] | null;
  /** Up to `rows` data rows, for the preview's samples. */
  rows: string[][];
  /** A malformed record among those read: where and why. */
  failure: string | null;
}

/** The header and the first `rows` data rows, read with the importer's own CSV reader (it stops there). */
export async function previewUpload(row: UploadRow, rows = 3): Promise<UploadPreview> {
  const preview: UploadPreview = { header: null, rows: [], failure: null };
  try {
    for await (const record of parseCsv(uploadBlob(row).stream() as unknown as AsyncIterable<Uint8Array>)) {
      if (!preview.header) preview.header = record;
      else preview.rows.push(record);
      if (preview.rows.length >= rows) break;
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    preview.failure = describeCsvError(error);
  }
  return preview;
}
