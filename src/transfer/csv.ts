/**
 * A small streaming CSV reader (RFC 4180) for `crm import` (docs/cli.md §4): quoted fields,
 * `""` inside quotes, commas and line breaks inside quotes, CRLF, LF or a lone CR between
 * records, a UTF-8 byte-order mark at the start. It holds one record at a time, and a
 * record is bounded (docs/api.md §7): at most `maxFields` fields (500) and `maxRecordBytes`
 * bytes of UTF-8 (1 MiB, its quotes and commas counted, its line break not). A record past
 * either bound is an error as soon as the bound is crossed, before the rest of it is read,
 * so a file of any shape is read in constant memory: a line of ten million commas would
 * otherwise be ten million strings.
 *
 * Leniencies, as most readers have them: a quote inside an unquoted field is kept as text;
 * text after a closing quote is appended to the field; empty lines are skipped. A quote
 * still open at the end of the input is an error.
 */
export class CsvError extends Error {
  /** `record` counts records of the file from 1, a header included. */
  constructor(readonly record: number, readonly reason: string) {
    super(`record ${record}: ${reason}`);
  }
}

const COMMA = 44;
const LF = 10;
const CR = 13;
const QUOTE = 34;
const BOM = 0xfeff;

/** Parser states; QuoteInQuoted: a quote seen inside a quoted field, either `""` or the closing one. */
const State = { FieldStart: 0, Unquoted: 1, Quoted: 2, QuoteInQuoted: 3 } as const;

/** The bounds of one record (docs/api.md §7). */
export const MAX_FIELDS = 500;
export const MAX_RECORD_BYTES = 1024 * 1024;

export interface CsvLimits {
  maxFields?: number;
  maxRecordBytes?: number;
}

export class CsvParser {
  private state: number = State.FieldStart;
  private field = "";
  private record: string[] = [];
  private recordQuoted = false;
  /** Size of the record so far: UTF-16 code units, delimiters among them, and UTF-8 bytes once counted. */
  private recordUnits = 0;
  private recordDelimiters = 0;
  private recordBytes: number | null = null;
  private atStart = true;
  private pendingCR = false;
  private records = 0;
  private readonly maxFields: number;
  private readonly maxRecordBytes: number;

  constructor(limits: CsvLimits = {}) {
    this.maxFields = limits.maxFields ?? MAX_FIELDS;
    this.maxRecordBytes = limits.maxRecordBytes ?? MAX_RECORD_BYTES;
  }

  /** The error that stopped the input, once the records completed before it were returned. */
  failure: CsvError | null = null;

  /**
   * Feeds decoded text; returns the records it completed. When the text breaks a bound, the
   * records completed before the bad one are still returned, `failure` says why it stopped,
   * and every later call throws that error.
   */
  push(text: string): string[][] {
    if (this.failure) throw this.failure;
    const out: string[][] = [];
    try {
      this.feed(text, out);
    } catch (error) {
      if (!(error instanceof CsvError)) throw error;
      this.failure = error;
    }
    return out;
  }

  private feed(text: string, out: string[][]): void {
    const n = text.length;
    let i = 0;
    if (this.atStart && n > 0) {
      this.atStart = false;
      if (text.charCodeAt(0) === BOM) i = 1;
    }
    if (this.pendingCR && i < n) {
      this.pendingCR = false;
      if (text.charCodeAt(i) === LF) i++;
    }
    while (i < n) {
      if (this.state === State.Quoted) {
        const q = text.indexOf('"', i);
        this.append(text.slice(i, q === -1 ? n : q));
        if (q === -1) break;
        this.count();
        i = q + 1;
        this.state = State.QuoteInQuoted;
        continue;
      }
      if (this.state === State.QuoteInQuoted) {
        if (text.charCodeAt(i) === QUOTE) {
          this.append('"');
          i++;
          this.state = State.Quoted;
        } else this.state = State.Unquoted;
        continue;
      }
      if (this.state === State.FieldStart && text.charCodeAt(i) === QUOTE) {
        this.count();
        this.state = State.Quoted;
        this.recordQuoted = true;
        i++;
        continue;
      }
      // Unquoted text up to the next comma or line break.
      let j = i;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c === COMMA || c === LF || c === CR) break;
        j++;
      }
      this.append(text.slice(i, j));
      if (j === n) {
        this.state = State.Unquoted;
        break;
      }
      const c = text.charCodeAt(j);
      i = j + 1;
      if (c === COMMA) this.count();
      this.endField();
      if (c === CR) {
        if (i < n) {
          if (text.charCodeAt(i) === LF) i++;
        } else this.pendingCR = true;
      }
      if (c !== COMMA) this.endRecord(out);
    }
  }

  /** Ends the input; returns the last record if the input did not end with a line break. */
  end(): string[][] {
    if (this.failure) throw this.failure;
    if (this.state === State.Quoted) throw new CsvError(this.records + 1, "a quoted field is not closed at the end of the file.");
    const out: string[][] = [];
    if (this.record.length > 0 || this.field !== "" || this.state !== State.FieldStart) {
      this.endField();
      this.endRecord(out);
    }
    return out;
  }

  private append(s: string) {
    if (s.length === 0) return;
    this.count(s);
    this.field += s;
  }

  /**
   * Adds `s` of a field, or one delimiter (a comma or a syntactic quote), to the record's
   * size; past the bound the record is refused before any more of it is kept. UTF-8 takes
   * at most 3 bytes per UTF-16 code unit, so bytes are counted exactly only once the record
   * has more than a third of the bound in code units: the common case costs an addition.
   */
  private count(s?: string) {
    if (s === undefined) this.recordDelimiters++;
    this.recordUnits += s === undefined ? 1 : s.length;
    if (this.recordBytes === null) {
      if (this.recordUnits * 3 <= this.maxRecordBytes) return;
      const fields = this.record.reduce((sum, f) => sum + utf8Length(f), utf8Length(this.field));
      this.recordBytes = this.recordDelimiters + fields + (s === undefined ? 0 : utf8Length(s));
    } else this.recordBytes += s === undefined ? 1 : utf8Length(s);
    if (this.recordBytes > this.maxRecordBytes) {
      const hint = this.state === State.Quoted ? " (is a quote left open?)" : "";
      throw new CsvError(this.records + 1, `a record is larger than ${this.maxRecordBytes} bytes${hint}.`);
    }
  }

  private endField() {
    if (this.record.length >= this.maxFields) {
      throw new CsvError(this.records + 1, `a record has more than ${this.maxFields} fields.`);
    }
    this.record.push(this.field);
    this.field = "";
    this.state = State.FieldStart;
  }

  private endRecord(out: string[][]) {
    const empty = this.record.length === 1 && this.record[0] === "" && !this.recordQuoted;
    if (!empty) {
      out.push(this.record);
      this.records++;
    }
    this.record = [];
    this.recordQuoted = false;
    this.recordUnits = 0;
    this.recordDelimiters = 0;
    this.recordBytes = null;
  }
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Bytes of `s` in UTF-8: one per ASCII code unit, two up to U+07FF, four per surrogate pair, else three. */
function utf8Length(s: string): number {
  if (!NON_ASCII.test(s)) return s.length;
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    bytes += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return bytes;
}

/** Parses a stream of UTF-8 byte (or text) chunks into records, one at a time. */
export async function* parseCsv(source: AsyncIterable<Uint8Array | string>, limits?: CsvLimits): AsyncGenerator<string[]> {
  const parser = new CsvParser(limits);
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of source) {
    yield* parser.push(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    // The records before a bad one are yielded first, so the caller keeps them (crm import imports them).
    if (parser.failure) throw parser.failure;
  }
  yield* parser.push(decoder.decode());
  yield* parser.end();
}

/**
 * A cell must be quoted (RFC 4180) when it holds a comma, a quote or a line break, and also
 * when it starts or ends with white space, which some readers trim from unquoted cells.
 */
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/**
 * One cell as `crm export` writes it (docs/import-export.md §2): as is, or quoted with its quotes
 * doubled. Nothing else is changed here: formulas are neutralised before, by the exporter
 * (src/transfer/spreadsheet.ts, docs/security.md §1), unless `--raw` asks for exact cells.
 */
export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * One record, its cells quoted as needed, ended by CRLF (RFC 4180; the parser above reads it
 * back). A record of one empty cell is written `""`: a bare empty line is skipped on reading.
 */
export function csvRecord(cells: readonly string[]): string {
  if (cells.length === 1 && cells[0] === "") return '""\r\n';
  let line = "";
  for (let i = 0; i < cells.length; i++) line += (i === 0 ? "" : ",") + csvField(cells[i]!);
  return `${line}\r\n`;
}
