import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js";

/** Email match key (docs/api.md §11): trimmed, lower-cased. */
export function emailKey(email: string | null): string | null {
  return email === null ? null : email.trim().toLowerCase();
}

/**
 * Phone match key (docs/api.md §11.7): E.164 when libphonenumber can read the number with the
 * project's default region, else its digits; so "+1 (415) 555-0100" and "415-555-0100"
 * (region US) meet on "+14155550100".
 */
export function phoneKey(phone: string | null, region: string): string | null {
  if (phone === null) return null;
  const parsed = parsePhoneNumberFromString(phone, region as CountryCode);
  if (parsed?.isPossible()) return parsed.number;
  const digits = phone.replace(/\D/g, "");
  return digits.length > 0 ? digits : null;
}

/**
 * Search terms of a contact (docs/api.md §11.6, §11): every word of the names (split at spaces
 * and punctuation, and whole space-separated tokens), the whole email, and the contactId,
 * lower-cased. `search` then matches a prefix of any of them through an index.
 */
export function searchTerms(fields: {
  firstName: string | null;
  lastName: string | null;
  businessName: string | null;
  email: string | null;
  contactId: string;
}): string[] {
  const terms = new Set<string>();
  for (const name of [fields.firstName, fields.lastName, fields.businessName]) {
    if (!name) continue;
    const lower = name.toLowerCase();
    for (const token of lower.split(/\s+/)) if (token) terms.add(token);
    for (const word of lower.split(/[^\p{L}\p{N}]+/u)) if (word) terms.add(word);
  }
  const email = emailKey(fields.email);
  if (email) terms.add(email);
  terms.add(fields.contactId.toLowerCase());
  // SQLite stores lone surrogates as U+FFFD: make terms well-formed first, so two that
  // differ only there cannot collide in the term index.
  return [...new Set([...terms].map((t) => t.slice(0, 255).toWellFormed()))];
}

/** Search input → the tokens that must each prefix-match a term. */
export function searchTokens(search: string): string[] {
  return [...new Set(search.toWellFormed().toLowerCase().split(/\s+/).filter(Boolean))].slice(0, 8);
}

/** Upper bound of a prefix range: every string starting with `prefix` sorts below it. */
export const prefixEnd = (prefix: string) => `${prefix}\u{10FFFF}`;

/** The first three characters (code points) of a term: the walk index's group key. */
export const HEAD_LENGTH = 3;
export const termHead = (term: string) => [...term].slice(0, HEAD_LENGTH).join("");
