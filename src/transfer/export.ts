import { csvRecord } from "./csv.ts";
import type { Db } from "../storage/schema.ts";
import type { CustomField } from "../reference/custom-fields.ts";
import { ADDRESS_FIELDS, customFieldHeader, EXPORT_COLUMNS, LIST_SEPARATOR } from "./csv-columns.ts";
import { withType } from "../contacts/repository.ts";
import type { Contact } from "../contacts/schemas.ts";
import { toContacts } from "../contacts/service.ts";
import { neutraliseFormula } from "./spreadsheet.ts";

/**
 * The one exporter (docs/import-export.md §2), behind `crm export` (src/cli/export.ts) and the
 * console's download (src/admin/pages/export.tsx): every contact of a project in
 * contact-number order, as CSV or JSON lines, in constant memory.
 *
 * Contacts are read in keyset pages (`contact_number > last`, on the unique index
 * (project_id, contact_number)), each page its own short statements: no transaction spans
 * the export, so it neither pins SQLite's WAL nor holds a PostgreSQL snapshot, and writers
 * wait at most for one page's read. The price: the export is not a snapshot; a contact changed while it
 * runs may appear in its new state (docs/import-export.md). A page is read only when the
 * consumer asks for the next chunk, so a slow reader holds at most one page in memory.
 *
 * CSV cells that a spreadsheet would read as formulas get a leading `'` unless `raw` is
 * asked for (docs/security.md §8, src/transfer/spreadsheet.ts); JSON lines are never changed.
 */
export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const isExportFormat = (value: string): value is ExportFormat => (EXPORT_FORMATS as readonly string[]).includes(value);

/** Contacts per page: one chunk of output (≈0.2 MB of CSV, 0.6 MB of JSON lines), one rows query and one tags query. */
export const EXPORT_PAGE_SIZE = 1_000;

/** How far an export got, updated as chunks are taken (the CLI's summary line). */
export interface ExportProgress {
  contacts: number;
}

export interface ExportOptions {
  /** Counted as chunks are taken. */
  progress?: ExportProgress;
  /** CSV cells exactly as stored, formulas included (`crm export --raw`, the console's raw download); default false. */
  raw?: boolean;
}

/**
 * Pages of contacts, mapped exactly as the API maps them (`toContacts`, the list's mapping),
 * so each is what GET /contacts/{contactId} shows without duplicateSignal.
 */
export async function* contactPages(db: Db, projectId: string, pageSize = EXPORT_PAGE_SIZE): AsyncGenerator<Contact[]> {
  // Relabels may use CR-0 (docs/api.md §11.4): start below every number.
  let after = -1;
  for (;;) {
    const rows = await withType(db)
      .where("contacts.project_id", "=", projectId)
      .where("contacts.contact_number", ">", after)
      .orderBy("contacts.contact_number")
      .limit(pageSize)
      .execute();
    if (rows.length === 0) return;
    // Contacts in the trash are not exported (docs/api.md §19.3: 404 everywhere).
    const live = rows.filter((r) => r.deleted_at === null);
    if (live.length > 0) yield await toContacts(db, live);
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.contact_number;
  }
}

/** Custom fields of the project in creation order: the CSV's last columns. */
async function exportedFields(db: Db, projectId: string): Promise<CustomField[]> {
  const rows = await db
    .selectFrom("custom_fields")
    .select(["id", "title", "type", "options"])
    .where("project_id", "=", projectId)
    .orderBy("created_at")
    .orderBy("title")
    .execute();
  return rows.map((r) => ({ ...r, options: r.options ? (JSON.parse(r.options) as string[]) : null }));
}

/** The CSV's header row: EXPORT_COLUMNS, then each custom field by title (src/transfer/csv-columns.ts). */
export const csvHeader = (fields: readonly CustomField[]) => [...EXPORT_COLUMNS, ...fields.map((f) => customFieldHeader(f.title))];

const text = (value: string | null | undefined) => value ?? "";

type Column = (typeof EXPORT_COLUMNS)[number];
type AddressColumn = Extract<Column, `address.${string}`>;

/**
 * Each column's cell, by name: the compiler checks every column of EXPORT_COLUMNS has one,
 * and the cells follow the header's order whatever that order is.
 */
const CELLS: Record<Column, (c: Contact) => string> = {
  contactId: (c) => c.contactId,
  identityType: (c) => c.identityType,
  source: (c) => text(c.source),
  firstName: (c) => text(c.firstName),
  lastName: (c) => text(c.lastName),
  email: (c) => text(c.email),
  phone: (c) => text(c.phone),
  businessName: (c) => text(c.businessName),
  website: (c) => text(c.website),
  // The type's name: ids differ between projects, names are how the import finds it.
  contactType: (c) => text(c.contactType?.name),
  subscribed: (c) => String(c.subscribed),
  smsSubscribed: (c) => String(c.smsSubscribed),
  notes: (c) => text(c.notes),
  createdAt: (c) => c.createdAt,
  updatedAt: (c) => c.updatedAt,
  ...(Object.fromEntries(
    ADDRESS_FIELDS.map((f) => [f, (c: Contact) => text(c.address[f.slice("address.".length) as keyof Contact["address"]])]),
  ) as Record<AddressColumn, (c: Contact) => string>),
  tags: (c) => c.tags.map((t) => t.name).join(LIST_SEPARATOR),
};
const CONTACT_CELLS = EXPORT_COLUMNS.map((column) => CELLS[column]);

/**
 * A custom value as its cell: multiselect values joined by `; `, booleans true/false,
 * numbers as JSON writes them (what the importer's number pattern reads), strings as they
 * are, anything else as JSON text; no value is an empty cell.
 */
export function customCell(field: CustomField, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (field.type === "multiselect" && Array.isArray(value)) return value.map(String).join(LIST_SEPARATOR);
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  return JSON.stringify(value);
}

/** A contact as its CSV cells, in the header's order. */
export function csvCells(contact: Contact, fields: readonly CustomField[]): string[] {
  return [...CONTACT_CELLS.map((cell) => cell(contact)), ...fields.map((f) => customCell(f, contact.customFields[f.id]))];
}

const exact = (cell: string) => cell;

/**
 * The export as text chunks: for CSV the header, then one chunk per page; for JSON lines
 * one chunk per page, a contact per line. The consumer pulls (for await): nothing is read
 * ahead of it. Every CSV cell, the header's too (custom field titles), is neutralised
 * unless `raw`.
 */
export async function* exportContacts(db: Db, projectId: string, format: ExportFormat, options: ExportOptions = {}): AsyncGenerator<string> {
  const progress = options.progress ?? { contacts: 0 };
  let toChunk: (contacts: Contact[]) => string;
  if (format === "csv") {
    const fields = await exportedFields(db, projectId);
    const cell = options.raw ? exact : neutraliseFormula;
    yield csvRecord(csvHeader(fields).map(cell));
    toChunk = (contacts) => contacts.map((c) => csvRecord(csvCells(c, fields).map(cell))).join("");
  } else {
    // GET /contacts/{contactId} answers the same object plus duplicateSignal, serialised by JSON.stringify.
    toChunk = (contacts) => contacts.map((c) => `${JSON.stringify(c)}\n`).join("");
  }
  for await (const contacts of contactPages(db, projectId)) {
    progress.contacts += contacts.length;
    yield toChunk(contacts);
  }
}
