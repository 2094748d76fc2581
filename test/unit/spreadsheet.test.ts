/**
 * Spreadsheet formulas in CSV cells (docs/security.md §8, src/transfer/spreadsheet.ts): the
 * export's leading `'` before a formula trigger, the importer's rule that takes it off, and
 * the two together through the CSV writer, the parser and the row builder.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { csvRecord } from "../../src/transfer/csv.ts";
import { planColumns } from "../../src/transfer/import-columns.ts";
import { buildRow } from "../../src/transfer/import-rows.ts";
import { FORMULA_TRIGGERS, neutraliseFormula, unneutraliseFormula } from "../../src/transfer/spreadsheet.ts";
import type { CustomField } from "../../src/reference/custom-fields.ts";
import { parse } from "../helpers/csv.ts";

const TRIGGERS = ["=", "+", "-", "@", "\t", "\r"];

/** Strings built from the characters that matter here (triggers, quotes, spaces) and any other. */
const tricky = fc.oneof(
  fc.string({ unit: fc.constantFrom("=", "+", "-", "@", "\t", "\r", "'", '"', " ", "\n", ",", "a", "1", "é", "＝"), maxLength: 10 }),
  fc.string({ unit: "grapheme", maxLength: 10 }),
  fc.string({ unit: "binary", maxLength: 10 }),
);

describe("neutraliseFormula: what the CSV export writes (docs/security.md §8)", () => {
  test("the triggers are exactly =, +, -, @, tab and carriage return", () => {
    expect([...FORMULA_TRIGGERS] as string[]).toEqual(TRIGGERS);
  });

  for (const t of TRIGGERS) {
    test(`a cell starting with ${JSON.stringify(t)} gets a leading '`, () => {
      expect(neutraliseFormula(t)).toBe(`'${t}`);
      expect(neutraliseFormula(`${t}HYPERLINK("https://evil")`)).toBe(`'${t}HYPERLINK("https://evil")`);
    });
  }

  const unchanged: Array<[string, string]> = [
    ["an empty cell", ""],
    ["plain text", "Ada"],
    ["a digit first", "1+2"],
    ["a trigger inside, not first", "a=b+c-d@e"],
    ["a leading space before =", " =1+2"],
    ["a leading line feed (not one of the six)", "\n=1"],
    ["a quote not followed by a trigger", "'hello"],
    ["a double quote first", '"=1"'],
    ["a full-width equals sign (not one of the six)", "＝1+2"],
    ["unicode", "Zoë 名前 😀"],
  ];
  for (const [name, value] of unchanged) {
    test(`other cells are unchanged: ${name}`, () => {
      expect(neutraliseFormula(value)).toBe(value);
    });
  }

  test("a value stored with quotes before a trigger gets one more quote, so it comes back whole", () => {
    expect(neutraliseFormula("'=x")).toBe("''=x");
    expect(neutraliseFormula("''+1")).toBe("'''+1");
  });

  test("any cell: prefixed exactly when it starts with a trigger (after any quotes), else unchanged", () => {
    fc.assert(
      fc.property(tricky, (s) => {
        const out = neutraliseFormula(s);
        const rest = s.replace(/^'*/, "");
        if (rest.length > 0 && TRIGGERS.includes(rest[0]!)) expect(out).toBe(`'${s}`);
        else expect(out).toBe(s);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("unneutraliseFormula: the importer's rule (docs/security.md §8)", () => {
  const cases: Array<[string, string, string]> = [
    ["a phone number", "'+1 415 555 0100", "+1 415 555 0100"],
    ["a negative number", "'-0.5", "-0.5"],
    ["a formula", "'=HYPERLINK(\"x\")", "=HYPERLINK(\"x\")"],
    ["an @", "'@SUM(A1)", "@SUM(A1)"],
    ["a tab", "'\tx", "\tx"],
    ["a carriage return", "'\rx", "\rx"],
    ["a quote before text stays", "'hello", "'hello"],
    ["a quote before a digit stays", "'0123", "'0123"],
    ["a lone quote stays", "'", "'"],
    ["a quote before a space and = stays", "' =1", "' =1"],
    ["only one quote of a run is taken", "''=x", "'=x"],
    ["no quote: unchanged", "=1+2", "=1+2"],
    ["empty", "", ""],
  ];
  for (const [name, cell, read] of cases) {
    test(`a leading ' is removed only before one of the six: ${name}`, () => {
      expect(unneutraliseFormula(cell)).toBe(read);
    });
  }

  test("round trip: neutralise then strip gives the original, for any string", () => {
    fc.assert(
      fc.property(tricky, (s) => {
        expect(unneutraliseFormula(neutraliseFormula(s))).toBe(s);
      }),
      { numRuns: 5_000 },
    );
  });

  test("what the importer strips is only ever a quote the export could have added", () => {
    fc.assert(
      fc.property(tricky, (s) => {
        const read = unneutraliseFormula(s);
        if (read !== s) expect(neutraliseFormula(read)).toBe(s);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("through the CSV writer, the parser and the row builder", () => {
  const FIELDS: CustomField[] = [
    { id: "cf_formula", title: "=Formula", type: "text", options: null },
    { id: "cf_score", title: "Score", type: "number", options: null },
  ];

  test("neutralised records parse back and strip to the written cells, whatever they hold", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(tricky, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }), async (rows) => {
        const text = rows.map((r) => csvRecord(r.map(neutraliseFormula))).join("");
        const back = (await parse(text)).map((r) => r.map(unneutraliseFormula));
        expect(back).toEqual(rows);
      }),
      { numRuns: 500 },
    );
  });

  test("an exported row builds the contact it came from: phone, notes, a number and a custom text", () => {
    const header = ["firstName", "phone", "notes", "Score", "=Formula", "tags"].map(neutraliseFormula);
    expect(header[4]).toBe("'=Formula");
    const plan = planColumns(header, FIELDS);
    expect(plan.unknown).toEqual([]);
    expect(plan.problems).toEqual([]);
    const row = ['=HYPERLINK("http://x")', "+1 202 555 0100", "-1+2", "-0.5", "@SUM(A1)", "-a; +b"].map(neutraliseFormula);
    const built = buildRow(plan.matches, row);
    expect(built).toMatchObject({
      ok: true,
      input: {
        firstName: '=HYPERLINK("http://x")',
        phone: "+1 202 555 0100",
        notes: "-1+2",
        customFields: { cf_score: -0.5, cf_formula: "@SUM(A1)" },
        tags: ["-a", "+b"],
      },
    });
  });

  test("a quote the export did not add is kept (a value typed as 'hello)", () => {
    const plan = planColumns(["firstName", "lastName"], FIELDS);
    expect(buildRow(plan.matches, ["'hello", "''=x"])).toMatchObject({ ok: true, input: { firstName: "'hello", lastName: "'=x" } });
  });
});
