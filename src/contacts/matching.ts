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

/** Upper bound of a prefix range: every string starting with `prefix` sorts below it. */
export const prefixEnd = (prefix: string) => `${prefix}\u{10FFFF}`;

/** The first three characters (code points) of a term: the walk index's group key. */
export const HEAD_LENGTH = 3;
export const termHead = (term: string) => [...term].slice(0, HEAD_LENGTH).join("");
