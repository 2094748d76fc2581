import { describe, expect, test } from "bun:test";
import { CsvError, CsvParser, parseCsv } from "../../src/cli/csv.ts";

async function* chunksOf(text: string, size: number) {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function parse(text: string, size = 1 << 16) {
  const out: string[][] = [];
  for await (const record of parseCsv(chunksOf(text, size))) out.push(record);
  return out;
}

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

  test("a field past maxFieldLength is an error, not unbounded growth", () => {
    const parser = new CsvParser(10);
    expect(() => parser.push('"' + "x".repeat(11))).toThrow(CsvError);
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
