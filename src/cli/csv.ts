/**
 * A small streaming CSV reader (RFC 4180) for `crm import` (decisions §3): quoted fields,
 * `""` inside quotes, commas and line breaks inside quotes, CRLF, LF or a lone CR between
 * records, a UTF-8 byte-order mark at the start. It holds one record at a time, so a file
 * of any length is read in constant memory; a field longer than `maxFieldLength` (an
 * unclosed quote swallowing the file, say) is an error rather than unbounded growth.
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

export class CsvParser {
  private state: number = State.FieldStart;
  private field = "";
  private record: string[] = [];
  private recordQuoted = false;
  private atStart = true;
  private pendingCR = false;
  private records = 0;

  constructor(private readonly maxFieldLength = 1024 * 1024) {}

  /** Feeds decoded text; returns the records it completed. */
  push(text: string): string[][] {
    const out: string[][] = [];
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
      this.endField();
      if (c === CR) {
        if (i < n) {
          if (text.charCodeAt(i) === LF) i++;
        } else this.pendingCR = true;
      }
      if (c !== COMMA) this.endRecord(out);
    }
    return out;
  }

  /** Ends the input; returns the last record if the input did not end with a line break. */
  end(): string[][] {
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
    this.field += s;
    if (this.field.length > this.maxFieldLength) {
      throw new CsvError(this.records + 1, `a field is longer than ${this.maxFieldLength} characters (is a quote left open?).`);
    }
  }

  private endField() {
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
  }
}

/** Parses a stream of UTF-8 byte (or text) chunks into records, one at a time. */
export async function* parseCsv(source: AsyncIterable<Uint8Array | string>, maxFieldLength?: number): AsyncGenerator<string[]> {
  const parser = new CsvParser(maxFieldLength);
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of source) {
    yield* parser.push(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode());
  yield* parser.end();
}
