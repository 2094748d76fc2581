/**
 * Term bits (src/contacts/search/term-bits.ts; docs/performance.md "Two words"): a row's bits
 * may only rule a contact out when it cannot match, never when it can, so every word that
 * matches one of a contact's terms (a prefix of it, or the term itself) must find its bits
 * in the contact's.
 */
import { describe, expect, test } from "bun:test";
import { ALL_TERM_BITS, TERM_BITS_PER_COLUMN, bitStrength, bitsOfMatch, termBitsOf, type TermBits } from "../../src/contacts/search/term-bits.ts";
import { PAIR } from "../../src/contacts/search/pair-terms.ts";
import { searchTerms } from "../../src/contacts/search/terms.ts";
import { parseSearch } from "../../src/contacts/search/query.ts";

const big = (n: number) => BigInt(n);
/** `have` holds every bit of `need` (in BigInt: JavaScript's bit operators stop at 32 bits). */
const holds = (have: TermBits, need: TermBits) => need.every((n, i) => (big(have[i]!) & big(n)) === big(n));
const NONE: TermBits = [0, 0, 0, 0];

const people = [
  { firstName: "Mary", lastName: "Thornton", businessName: null, email: "mary.thornton@example.co.uk", phoneKey: "+14152001234", contactId: "CR-17" },
  { firstName: "José", lastName: "Müller-Lüdenscheidt", businessName: "Straße & Søn", email: "jose@xn--mller-kva.de", phoneKey: "+493012345678", contactId: "CR-204" },
  { firstName: "Łukasz", lastName: "O’Brien", businessName: null, email: null, phoneKey: null, contactId: "CR-9" },
  { firstName: "Ada", lastName: "Lovelace", businessName: "Analytical Engines Ltd", email: "ada@engines.example", phoneKey: "+442071838750", contactId: "CR-1815" },
];

describe("term bits", () => {
  test("every prefix of every term of a contact finds its bits in the contact's (no contact that matches is left out)", () => {
    let checked = 0;
    for (const person of people) {
      const terms = searchTerms(person);
      const bits = termBitsOf(terms);
      // Pair terms are made of the others and never matched by a word (src/contacts/search/pair-terms.ts).
      for (const term of terms.filter((t) => !t.startsWith(PAIR))) {
        const chars = [...term];
        for (let n = 1; n <= chars.length; n++) {
          const prefix = chars.slice(0, n).join("");
          expect({ term, prefix, holds: holds(bits, bitsOfMatch({ term: prefix, prefix: true })) }).toEqual({ term, prefix, holds: true });
          checked++;
        }
        expect(holds(bits, bitsOfMatch({ term, prefix: false }))).toBe(true);
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  test("the words people type for them, as search reads them, are held by their bits", () => {
    const typed: Array<[number, string]> = [
      [0, "mary thor"],
      [0, "thornton"],
      [0, "example.co"],
      [1, "muller"],
      [1, "strasse"],
      [1, "jose"],
      [2, "lukasz obrien"],
      [3, "lovelace ada"],
    ];
    for (const [i, search] of typed) {
      const bits = termBitsOf(searchTerms(people[i]!));
      for (const word of parseSearch(search)) {
        if (word.kind !== "text") continue;
        expect({ search, word: word.text, holds: holds(bits, bitsOfMatch({ term: word.text, prefix: true })) }).toEqual({ search, word: word.text, holds: true });
      }
    }
  });

  test("words of 1 or 2 characters need no bit (no test); longer ones need one bit per prefix length of 3, 4 and 5 they reach, and a second for their 3-character prefix", () => {
    expect(bitsOfMatch({ term: "jo", prefix: true })).toEqual(NONE);
    const count = (bits: TermBits) => bits.flatMap((v) => [...big(v).toString(2)]).filter((c) => c === "1").length;
    const mar = bitsOfMatch({ term: "mar", prefix: true });
    expect(count(mar)).toBe(2);
    // One bit in a or b (the first hash), one in c or d (the second).
    expect(count([mar[0], mar[1], 0, 0])).toBe(1);
    expect(count([0, 0, mar[2], mar[3]])).toBe(1);
    expect(count(bitsOfMatch({ term: "mary", prefix: true }))).toBeLessThanOrEqual(3);
    expect(count(bitsOfMatch({ term: "thornton", prefix: true }))).toBeLessThanOrEqual(4);
  });

  test("prefixes that share their first bit (mar, ram, jea: bit 19) are told apart by the second", () => {
    const [mar, ram, jea] = ["mar", "ram", "jea"].map((term) => bitsOfMatch({ term, prefix: true }));
    expect([mar![0], mar![1]]).toEqual([ram![0], ram![1]]);
    expect([mar![0], mar![1]]).toEqual([jea![0], jea![1]]);
    const second = new Set([mar!, ram!, jea!].map((bits) => `${bits[2]}/${bits[3]}`));
    expect(second.size).toBe(3);
    // A contact with only "mar…" no longer passes "ram" or "jea".
    const maria = termBitsOf(["maria"]);
    expect(holds(maria, mar!)).toBe(true);
    expect(holds(maria, ram!)).toBe(false);
    expect(holds(maria, jea!)).toBe(false);
  });

  test("a word's strength is the number of distinct bits it tests: two prefixes that hash to one bit test one", () => {
    const word = (term: string) => ({ matches: [{ term, prefix: true }], exact: [] });
    expect(bitStrength(word("jo"))).toBe(0);
    expect(bitStrength(word("mar"))).toBe(2);
    expect(bitStrength(word("jean"))).toBe(3);
    expect(bitStrength(word("morri"))).toBe(4);
    // "ran" and "rand" share a bit: "rand" tests 2, not 3.
    expect(bitsOfMatch({ term: "rand", prefix: true })).toEqual(bitsOfMatch({ term: "ran", prefix: true }));
    expect(bitStrength(word("rand"))).toBe(2);
  });

  test("each column is a safe integer of at most 52 bits (exact in JavaScript, bound to both databases as an integer)", () => {
    const terms = Array.from({ length: 2000 }, (_, i) => `${(i * 7919).toString(36)}${i.toString(36)}xyz`);
    const bits = termBitsOf(terms);
    expect(bits).toEqual([1, 2, 3, 4].map(() => 2 ** TERM_BITS_PER_COLUMN - 1) as TermBits);
    expect(bits.every(Number.isSafeInteger)).toBe(true);
  });

  test("rows whose bits are unknown (-1, every bit set) hold every word's bits", () => {
    expect(holds([ALL_TERM_BITS, ALL_TERM_BITS, ALL_TERM_BITS, ALL_TERM_BITS], bitsOfMatch({ term: "thornton", prefix: true }))).toBe(true);
  });

  test("a row written by a node that knows only columns a and b (c and d default to -1) holds every word its a and b hold", () => {
    const [a, b] = termBitsOf(searchTerms(people[0]!));
    for (const term of ["mar", "mary", "thor", "thornton", "example"]) expect(holds([a, b, ALL_TERM_BITS, ALL_TERM_BITS], bitsOfMatch({ term, prefix: true }))).toBe(true);
  });

  test("a word rarely passes the bits of a contact that does not have it (a few percent at 4 letters)", () => {
    const contacts = people.map((p) => termBitsOf(searchTerms(p)));
    const words = ["abcd", "zyxw", "quen", "bros", "kirk", "wolf", "pete", "gran", "hask", "vlad", "nico", "yuri"].flatMap((w) => [w, `${w}e`, `${w}er`]);
    let passed = 0;
    let tried = 0;
    for (const bits of contacts) {
      for (const w of words) {
        tried++;
        if (holds(bits, bitsOfMatch({ term: w, prefix: true }))) passed++;
      }
    }
    expect(passed / tried).toBeLessThan(0.15);
  });
});

describe("terms left out of the bits", () => {
  test("the phone's terms and the contactId set no bit; a word that could find them (phone digits, cr-…) is not tested", () => {
    const withPhone = termBitsOf(searchTerms({ ...people[0]!, phoneKey: "+14152001234", contactId: "CR-17" }));
    const without = termBitsOf(searchTerms({ ...people[0]!, phoneKey: null, contactId: "CR-99999" }).filter((t) => !t.startsWith("cr-")));
    expect(withPhone).toEqual(without);
    for (const term of ["\u0001141", "\u000243210", "cr-", "cr-1", "cr-17"]) expect(bitsOfMatch({ term, prefix: true })).toEqual(NONE);
    // A name that only looks like an id keeps its bits.
    expect(bitsOfMatch({ term: "cr-7x", prefix: true })).not.toEqual(NONE);
  });
});
