import { csvRecord } from "./csv.ts";
import { ERROR_COLUMN } from "./csv-columns.ts";
import { neutraliseFormula, unneutraliseFormula } from "./spreadsheet.ts";

/**
 * The rejected rows of an import as a CSV that imports again once fixed (docs/import-export.md
 * §1.11): the file's header and each rejected row's own cells, in row order, with a last column
 * `error` holding the reason (the importer skips a column so named). Bounded: the first
 * `maxRows` rows added, and at most `maxBytes` of text; past either only the count grows.
 *
 * Each cell is written as the importer read it and then guarded against spreadsheet formulas
 * (docs/security.md §8): `neutralise(unneutralise(cell))`, which the importer reads back to the
 * very value the first import read, and which a spreadsheet shows as text.
 */
export class RejectedRows {
  private head: string | null = null;
  private rows: Array<{ row: number; line: string }> = [];
  private bytes = 0;
  /** Rejected rows added, kept or not. */
  count = 0;

  constructor(
    readonly maxRows = 1_000,
    readonly maxBytes = 2 * 1024 * 1024,
  ) {}

  header(cells: readonly string[]) {
    this.head = line([...cells, ERROR_COLUMN]);
    this.bytes = this.head.length;
  }

  add(row: number, cells: readonly string[], reason: string) {
    this.count++;
    if (this.head === null || this.rows.length >= this.maxRows) return;
    const text = line([...cells, reason]);
    if (this.bytes + text.length > this.maxBytes) return;
    this.bytes += text.length;
    this.rows.push({ row, line: text });
  }

  /** Rows kept (at most maxRows). */
  get kept() {
    return this.rows.length;
  }

  /** The CSV (CRLF line ends, as crm export writes), or null when no row was rejected. */
  csv(): string | null {
    if (this.head === null || this.rows.length === 0) return null;
    return this.head + this.rows.sort((a, b) => a.row - b.row).map((r) => r.line).join("");
  }
}

const line = (cells: readonly string[]) => csvRecord(cells.map((cell) => neutraliseFormula(unneutraliseFormula(cell))));
