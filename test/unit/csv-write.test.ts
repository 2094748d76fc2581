/**
 * The CSV writer of `crm export` (src/transfer/csv.ts, docs/import-export.md §2): what it writes, the
 * importer's parser reads back as the same cells, whatever they hold.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { csvField, csvRecord } from "../../src/transfer/csv.ts";
import { parse } from "../helpers/csv.ts";

const cells: Array<{ name: string; value: string; written: string }> = [
  { name: "plain text is written as it is", value: "Ada", written: "Ada" },
  { name: "an empty cell stays empty", value: "", written: "" },
  { name: "a comma is quoted", value: "London, UK", written: '"London, UK"' },
  { name: "quotes are doubled inside quotes", value: 'say "hi"', written: '"say ""hi"""' },
  { name: "a lone quote", value: '"', written: '""""' },
  { name: "LF is quoted", value: "a\nb", written: '"a\nb"' },
  { name: "CRLF is quoted and kept", value: "a\r\nb", written: '"a\r\nb"' },
  { name: "a lone CR is quoted", value: "a\rb", written: '"a\rb"' },
  { name: "a leading space is quoted", value: " padded", written: '" padded"' },
  { name: "a trailing space is quoted", value: "padded ", written: '"padded "' },
  { name: "a leading tab is quoted", value: "\tx", written: '"\tx"' },
  { name: "unicode is written as it is", value: "Zoë 名前 😀", written: "Zoë 名前 😀" },
  // Neutralising formulas is the exporter's step before this one (test/unit/spreadsheet.test.ts).
  { name: "a formula-like cell is only quoted as any cell is", value: "=HYPERLINK(\"x\")", written: '"=HYPERLINK(""x"")"' },
  { name: "a leading minus is left to the exporter", value: "-3.5", written: "-3.5" },
  { name: "a leading @ or + is left to the exporter", value: "@handle+1", written: "@handle+1" },
  { name: "a byte-order mark at the start is quoted, so it is not taken for the file's", value: "\uFEFFx", written: '"\uFEFFx"' },
];

describe("csvField", () => {
  for (const c of cells) {
    test(c.name, async () => {
      expect(csvField(c.value)).toBe(c.written);
      // At the start of a file too, where the parser strips a byte-order mark.
      expect(await parse(csvRecord([c.value, "end"]))).toEqual([[c.value, "end"]]);
    });
  }
});

describe("csvRecord", () => {
  test("cells are joined by commas and the record ends with CRLF (RFC 4180)", () => {
    expect(csvRecord(["a", "b,c", ""])).toBe('a,"b,c",\r\n');
  });

  test("a record of one empty cell survives (a bare empty line would be skipped)", async () => {
    const text = csvRecord(["h"]) + csvRecord([""]) + csvRecord(["x"]);
    expect(await parse(text)).toEqual([["h"], [""], ["x"]]);
  });

  const special = fc.constantFrom(",", '"', "\r", "\n", "\r\n", " ", "\t", ";", "=", "-", "é", "名", "😀", "\uFEFF", "a", "b");
  const cell = fc.oneof(fc.string({ unit: special, maxLength: 12 }), fc.string({ unit: "grapheme", maxLength: 12 }));
  const records = fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 });

  test("any records written are parsed back as the same cells, whatever the chunking", async () => {
    await fc.assert(
      fc.asyncProperty(records, fc.integer({ min: 1, max: 64 }), async (rows, size) => {
        const text = rows.map(csvRecord).join("");
        expect(await parse(text, size)).toEqual(rows);
      }),
      { numRuns: 500 },
    );
  });
});
