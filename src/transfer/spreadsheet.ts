/**
 * Spreadsheet formulas in CSV cells (docs/security.md §8 "Spreadsheet
 * formulas in CSV exports", docs/import-export.md "Spreadsheets: formulas in cells").
 *
 * Contact data comes from other people (web forms, integrations): a cell such as
 * `=HYPERLINK("https://…")` would be run by a spreadsheet that opens the export. A leading
 * `'` makes a spreadsheet take the cell as text, so the export prefixes one to every cell
 * that starts with a trigger (`=`, `+`, `-`, `@`, tab, carriage return), and the importer
 * takes it off again, so an exported file re-imports to the same contacts.
 *
 * One step beyond the spec's wording keeps the round trip exact for every string: a value
 * that already starts with quotes before a trigger (`'=x`, stored as such) gets one more
 * (`''=x`), and the importer removes one `'` from any run of quotes that a trigger follows.
 * So `unneutralise(neutralise(s)) === s` whatever `s` is, and `'hello` stays `'hello`.
 */

/** The characters a spreadsheet may read as the start of a formula (docs/security.md §8). */
export const FORMULA_TRIGGERS = ["=", "+", "-", "@", "\t", "\r"] as const;

/** Quotes (none or more) then a trigger: the cells the export prefixes. */
const NEEDS_PREFIX = /^'*[=+\-@\t\r]/;
/** At least one quote then a trigger: the cells the importer takes one quote from. */
const PREFIXED = /^'+[=+\-@\t\r]/;

const QUOTE = 39;

/**
 * A cell as the CSV export writes it by default: with a leading `'` when a spreadsheet
 * could read it as a formula, else unchanged. The first character is checked before the
 * pattern: most cells are letters or digits and cost one comparison.
 */
export function neutraliseFormula(cell: string): string {
  const c = cell.charCodeAt(0);
  if (c > 64 && c !== QUOTE) return cell; // past `@`: letters, most of Unicode
  return NEEDS_PREFIX.test(cell) ? `'${cell}` : cell;
}

/**
 * A cell as the importer reads it: a leading `'` removed only where a trigger (or more
 * quotes and then a trigger) follows it, so `'+1 415 555 0100` → `+1 415 555 0100`,
 * `'-0.5` → `-0.5`, and `'hello` stays `'hello`.
 */
export function unneutraliseFormula(cell: string): string {
  return cell.charCodeAt(0) === QUOTE && PREFIXED.test(cell) ? cell.slice(1) : cell;
}
