/**
 * The dense parts of search (docs/api.md §11.6): phone terms, the one-edit check, the typo
 * keys and how a search is read into words. The HTTP suite (test/http/search-*.test.ts)
 * checks the rules end to end on both backends.
 */
import { describe, expect, test } from "bun:test";
import { parseSearch } from "../../src/contacts/search/query.ts";
import { PHONE_FORWARD, PHONE_REVERSED, foldSearch, isTypoWord, phoneTerms, searchTerms, typoKeysOf, withinOneEdit } from "../../src/contacts/search/terms.ts";
import { PAIR, PAIR_ANY, PAIR_MAX_HEADS, UNPAIRED_HEADS, pairHeadOf, pairTerm, pairTermsOf } from "../../src/contacts/search/pair-terms.ts";

describe("phone terms (docs/api.md §11.6 rule 4)", () => {
  test("a US number: E.164 digits and the national number forward, E.164 digits reversed", () => {
    expect(phoneTerms("+12025550143").sort()).toEqual([PHONE_FORWARD + "12025550143", PHONE_FORWARD + "2025550143", PHONE_REVERSED + "34105552021"].sort());
  });

  test("a German number: the national number with its trunk prefix 0 and without it", () => {
    expect(phoneTerms("+49301234567")).toEqual(expect.arrayContaining([PHONE_FORWARD + "49301234567", PHONE_FORWARD + "0301234567", PHONE_FORWARD + "301234567"]));
  });

  test("a number libphonenumber could not read is its digits, forward and reversed", () => {
    expect(phoneTerms("12345").sort()).toEqual([PHONE_FORWARD + "12345", PHONE_REVERSED + "54321"].sort());
  });

  test("no phone, no phone terms; no text term starts with a phone marker", () => {
    expect(phoneTerms(null)).toEqual([]);
    const terms = searchTerms({ firstName: "\u0001x", lastName: "a\u0002", businessName: null, email: "\u0001@x.org", phoneKey: null, contactId: "CR-1" });
    expect(terms.some((t) => t.startsWith(PHONE_FORWARD) || t.startsWith(PHONE_REVERSED))).toBe(false);
  });
});

describe("one edit (docs/api.md §11.6 rule 5)", () => {
  test.each([
    ["lovelace", "lovelase"], // substitution
    ["lovelace", "lovleace"], // transposition
    ["lovelace", "lovelac"], // deletion
    ["lovelace", "lovelacee"], // insertion
    ["garcia", "gracia"],
    ["muller", "muler"],
  ])("%p and %p are one edit apart", (a, b) => {
    expect(withinOneEdit(a, b)).toBe(true);
    expect(withinOneEdit(b, a)).toBe(true);
  });

  test.each([
    ["lovelace", "lovelxxe"],
    ["lovelace", "lovela"],
    ["lovelace", "olvelcae"],
    ["abcd", "badc"],
  ])("%p and %p are more than one edit apart", (a, b) => {
    expect(withinOneEdit(a, b)).toBe(false);
  });

  test("a word's keys are itself and every deletion: two words one edit apart share one", () => {
    expect(typoKeysOf("anna").sort()).toEqual(["anna", "nna", "ana", "ann"].sort());
    for (const [a, b] of [["lovelace", "lovelase"], ["lovelace", "lovleace"], ["lovelace", "lovelac"]]) {
      const shared = typoKeysOf(a!).filter((k) => typoKeysOf(b!).includes(k));
      expect(shared.length).toBeGreaterThan(0);
    }
  });

  test("typo words are letters only, 4 to 32 of them", () => {
    expect(isTypoWord("anna")).toBe(true);
    expect(isTypoWord("ann")).toBe(false);
    expect(isTypoWord("anna1")).toBe(false);
    expect(isTypoWord("a".repeat(33))).toBe(false);
    expect(isTypoWord("иван")).toBe(true);
  });
});

describe("reading a search (docs/api.md §11.6 rules 1, 3, 4)", () => {
  const read = (s: string) => parseSearch(s).map((w) => (w.kind === "text" ? w.text : `#${w.digits}`));

  test("phone-like runs of 4 or more digits are one phone word, in any format", () => {
    expect(read("+1 (202) 555-0143")).toEqual(["#12025550143"]);
    expect(read("202.555.0143")).toEqual(["#2025550143"]);
    expect(read("uma 0143")).toEqual(["uma", "#0143"]);
  });

  test("a trunk 0 in parentheses after a country code is dropped; an international prefix (00, 011) is also read without it", () => {
    const phone = (s: string) => parseSearch(s).flatMap((w) => (w.kind === "phone" ? w.dialled : []));
    expect(phone("+44 (0)20 7946 0958")).toEqual(["442079460958"]);
    expect(phone("0044 20 7946 0958")).toEqual(["00442079460958", "442079460958"]);
    expect(phone("011 44 20 7946 0958")).toEqual(["011442079460958", "442079460958"]);
  });

  test("a contactId's number is read without leading zeros, as the API reads it", () => {
    expect(read("CR-0204")).toEqual(["cr-204"]);
    expect(read("cr-0")).toEqual(["cr-0"]);
  });

  test("fewer than 4 digits are text words", () => {
    expect(read("202")).toEqual(["202"]);
    expect(read("+1 20")).toEqual(["1", "20"]);
  });

  test("folding: accents, ß, ø, ł, curly apostrophes, zero-width characters", () => {
    expect(foldSearch("José Müller Łukasz Straße Søren O’Brien\u200b")).toBe("jose muller lukasz strasse soren o'brien");
  });
});

describe("pair terms (src/contacts/search/pair-terms.ts)", () => {
  const ada = { firstName: "Ada", lastName: "Lovelace", businessName: null, email: "ada@analytical.engine", phoneKey: "+14155550123", contactId: "CR-17" };

  test("a contact has one pair term for each two different heads of its text terms, the phone's and the contactId's left out", () => {
    const terms = searchTerms(ada);
    const pairs = terms.filter((t) => t.startsWith(PAIR));
    const heads = ["ada", "lov", "ana", "eng"].sort();
    const want = heads.flatMap((a, i) => heads.slice(i + 1).map((b) => pairTerm(a, b)));
    expect(pairs.sort()).toEqual(want.sort());
    expect(pairs.some((p) => p.includes("cr-") || /[\u0001\u0002]/.test(p) || /\d/.test(p))).toBe(false);
    expect(pairTerm("lov", "ada")).toBe(pairTerm("ada", "lov"));
  });

  test("more heads than PAIR_MAX_HEADS give the one many-heads term; terms shorter than a head give none", () => {
    const business = "Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliet Kilo Lima Mike";
    expect(pairTermsOf(searchTerms({ ...ada, businessName: business }).filter((t) => !t.startsWith(PAIR)))).toEqual([PAIR_ANY]);
    expect(PAIR_MAX_HEADS).toBe(12);
    expect(pairTermsOf(["jo", "li", "ab"])).toEqual([]);
    expect(pairTermsOf(["jon", "lim"])).toEqual([pairTerm("jon", "lim")]);
  });

  test("the heads of top-level domains and large mail providers are never paired, and a word with one never drives through a pair", () => {
    const terms = searchTerms({ ...ada, email: "ada@gmail.com" }).filter((t) => !t.startsWith(PAIR));
    expect(terms).toEqual(expect.arrayContaining(["gmail.com", "gmail", "com"]));
    expect(pairTermsOf(terms)).toEqual([pairTerm("ada", "lov")]);
    for (const head of UNPAIRED_HEADS) expect(pairHeadOf([{ term: `${head}pton` }])).toBeNull();
    expect(pairHeadOf([{ term: "compton" }])).toBeNull();
  });

  test("a word drives through a pair only as text of a head's length or more that cannot find a phone or a contactId", () => {
    expect(pairHeadOf([{ term: "lovel" }])).toBe("lov");
    expect(pairHeadOf([{ term: "ada" }])).toBe("ada");
    expect(pairHeadOf([{ term: "ad" }])).toBeNull();
    expect(pairHeadOf([{ term: "cr-1" }])).toBeNull();
    expect(pairHeadOf([{ term: "cr-" }])).toBeNull();
    expect(pairHeadOf([{ term: "\u00014155" }])).toBeNull();
    expect(pairHeadOf([{ term: "mark" }, { term: "marsh" }])).toBeNull();
  });
});
