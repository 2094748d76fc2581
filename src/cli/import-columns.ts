import { ADDRESS_KEYS, CreateContactBody, type ContactInput } from "../contacts/schemas.ts";
import { validationFailure } from "../http/validation.ts";
import type { CustomField } from "../reference/custom-fields.ts";
import { UsageError } from "./args.ts";

/** Where one CSV column goes in the create body of interface §4.2. */
type Column =
  | { kind: "text"; name: string }
  | { kind: "boolean"; name: string }
  | { kind: "address"; key: string }
  | { kind: "tags" }
  | { kind: "custom"; field: CustomField };

const TEXT_FIELDS = [
  "firstName", "lastName", "email", "phone", "businessName", "website", "notes",
  "source", "identityType", "contactTypeId",
];
const BOOLEAN_FIELDS = ["subscribed", "smsSubscribed"];

/** Contact field names, matched case-insensitively; `customFields.<id or title>` forces a custom field. */
const CONTACT_COLUMNS = new Map<string, Column>([
  ...TEXT_FIELDS.map((name): [string, Column] => [name.toLowerCase(), { kind: "text", name }]),
  ...BOOLEAN_FIELDS.map((name): [string, Column] => [name.toLowerCase(), { kind: "boolean", name }]),
  ...ADDRESS_KEYS.map((key): [string, Column] => [`address.${key}`, { kind: "address", key }]),
  ["tags", { kind: "tags" }],
]);

const targetOf = (c: Column) =>
  c.kind === "custom" ? `customFields.${c.field.id}` : c.kind === "address" ? `address.${c.key}` : c.kind === "tags" ? "tags" : c.name;

/**
 * Maps the header row to contact fields (decisions §3: `crm import`): contact field names
 * case-insensitively, then custom fields by id or exact title. An unknown, empty or
 * repeated column is a usage error, raised before anything is imported.
 */
export function mapHeader(header: string[], fields: CustomField[]): Column[] {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const byTitle = new Map(fields.map((f) => [f.title, f]));
  const problems: string[] = [];
  const seen = new Set<string>();
  const columns = header.map((raw, i): Column => {
    const name = raw.trim();
    const customKey = /^customfields\./i.test(name) ? name.slice("customFields.".length) : null;
    const field = byId.get(customKey ?? name) ?? byTitle.get(customKey ?? name);
    const column = (customKey === null ? CONTACT_COLUMNS.get(name.toLowerCase()) : undefined) ?? (field && { kind: "custom", field });
    if (!column) {
      problems.push(name === "" ? `column ${i + 1} has no name` : `unknown column "${name}"`);
      return { kind: "tags" };
    }
    const target = targetOf(column);
    if (seen.has(target)) problems.push(`column "${name}" repeats ${target}`);
    seen.add(target);
    return column;
  });
  if (problems.length) {
    throw new UsageError(
      `${problems.join("; ")}.\nColumns are contact fields (${[...TEXT_FIELDS, ...BOOLEAN_FIELDS].join(", ")}, ` +
        `address.line1…address.country, tags) or custom fields by id or exact title.`,
    );
  }
  return columns;
}

const TRUE = new Set(["true", "1", "yes"]);
const FALSE = new Set(["false", "0", "no"]);

/** true/false/1/0/yes/no (any case); anything else is passed on for the schema to refuse. */
function toBoolean(cell: string): unknown {
  const v = cell.trim().toLowerCase();
  return TRUE.has(v) ? true : FALSE.has(v) ? false : cell;
}

/** `a; b|c` → ["a", "b", "c"]: tags and multiselect values. */
const toList = (cell: string) => cell.split(/[;|]/).map((s) => s.trim()).filter(Boolean);

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A cell as the JSON value its custom field takes (decisions §5); a misfit stays a string and is refused. */
function customValue(field: CustomField, cell: string): unknown {
  if (field.type === "number") return NUMBER.test(cell.trim()) ? Number(cell) : cell;
  if (field.type === "checkbox") return toBoolean(cell);
  if (field.type === "multiselect") return toList(cell);
  return cell;
}

export type RowResult = { ok: true; input: ContactInput } | { ok: false; reason: string; fieldName?: string };

/**
 * One CSV record → the body POST /v1/contacts takes, checked by the same zod schema.
 * Empty (or blank) cells mean "not given".
 */
export function buildRow(columns: Column[], record: string[]): RowResult {
  if (record.length !== columns.length) {
    return { ok: false, reason: `the row has ${record.length} fields, the header ${columns.length}.` };
  }
  const body: Record<string, unknown> & { address?: Record<string, string>; customFields?: Record<string, unknown> } = {};
  for (let k = 0; k < columns.length; k++) {
    const cell = record[k]!;
    if (cell.trim() === "") continue;
    const column = columns[k]!;
    if (column.kind === "text") body[column.name] = cell;
    else if (column.kind === "boolean") body[column.name] = toBoolean(cell);
    else if (column.kind === "address") (body.address ??= {})[column.key] = cell;
    else if (column.kind === "tags") body.tags = toList(cell);
    else (body.customFields ??= {})[column.field.id] = customValue(column.field, cell);
  }
  const parsed = CreateContactBody.safeParse(body);
  if (parsed.success) return { ok: true, input: parsed.data };
  const error = validationFailure(parsed.error);
  return { ok: false, reason: error.message, fieldName: error.fieldName };
}
