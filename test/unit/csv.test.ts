import { describe, expect, test } from "bun:test";
import { CsvError, CsvParser, MAX_FIELDS, MAX_RECORD_BYTES, parseCsv } from "../../src/transfer/csv.ts";
import { chunksOf, parse } from "../helpers/csv.ts";

const cases: Array<{ name: string; input: string; expected: string[][] }> = [
  { name: "plain LF", input: "a,b\n1,2\n", expected: [["a", "b"], ["1", "2"]] },
  { name: "CRLF, no final break", input: "a,b\r\n1,2", expected: [["a", "b"], ["1", "2"]] },
  { name: "lone CR", input: "a,b\r1,2\r", expected: [["a", "b"], ["1", "2"]] },
  { name: "empty fields", input: ",a,\n,,\n", expected: [["", "a", ""], ["", "", ""]] },
  { name: "quoted comma", input: '"x,y",z\n', expected: [["x,y", "z"]] },
  { name: "escaped quotes", input: '"say ""hi""",""""\n', expected: [['say "hi"', '"']] },
  { name: "newlines inside quotes", input: '"line1\r\nline2\nline3",b\r\n', expected: [["line1\r\nline2\nline3", "b"]] },
  { name: "empty quoted field", input: '"",x\n""\n', expected: [["", "x"], [""]] },
  { name: "BOM stripped", input: "\uFEFFname,email\nAda,a@x.io\n", expected: [["name", "email"], ["Ada", "a@x.io"]] },
  { name: "empty lines skipped", input: "a\n\n\r\nb\n\n", expected: [["a"], ["b"]] },
  { name: "quote inside unquoted kept", input: 'ab"c,d\n', expected: [['ab"c', "d"]] },
  { name: "text after closing quote kept", input: '"ab"c,d\n', expected: [["abc", "d"]] },
  { name: "unicode", input: "名前,ü\n😀,\"é,è\"\n", expected: [["名前", "ü"], ["😀", "é,è"]] },
  { name: "trailing comma at end of input", input: "a,", expected: [["a", ""]] },
  { name: "closing quote at end of input", input: '"a"', expected: [["a"]] },
  { name: "empty input", input: "", expected: [] },
];

describe("parseCsv", () => {
  for (const c of cases) {
    test(c.name, async () => {
      expect(await parse(c.input)).toEqual(c.expected);
    });
    // Every split point: a chunk boundary may fall inside a quote pair, a CRLF or a multi-byte character.
    test(`${c.name}, split into 1..4-byte chunks`, async () => {
      for (const size of [1, 2, 3, 4]) expect(await parse(c.input, size)).toEqual(c.expected);
    });
  }

  test("a quote left open at the end is an error", async () => {
    await expect(parse('a,b\n"open,c\n')).rejects.toBeInstanceOf(CsvError);
  });

  test("an open quote swallowing the input is an error once the record passes its byte bound, not unbounded growth", () => {
    const parser = new CsvParser({ maxRecordBytes: 10 });
    expect(parser.push('"' + "x".repeat(10))).toEqual([]);
    expect(parser.failure?.message).toMatch(/larger than 10 bytes \(is a quote left open\?\)/);
    expect(() => parser.push("more")).toThrow(CsvError);
    expect(() => parser.end()).toThrow(CsvError);
  });

  test("text chunks are accepted too", async () => {
    const out: string[][] = [];
    for await (const r of parseCsv((async function* () { yield 'a,"b'; yield '""c"\r'; yield "\nd,e"; })())) out.push(r);
    expect(out).toEqual([["a", 'b"c'], ["d", "e"]]);
  });

  test("100,000 records stream through", async () => {
    async function* big() {
      for (let i = 0; i < 1000; i++) {
        let s = "";
        for (let j = 0; j < 100; j++) s += `${i * 100 + j},"name ${j}, ""q""",x\r\n`;
        yield s;
      }
    }
    let count = 0;
    let last: string[] = [];
    for await (const r of parseCsv(big())) {
      count++;
      last = r;
    }
    expect(count).toBe(100_000);
    expect(last).toEqual(["99999", 'name 99, "q"', "x"]);
  });
});

/** Bytes of `text` as 64 KiB chunks, counting how many bytes the reader pulled. */
function metered(text: string, chunk = 64 * 1024) {
  const bytes = new TextEncoder().encode(text);
  const meter = { pulled: 0 };
  async function* source() {
    for (let i = 0; i < bytes.length; i += chunk) {
      const part = bytes.subarray(i, i + chunk);
      meter.pulled += part.length;
      yield part;
    }
  }
  return { source: source(), meter };
}

async function drain(source: AsyncIterable<Uint8Array>) {
  const out: string[][] = [];
  for await (const record of parseCsv(source)) out.push(record);
  return out;
}

describe("record bounds (docs/api.md §7: at most 500 fields and 1 MiB per record)", () => {
  test("the bounds are 500 fields and 1 MiB", () => {
    expect(MAX_FIELDS).toBe(500);
    expect(MAX_RECORD_BYTES).toBe(1_048_576);
  });

  test("a record of exactly 500 fields is read", async () => {
    const line = Array.from({ length: 500 }, (_, i) => `f${i}`).join(",");
    const records = await parse(`${line}\n${line}\n`);
    expect(records.map((r) => r.length)).toEqual([500, 500]);
  });

  test("the records before a refused one are still delivered, then the error", async () => {
    const wide = ",".repeat(500);
    const out: string[][] = [];
    const error = await (async () => {
      for await (const record of parseCsv(chunksOf(`h1,h2\na,b\n${wide}\nc,d\n`, 1 << 16))) out.push(record);
    })().catch((e) => e);
    expect(out).toEqual([["h1", "h2"], ["a", "b"]]);
    expect(error).toBeInstanceOf(CsvError);
    expect(error.record).toBe(3);
  });

  test("a record of 501 fields is refused, naming the record and the bound", async () => {
    const ok = Array.from({ length: 3 }, () => "a").join(",");
    const wide = Array.from({ length: 501 }, () => "a").join(",");
    const error = await parse(`${ok}\n${wide}\n`).catch((e) => e);
    expect(error).toBeInstanceOf(CsvError);
    expect(error.record).toBe(2);
    expect(error.reason).toBe("a record has more than 500 fields.");
  });

  test("a record of exactly 1 MiB (quotes and commas counted) is read", async () => {
    // "xxx…",y : 1 + n + 1 + 1 + 1 bytes
    const n = MAX_RECORD_BYTES - 4;
    const [record] = await parse(`"${"x".repeat(n)}",y\n`);
    expect(record![0]!.length).toBe(n);
    expect(record![1]).toBe("y");
  });

  test("a record one byte over 1 MiB is refused", async () => {
    const error = await parse(`"${"x".repeat(MAX_RECORD_BYTES - 3)}",y\n`).catch((e) => e);
    expect(error).toBeInstanceOf(CsvError);
    expect(error.reason).toBe(`a record is larger than ${MAX_RECORD_BYTES} bytes.`);
  });

  test("the byte bound counts UTF-8 bytes, not characters", async () => {
    // 3 bytes each: 349,526 of them are 1,048,578 bytes but only 349,526 characters.
    const error = await parse("€".repeat(349_526) + "\n").catch((e) => e);
    expect(error).toBeInstanceOf(CsvError);
    expect((await parse("€".repeat(349_525) + "\n"))[0]![0]!.length).toBe(349_525);
  });

  test("bytes are counted as the file has them: quotes, doubled quotes, commas and multi-byte characters", () => {
    // `"a""b",€xy` is 1 + 1 + 2 + 1 + 1 + 1 + 3 + 1 + 1 = 12 bytes.
    const exact = new CsvParser({ maxRecordBytes: 12 });
    expect(exact.push('"a""b",€xy\n')).toEqual([['a"b', "€xy"]]);
    expect(exact.failure).toBeNull();
    for (const over of ['"a""b",€xyz\n', '"a""b",€€\n']) {
      const parser = new CsvParser({ maxRecordBytes: 12 });
      expect(parser.push(over)).toEqual([]);
      expect(parser.failure).toBeInstanceOf(CsvError);
    }
  });

  test("the bounds hold per record: many records of 500 fields and near 1 MiB each are all read", async () => {
    const wide = Array.from({ length: 500 }, () => "v").join(",");
    const big = "x".repeat(MAX_RECORD_BYTES - 10);
    const records = await parse(`${wide}\n${big}\n${wide}\n${big}\n`);
    expect(records.map((r) => r.length)).toEqual([500, 1, 500, 1]);
  });

  test("10 MB of commas on one line is refused after reading the first chunk, not held in memory", async () => {
    const { source, meter } = metered(",".repeat(10_000_000));
    const error = await drain(source).catch((e) => e);
    expect(error).toBeInstanceOf(CsvError);
    expect(error.reason).toBe("a record has more than 500 fields.");
    expect(meter.pulled).toBe(64 * 1024);
  });

  test("an endless unquoted field is refused once it passes 1 MiB, within one chunk of the bound", async () => {
    const { source, meter } = metered("x".repeat(10_000_000));
    const error = await drain(source).catch((e) => e);
    expect(error).toBeInstanceOf(CsvError);
    expect(meter.pulled).toBeLessThanOrEqual(MAX_RECORD_BYTES + 64 * 1024);
  });

  test("a quote left open at the start is refused once the record passes 1 MiB, not at the end of the file", async () => {
    const { source, meter } = metered('a,"' + "line\n".repeat(2_000_000));
    const error = await drain(source).catch((e) => e);
    expect(error).toBeInstanceOf(CsvError);
    expect(error.reason).toContain("is a quote left open?");
    expect(meter.pulled).toBeLessThanOrEqual(MAX_RECORD_BYTES + 64 * 1024);
  });
});
