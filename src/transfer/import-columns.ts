import {
  ADDRESS_FIELDS, BOOLEAN_FIELDS, CONTACT_TYPE_ALIASES, CONTACT_TYPE_FIELD, ERROR_COLUMN, FALLBACK_ALIASES, FIELD_ALIASES,
  FULL_NAME_ALIASES, normalizeHeader, READ_ONLY_FIELDS, TEXT_FIELDS,
} from "./csv-columns.ts";
import type { CustomField } from "../reference/custom-fields.ts";

/**
 * Which field each CSV column fills (docs/import-export.md §1): the header matching shared by
 * `crm import` and the console's import (src/transfer/import.ts), and by the console's
 * preview of an upload (src/admin/pages/import-preview.tsx).
 */

/** Where one CSV column goes in the create body of docs/api.md §11. */
export type Column =
  | { kind: "text"; name: string }
  | { kind: "boolean"; name: string }
  | { kind: "address"; key: string }
  | { kind: "tags" }
  | { kind: "contactType" }
  /** A whole name, split into firstName and lastName (docs/import-export.md §1.2). */
  | { kind: "fullName" }
  | { kind: "custom"; field: CustomField };

/** Why a column is read but not imported. */
export const SKIP_REASONS = {
  readOnly: "set by the service",
  unknown: "no field matches",
  chosen: "skipped as asked",
  taken: "another column fills the field",
  error: "a rejected row's reason",
} as const;
export type SkipReason = keyof typeof SKIP_REASONS;

/** One column of the file and what the import does with it. */
export interface ColumnMatch {
  /** The header as written. */
  header: string;
  /** The field it fills; null when skipped (or still unknown). */
  column: Column | null;
  skipped?: SkipReason;
  /** An unknown column: the field its header is closest to (for the message). */
  closest?: string;
  /**
   * Matched by a second-choice header (docs/import-export.md §1.2): read in a row only where the
   * columns filling the same field left it empty, lower numbers first.
   */
  fallback?: number;
  /** Matched by a lifecycle-like header: the console offers the contact type for it (and "skip" for the others). */
  lifecycle?: boolean;
}

export interface ColumnChoices {
  /** `--map "Header=field,…"`: the header matched as normalizeHeader does; an empty field skips the column. */
  map?: ReadonlyArray<{ header: string; field: string }>;
  /** Fields chosen per column index (the console's preview): a field name, or "" to skip the column. */
  chosen?: ReadonlyMap<number, string>;
  /** `--ignore-unknown`: an unknown column is skipped instead of refusing the file. */
  ignoreUnknown?: boolean;
}

export interface HeaderPlan {
  matches: ColumnMatch[];
  /** Columns no field matches and nothing chose (refused unless ignored). */
  unknown: number[];
  /** Everything else that stops the import: a bad --map entry or choice, a repeated field. */
  problems: string[];
}

/** The field a column fills, as the summary and --map name it: `email`, `address.city`, `customFields.<id>`. */
export const fieldOf = (c: Column) =>
  c.kind === "custom" ? `customFields.${c.field.id}` : c.kind === "address" ? `address.${c.key}` : "name" in c ? c.name : c.kind;

/** Two columns filling the same thing: contactType (by name) and contactTypeId both set the contact type. */
export const targetOf = (c: Column) => (c.kind === "text" && c.name === "contactTypeId" ? CONTACT_TYPE_FIELD : fieldOf(c));

const entry = (name: string, column: Column): [string, Column] => [normalizeHeader(name), column];
/** Contact field names, normalized (step c of docs/import-export.md §1's matching). */
const CONTACT_FIELDS = new Map<string, Column>([
  ...TEXT_FIELDS.map((name) => entry(name, { kind: "text", name })),
  ...BOOLEAN_FIELDS.map((name) => entry(name, { kind: "boolean", name })),
  ...ADDRESS_FIELDS.map((name) => entry(name, { kind: "address", key: name.slice("address.".length) })),
  entry("tags", { kind: "tags" }),
  entry(CONTACT_TYPE_FIELD, { kind: "contactType" }),
]);
const READ_ONLY = new Set<string>(READ_ONLY_FIELDS.map(normalizeHeader));

/** How an alias's column stands beside another filling the same field (docs/import-export.md §1.2). */
interface Alias {
  column: Column;
  /** "fallback": read where the other left the field empty; "exclusive": skipped; ranked among its kind. */
  yields?: { how: "fallback" | "exclusive"; rank: number };
}
/** Other CRMs' headers (step e), normalized, to their field. */
const ALIASES = new Map<string, Alias>([
  ...Object.entries(FIELD_ALIASES).flatMap(([field, aliases]) => aliases.map((a): [string, Alias] => [normalizeHeader(a), { column: CONTACT_FIELDS.get(normalizeHeader(field))! }])),
  ...Object.entries(FALLBACK_ALIASES).flatMap(([field, aliases]) =>
    aliases.map((a, rank): [string, Alias] => [normalizeHeader(a), { column: CONTACT_FIELDS.get(normalizeHeader(field))!, yields: { how: "fallback", rank } }]),
  ),
  ...CONTACT_TYPE_ALIASES.map((a, rank): [string, Alias] => [normalizeHeader(a), { column: { kind: "contactType" }, yields: { how: "exclusive", rank } }]),
  ...FULL_NAME_ALIASES.map((a, rank): [string, Alias] => [normalizeHeader(a), { column: { kind: "fullName" }, yields: { how: "exclusive", rank } }]),
]);
const ERROR = normalizeHeader(ERROR_COLUMN);

/** Custom fields by id, by title in lower case, and by normalized title (the first of equals wins). */
function customIndex(fields: readonly CustomField[]) {
  const put = (map: Map<string, CustomField>, key: string, f: CustomField) => map.has(key) || map.set(key, f);
  const byId = new Map<string, CustomField>(), byLower = new Map<string, CustomField>(), byNormal = new Map<string, CustomField>();
  for (const f of fields) {
    put(byId, f.id, f);
    put(byLower, f.title.toLowerCase(), f);
    put(byNormal, normalizeHeader(f.title), f);
  }
  return (name: string) => byId.get(name) ?? byLower.get(name.toLowerCase()) ?? byNormal.get(normalizeHeader(name));
}
type CustomLookup = ReturnType<typeof customIndex>;

/**
 * A header or a --map field name to its column, in the order of docs/import-export.md §1 (this
 * issue's brief): `customFields.<id or title>`, a contact field name, a custom field by id
 * or title, an alias. "readOnly" for the columns an export writes and the service sets.
 */
function matchName(raw: string, custom: CustomLookup): Alias | "readOnly" | "error" | null {
  const name = raw.trim();
  if (/^customfields\./i.test(name)) {
    const field = custom(name.slice("customFields.".length));
    return field ? { column: { kind: "custom", field } } : null;
  }
  const normal = normalizeHeader(name);
  if (normal === "") return null;
  if (READ_ONLY.has(normal)) return "readOnly";
  if (normal === ERROR) return "error";
  const contact = CONTACT_FIELDS.get(normal);
  if (contact) return { column: contact };
  const field = custom(name);
  return field ? { column: { kind: "custom", field } } : ALIASES.get(normal) ?? null;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The field a header is closest to (the smallest edit distance between normalized
 * spellings), among field names, aliases (reported as their field) and custom field titles.
 */
export function closestField(header: string, fields: readonly CustomField[]): string {
  const candidates: Array<[spelling: string, name: string]> = [
    ...[...TEXT_FIELDS, ...BOOLEAN_FIELDS, ...ADDRESS_FIELDS, "tags", CONTACT_TYPE_FIELD].map((f): [string, string] => [f, f]),
    ...Object.entries(FIELD_ALIASES).flatMap(([f, aliases]) => aliases.map((a): [string, string] => [a, f])),
    ...Object.entries(FALLBACK_ALIASES).flatMap(([f, aliases]) => aliases.map((a): [string, string] => [a, f])),
    ...CONTACT_TYPE_ALIASES.map((a): [string, string] => [a, CONTACT_TYPE_FIELD]),
    ...fields.map((f): [string, string] => [f.title, f.title]),
  ];
  const normal = normalizeHeader(header);
  let best = candidates[0]![1];
  let bestDistance = Infinity;
  for (const [spelling, name] of candidates) {
    const d = editDistance(normal, normalizeHeader(spelling));
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

/**
 * A header row (or a --map) the importer refuses, naming every problem: the CLI answers it
 * as a usage error (exit 2), the console shows its message.
 */
export class ColumnPlanError extends Error {}

/** `"Header=field,Other=field"` → entries; the header is before the last `=` (headers may hold one, field names do not). */
export function parseMapOption(value: string | undefined): Array<{ header: string; field: string }> {
  if (value === undefined) return [];
  return value
    .split(",")
    .filter((part) => part.trim() !== "")
    .map((part) => {
      const at = part.lastIndexOf("=");
      if (at <= 0 || part.slice(0, at).trim() === "") throw new ColumnPlanError(`--map entry "${part.trim()}" is not Header=field (e.g. --map "Lead Status=notes")`);
      return { header: part.slice(0, at).trim(), field: part.slice(at + 1).trim() };
    });
}

/** Names the column for messages: its header, or its position when it has none. */
export const columnName = (match: ColumnMatch, index: number) => (match.header.trim() === "" ? `column ${index + 1} (no name)` : `"${match.header}"`);

/**
 * Maps the header row to fields (docs/import-export.md §1), never throwing: a chosen field (the
 * console), else a --map entry, else the header's own match; read-only columns skipped;
 * what is unknown or wrong is returned for the caller to refuse or show.
 */
export function planColumns(header: readonly string[], fields: readonly CustomField[], choices: ColumnChoices = {}): HeaderPlan {
  const custom = customIndex(fields);
  const problems: string[] = [];
  const resolve = (field: string, what: string): Column | "chosen" | undefined => {
    if (field === "") return "chosen";
    const found = matchName(field, custom);
    if (found === "readOnly") problems.push(`${what}: ${field.trim()} is set by the service, not imported`);
    else if (!found || found === "error") problems.push(`${what}: no field "${field}" (closest field: ${closestField(field, fields)})`);
    else return found.column;
    return undefined;
  };
  const mapped = new Map<string, string>();
  for (const { header: h, field } of choices.map ?? []) {
    const key = normalizeHeader(h);
    if (mapped.has(key)) problems.push(`--map names the column "${h}" twice`);
    else if (!header.some((name) => normalizeHeader(name) === key)) problems.push(`--map names "${h}", which is not a column of the file`);
    mapped.set(key, field);
  }
  const unknown: number[] = [];
  const yields = new Map<number, NonNullable<Alias["yields"]>>();
  const matches = header.map((name, i): ColumnMatch => {
    const chosen = choices.chosen?.get(i) ?? mapped.get(normalizeHeader(name));
    if (chosen !== undefined) {
      const found = resolve(chosen, choices.chosen?.has(i) ? `column ${columnName({ header: name, column: null }, i)}` : `--map "${name}=${chosen}"`);
      if (found === "chosen") return { header: name, column: null, skipped: found };
      if (found) return { header: name, column: found };
      return { header: name, column: null, closest: name.trim() === "" ? undefined : closestField(name, fields) };
    }
    const found = matchName(name, custom);
    if (found === "readOnly" || found === "error") return { header: name, column: null, skipped: found };
    if (found) {
      if (found.yields) yields.set(i, found.yields);
      return { header: name, column: found.column, ...(found.column.kind === "contactType" && found.yields ? { lifecycle: true } : {}) };
    }
    unknown.push(i);
    const closest = name.trim() === "" ? undefined : closestField(name, fields);
    return { header: name, column: null, ...(choices.ignoreUnknown ? { skipped: "unknown" as const } : {}), closest };
  });
  settleShared(matches, yields, problems);
  return { matches, unknown: choices.ignoreUnknown ? [] : unknown, problems };
}

/**
 * Columns filling one field (docs/import-export.md §1.2): two matched by name, a --map or a choice
 * are a problem naming both; a second-choice header gives way to them (a fallback is read
 * where they left the field empty, an exclusive one is skipped). A whole-name column gives
 * way to any firstName or lastName column.
 */
function settleShared(matches: ColumnMatch[], yields: Map<number, NonNullable<Alias["yields"]>>, problems: string[]) {
  const byTarget = new Map<string, number[]>();
  matches.forEach((m, i) => {
    if (!m.column) return;
    const target = targetOf(m.column);
    byTarget.set(target, [...(byTarget.get(target) ?? []), i]);
  });
  const skip = (i: number) => Object.assign(matches[i]!, { column: null, skipped: "taken" as const });
  if (byTarget.has("firstName") || byTarget.has("lastName")) for (const i of byTarget.get("fullName") ?? []) if (yields.has(i)) skip(i);
  for (const [target, columns] of byTarget) {
    const strong = columns.filter((i) => !yields.has(i));
    const weak = columns.filter((i) => yields.has(i) && matches[i]!.column).sort((a, b) => yields.get(a)!.rank - yields.get(b)!.rank || a - b);
    const first = strong[0] ?? weak.shift();
    for (const i of strong.slice(1)) {
      const m = matches[i]!;
      const what = m.column!.kind === "custom" ? `the custom field "${m.column!.field.title}"` : target === CONTACT_TYPE_FIELD ? "the contact type" : target;
      problems.push(`columns ${columnName(matches[first!]!, first!)} and ${columnName(m, i)} both set ${what}`);
    }
    weak.forEach((i, n) => (yields.get(i)!.how === "fallback" ? (matches[i]!.fallback = n) : skip(i)));
  }
}

/**
 * The header row's plan, or a ColumnPlanError naming every problem, raised before
 * anything is imported: each unknown column with its closest field and the two ways out.
 */
export function mapHeader(header: readonly string[], fields: readonly CustomField[], choices: ColumnChoices = {}): HeaderPlan {
  const plan = planColumns(header, fields, choices);
  const lines = [...plan.problems];
  if (plan.unknown.length > 0) {
    const named = plan.unknown.map((i) => {
      const m = plan.matches[i]!;
      return m.closest ? `${columnName(m, i)} (closest field: ${m.closest})` : columnName(m, i);
    });
    const headers = plan.unknown.map((i) => plan.matches[i]!.header.trim()).filter(Boolean);
    const them = named.length > 1 ? "them" : "it";
    const mapHint = headers.length ? `Name the field with --map "${headers.map((h) => `${h}=field`).join(",")}", or skip ${them}` : `Skip ${them}`;
    lines.push(
      `unknown column${named.length > 1 ? "s" : ""} ${named.join(", ")}. ${mapHint} with --ignore-unknown ` +
        `(headers may be field names, their aliases or custom field titles: docs/import-export.md)`,
    );
  }
  if (lines.length > 0) throw new ColumnPlanError(lines.join(".\n") + ".");
  return plan;
}
