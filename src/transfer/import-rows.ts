import { CreateContactBody, type ContactInput } from "../contacts/schemas.ts";
import { unneutraliseFormula } from "./spreadsheet.ts";
import { normalizeHeader } from "./csv-columns.ts";
import { validationFailure } from "../http/validation.ts";
import type { CustomField } from "../reference/custom-fields.ts";
import type { ColumnMatch } from "./import-columns.ts";

/**
 * One CSV record → the body POST /v1/contacts takes (docs/api.md §11, docs/import-export.md §1), for `crm import`
 * and the console's import (src/transfer/import.ts). The columns come from the header's
 * plan (src/transfer/import-columns.ts).
 */

const TRUE = new Set(["true", "1", "yes"]);
const FALSE = new Set(["false", "0", "no"]);

/** true/false/1/0/yes/no (any case); anything else is passed on for the schema to refuse. */
function toBoolean(cell: string): unknown {
  const v = cell.trim().toLowerCase();
  return TRUE.has(v) ? true : FALSE.has(v) ? false : cell;
}

/**
 * `a; b|c ::: d` → ["a", "b", "c", "d"]: tags and multiselect values. An export joins them
 * with `; `; Google Contacts joins its labels with ` ::: `.
 */
const toList = (cell: string) => cell.split(/[;|]|:::/).map((s) => s.trim()).filter(Boolean);

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A cell as the JSON value its custom field takes (docs/api.md §11); a misfit stays a string and is refused. */
function customValue(field: CustomField, cell: string): unknown {
  if (field.type === "number") return NUMBER.test(cell.trim()) ? Number(cell) : cell;
  if (field.type === "checkbox") return toBoolean(cell);
  if (field.type === "multiselect") return toList(cell);
  return cell;
}

/**
 * The project's contact types by name, for a `contactType` column (an export writes the
 * name: ids differ between projects). Loaded once per import. Names match ignoring case,
 * then ignoring spaces, `_`, `-` and `.` too ("Marketing Qualified Lead" finds a type named
 * "marketingqualifiedlead"); of types named alike, one named exactly so wins, else the first
 * given (the oldest).
 */
export interface ContactTypeNames {
  resolve(cell: string): string | undefined;
  /** The names, for the message of a row whose type is none of them. */
  names: string[];
}

export function contactTypeNames(types: ReadonlyArray<{ id: string; name: string }>): ContactTypeNames {
  const exact = new Map<string, string>();
  const folded = new Map<string, string>();
  const loose = new Map<string, string>();
  const ids = new Set<string>();
  for (const t of types) {
    if (!exact.has(t.name)) exact.set(t.name, t.id);
    if (!folded.has(t.name.toLowerCase())) folded.set(t.name.toLowerCase(), t.id);
    if (!loose.has(normalizeHeader(t.name))) loose.set(normalizeHeader(t.name), t.id);
    ids.add(t.id);
  }
  return {
    // An id is taken too: a file written by hand may carry one.
    resolve: (cell) => exact.get(cell) ?? folded.get(cell.toLowerCase()) ?? (ids.has(cell) ? cell : undefined) ?? loose.get(normalizeHeader(cell)),
    names: [...new Set(types.map((t) => t.name))],
  };
}

const NO_TYPES: ContactTypeNames = { resolve: () => undefined, names: [] };

/** Names the column and its cell: `Lifecycle Stage "evangelist" is not a contact type of the project (its types: …).` */
function unknownType(header: string, cell: string, types: ContactTypeNames): string {
  const shown = types.names.slice(0, 10).join(", ") + (types.names.length > 10 ? ", …" : "");
  return `${header.trim() || "contactType"} "${cell}" is not a contact type of the project${types.names.length ? ` (its types: ${shown})` : " (it has none)"}.`;
}

/** A record whose every cell is empty or blank (an empty line too): skipped, not a rejection (docs/import-export.md §1.1). */
export function isBlankRecord(record: readonly string[]): boolean {
  for (const cell of record) if (cell.length > 0 && cell.trim() !== "") return false;
  return true;
}

/** The columns read only where others left their field empty, in the order they are read (computed once per plan). */
const fallbackOrder = new WeakMap<readonly ColumnMatch[], number[]>();
function fallbacksOf(columns: readonly ColumnMatch[]): number[] {
  let order = fallbackOrder.get(columns);
  if (!order) {
    order = columns.flatMap((m, k) => (m.fallback !== undefined && m.column ? [k] : [])).sort((a, b) => columns[a]!.fallback! - columns[b]!.fallback! || a - b);
    fallbackOrder.set(columns, order);
  }
  return order;
}

type Body = Record<string, unknown> & { address?: Record<string, string>; customFields?: Record<string, unknown> };

/** `Ada King Lovelace` → firstName `Ada`, lastName `King Lovelace`; one word is a firstName. */
function splitName(body: Body, cell: string) {
  const name = cell.trim();
  const space = name.search(/\s/);
  body.firstName = space < 0 ? name : name.slice(0, space);
  if (space >= 0) body.lastName = name.slice(space).trim();
}

export type RowResult = { ok: true; input: ContactInput } | { ok: false; reason: string; fieldName?: string };

/**
 * One record → a create body, checked by the API's own schema. Empty (or blank) cells
 * mean "not given"; skipped columns are not read. A cell's leading `'` before `=`, `+`,
 * `-`, `@`, tab or CR is taken off first (docs/security.md §1): it is what `crm export` adds to
 * keep spreadsheets from running formulas, so an export re-imports to the same contacts.
 */
export function buildRow(columns: readonly ColumnMatch[], record: readonly string[], types: ContactTypeNames = NO_TYPES): RowResult {
  if (record.length !== columns.length) {
    return { ok: false, reason: `the row has ${record.length} fields, the header ${columns.length}.` };
  }
  const body: Body = {};
  let fallbacks = false;
  for (let k = 0; k < columns.length; k++) {
    const column = columns[k]!.column;
    if (columns[k]!.fallback !== undefined) {
      fallbacks = true;
      continue;
    }
    const cell = unneutraliseFormula(record[k]!);
    if (!column || cell.trim() === "") continue;
    if (column.kind === "text") body[column.name] = cell;
    else if (column.kind === "fullName") splitName(body, cell);
    else if (column.kind === "boolean") body[column.name] = toBoolean(cell);
    else if (column.kind === "address") (body.address ??= {})[column.key] = cell;
    else if (column.kind === "tags") body.tags = toList(cell);
    else if (column.kind === "custom") (body.customFields ??= {})[column.field.id] = customValue(column.field, cell);
    else {
      const id = types.resolve(cell.trim());
      if (id === undefined) return { ok: false, reason: unknownType(columns[k]!.header, cell.trim(), types), fieldName: "contactType" };
      body.contactTypeId = id;
    }
  }
  // Second-choice columns (text and address fields only) fill what the others left empty.
  if (fallbacks) {
    for (const k of fallbacksOf(columns)) {
      const column = columns[k]!.column!;
      const cell = unneutraliseFormula(record[k]!);
      if (cell.trim() === "") continue;
      if (column.kind === "text") body[column.name] ??= cell;
      else if (column.kind === "address") (body.address ??= {})[column.key] ??= cell;
    }
  }
  const parsed = CreateContactBody.safeParse(body);
  if (parsed.success) return { ok: true, input: parsed.data };
  const error = validationFailure(parsed.error);
  return { ok: false, reason: error.message, fieldName: error.fieldName };
}
