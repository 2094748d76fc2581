import { describe, expect, test } from "bun:test";
import { emailKey, HEAD_LENGTH, phoneKey, prefixEnd, termHead } from "../../src/contacts/matching.ts";
import { parseSearch } from "../../src/contacts/search/query.ts";
import { PAIR } from "../../src/contacts/search/pair-terms.ts";
import { searchTerms, type SearchableFields } from "../../src/contacts/search/terms.ts";

/** The terms made of the text (pair terms, made of these, are test/unit/search-terms.test.ts's). */
const textTerms = (fields: SearchableFields) => searchTerms(fields).filter((t) => !t.startsWith(PAIR));

const texts = (search: string) => parseSearch(search).map((w) => (w.kind === "text" ? w.text : `#${w.digits}`));

describe("matching keys (docs/api.md §11)", () => {
  test("emails match after trimming and lower-casing", () => {
    expect(emailKey("  Ada@Example.COM ")).toBe("ada@example.com");
  });

  test.each(["+1 (415) 555-0100", "+14155550100", "415-555-0100", "(415) 555 0100", "1-415-555-0100"])(
    "phone %p reads as E.164 +14155550100 with region US",
    (phone) => {
      expect(phoneKey(phone, "US")).toBe("+14155550100");
    },
  );

  test("a national number uses the project's default region", () => {
    expect(phoneKey("020 7946 0018", "GB")).toBe("+442079460018");
  });

  test("a number libphonenumber cannot read falls back to its digits", () => {
    expect(phoneKey("ext. 12", "US")).toBe("12");
  });
});

describe("search terms (docs/api.md §11.6, §3)", () => {
  const terms = textTerms({
    firstName: "Mary-Jane",
    lastName: "van Dyke",
    businessName: null,
    email: "MJ@Example.com",
    phoneKey: null,
    contactId: "CR-17",
  });

  test("every word of the names is a term, split at spaces and punctuation", () => {
    expect(terms).toEqual(expect.arrayContaining(["mary-jane", "mary", "jane", "van", "dyke"]));
  });

  test("the whole email and the contactId are terms, lower-cased", () => {
    expect(terms).toEqual(expect.arrayContaining(["mj@example.com", "cr-17"]));
  });

  test("search input splits into lower-case words", () => {
    expect(texts("  Mary  DY ")).toEqual(["mary", "dy"]);
  });
});

describe("match keys: what does not match (docs/api.md §11)", () => {
  test("no email or phone has no key", () => {
    expect(emailKey(null)).toBeNull();
    expect(phoneKey(null, "US")).toBeNull();
  });

  test("a phone without a single digit has no key, rather than matching every other such phone", () => {
    expect(phoneKey("n/a", "US")).toBeNull();
    expect(phoneKey("   ", "US")).toBeNull();
  });

  test("a number that is not possible in the region falls back to its digits, not to a partial E.164", () => {
    expect(phoneKey("123", "US")).toBe("123");
    expect(phoneKey("+1 23", "US")).toBe("123");
  });

  test("the region matters: the same national digits are different numbers in different regions", () => {
    expect(phoneKey("020 7946 0018", "GB")).toBe("+442079460018");
    expect(phoneKey("020 7946 0018", "US")).not.toBe("+442079460018");
    expect(phoneKey("+44 20 7946 0018", "US")).toBe("+442079460018");
  });

  test("emails differing only in case and surrounding spaces share a key; others do not", () => {
    expect(emailKey("\tADA@example.com\n")).toBe(emailKey("ada@EXAMPLE.com"));
    expect(emailKey("ada@example.com")).not.toBe(emailKey("ada+x@example.com"));
  });
});

describe("search terms and tokens (docs/api.md §11.6, §3)", () => {
  const base = { firstName: null, lastName: null, businessName: null, email: null, phoneKey: null, contactId: "CR-1" };

  test("a contact with only a contactId has that one term", () => {
    expect(textTerms(base)).toEqual(["cr-1"]);
  });

  test("first, last and business names each give their words, lower-cased, once each, and each token without its punctuation", () => {
    const terms = textTerms({ ...base, firstName: "Ann Ann", lastName: "O'Neil", businessName: "ACME, Inc." });
    expect(terms.sort()).toEqual(["acme", "acme,", "ann", "cr-1", "inc", "inc.", "neil", "o", "o'neil", "oneil"].sort());
  });

  test("spaces around or between the words of a name give no empty term", () => {
    const terms = textTerms({ ...base, firstName: "  Ann  ", lastName: "\tvan  Dyke ", businessName: " - " });
    expect(terms).not.toContain("");
    expect(terms.sort()).toEqual(["-", "ann", "cr-1", "dyke", "van"]);
  });

  test("names split at every kind of space, letters and digits of any script stay in words, accents are folded", () => {
    const terms = textTerms({ ...base, firstName: "Zoë\u00a0Müller", lastName: "Nguyễn 42nd", businessName: "東京 Café" });
    expect(terms).toEqual(expect.arrayContaining(["zoe", "muller", "nguyen", "42nd", "東京", "cafe"]));
  });

  test("the email gives its whole, its local part, its domain, the domain's endings and labels, trimmed and lower-cased", () => {
    const terms = textTerms({ ...base, email: "  Mary.Jane@Example.COM " });
    expect(terms.sort()).toEqual(["com", "cr-1", "example", "example.com", "mary.jane", "mary.jane@example.com"]);
  });

  test("a term is at most 255 characters (the index's bound)", () => {
    const long = "x".repeat(300);
    const terms = textTerms({ ...base, firstName: long, email: `${long}@example.com` });
    expect(terms.every((t) => t.length <= 255)).toBe(true);
    expect(terms).toContain("x".repeat(255));
  });

  test("terms are well-formed: a lone surrogate becomes U+FFFD, so two names differing there cannot collide", () => {
    const terms = textTerms({ ...base, firstName: "a\ud800b" });
    expect(terms).toContain("a\ufffdb");
    expect(terms.every((t) => t.isWellFormed())).toBe(true);
  });

  test("search input: whitespace of any kind separates, repeats count once, at most 8 tokens", () => {
    expect(texts("\tZoë\nzoë  MÜLLER ")).toEqual(["zoe", "muller"]);
    expect(texts("")).toEqual([]);
    expect(texts("   ")).toEqual([]);
    expect(texts("a b c d e f g h i j")).toEqual(["a", "b", "c", "d", "e", "f", "g", "h"]);
    // A lone surrogate becomes U+FFFD, which is no letter: trimmed from the word's end like punctuation.
    expect(texts("a\ud800")).toEqual(["a"]);
    expect(texts("Lovelace, Ada")).toEqual(["lovelace", "ada"]);
    expect(texts("O’Brien lovelace\u200b")).toEqual(["o'brien", "lovelace"]);
  });

  test("a prefix range holds every string that starts with the prefix and nothing after it (SQLite's byte order)", () => {
    const utf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    const inRange = (t: string) => utf8(t, "mar") >= 0 && utf8(t, prefixEnd("mar")) < 0;
    for (const t of ["mar", "mark", "mar\uffff", "mar\u{10FFFE}", "marzzz", "mar😀"]) expect(inRange(t)).toBe(true);
    for (const t of ["mas", "mb", "ma", "maq\u{10FFFF}"]) expect(inRange(t)).toBe(false);
  });

  test("a term's head is its first three characters, counted in code points", () => {
    expect(HEAD_LENGTH).toBe(3);
    expect(termHead("martin")).toBe("mar");
    expect(termHead("ab")).toBe("ab");
    expect(termHead("😀😁😂🤣")).toBe("😀😁😂");
  });
});
