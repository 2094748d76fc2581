import { describe, expect, test } from "bun:test";
import { emailKey, phoneKey, searchTerms, searchTokens } from "../../src/contacts/matching.ts";

describe("matching keys (decisions §5)", () => {
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

describe("search terms (decisions §5, §12)", () => {
  const terms = searchTerms({
    firstName: "Mary-Jane",
    lastName: "van Dyke",
    businessName: null,
    email: "MJ@Example.com",
    contactId: "CR-17",
  });

  test("every word of the names is a term, split at spaces and punctuation", () => {
    expect(terms).toEqual(expect.arrayContaining(["mary-jane", "mary", "jane", "van", "dyke"]));
  });

  test("the whole email and the contactId are terms, lower-cased", () => {
    expect(terms).toEqual(expect.arrayContaining(["mj@example.com", "cr-17"]));
  });

  test("search input splits into lower-case tokens", () => {
    expect(searchTokens("  Mary  DY ")).toEqual(["mary", "dy"]);
  });
});
