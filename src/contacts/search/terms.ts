import { parsePhoneNumberFromString } from "libphonenumber-js";
import { foldCase } from "../../lib/fold.ts";
import { pairTermsOf } from "./pair-terms.ts";

/**
 * The search terms of a contact (docs/api.md §11.6): what `search` matches a prefix of,
 * through the term index (contact_search_terms). All folded (src/lib/fold.ts):
 * - each word of firstName, lastName and businessName (split at anything not a letter or
 *   digit), each whole space-separated token, and that token without its punctuation
 *   (`O'Brien` → `o`, `brien`, `o'brien`, `obrien`);
 * - the email whole, its local part, its domain, each label of the domain and each ending
 *   of it at a label (`mail.example.co.uk` → `example.co.uk`, `co.uk`);
 * - the contactId (`cr-17`);
 * - the phone, under markers no folded text starts with: `PHONE_FORWARD` before its E.164
 *   digits and its national number as dialled (with the trunk prefix and without), and
 *   `PHONE_REVERSED` before its E.164 digits reversed, so "ends with" is a prefix too;
 * - a pair term for every two of the heads of the terms above (src/contacts/search/pair-terms.ts).
 */
export interface SearchableFields {
  firstName: string | null;
  lastName: string | null;
  businessName: string | null;
  email: string | null;
  /** The phone's match key (docs/api.md §11.7): E.164 when libphonenumber read it, else its digits. */
  phoneKey: string | null;
  contactId: string;
}

/**
 * Search's folding: src/lib/fold.ts, then invisible format characters (zero-width spaces,
 * joiners) dropped and the typographic apostrophes and dashes written as `'` and `-`, so
 * `O’Brien` pasted from a phone is `o'brien`; control characters never reach a term (the
 * phone markers stay unambiguous).
 */
export function foldSearch(text: string): string {
  return foldCase(text)
    .replace(/[\p{Cf}\p{Cc}]+/gu, (c) => (/\s/.test(c) ? " " : ""))
    .replace(/[\u2018\u2019\u201B\u02BC\u2032\uFF07]/g, "'")
    .replace(/[\u2010-\u2015\u2212\uFE63\uFF0D]/g, "-");
}

/** Marks a term of phone digits read forward (E.164 or national). */
export const PHONE_FORWARD = "\u0001";
/** Marks a term of a phone's E.164 digits reversed (matched by a query's last digits). */
export const PHONE_REVERSED = "\u0002";
/** The longest term stored; longer text is cut (a prefix of it still matches). */
export const TERM_MAX = 255;

export function searchTerms(fields: SearchableFields): string[] {
  const terms = new Set<string>();
  for (const name of [fields.firstName, fields.lastName, fields.businessName]) {
    if (!name) continue;
    for (const word of wordsOf(name)) terms.add(word);
  }
  if (fields.email) for (const part of emailTerms(fields.email)) terms.add(part);
  terms.add(foldSearch(fields.contactId));
  for (const term of phoneTerms(fields.phoneKey)) terms.add(term);
  terms.delete("");
  const made = [...new Set([...terms].map((t) => [...t].slice(0, TERM_MAX).join("")))];
  return [...made, ...pairTermsOf(made)];
}

/** The words of a name: split at anything not a letter or digit, plus each space-separated token whole and without punctuation. */
export function wordsOf(text: string): string[] {
  const words = new Set<string>();
  for (const clean of foldSearch(text).split(/\s+/)) {
    if (clean) words.add(clean);
    const joined = clean.replace(/[^\p{L}\p{N}]+/gu, "");
    if (joined) words.add(joined);
    for (const word of clean.split(/[^\p{L}\p{N}]+/u)) if (word) words.add(word);
  }
  return [...words];
}

/** The email whole, its local part, its domain, the domain's labels and its endings at a label. */
function emailTerms(email: string): string[] {
  const folded = foldSearch(email.trim());
  const at = folded.lastIndexOf("@");
  if (at < 0) return [folded];
  const domain = folded.slice(at + 1);
  const labels = domain.split(".");
  return [folded, folded.slice(0, at), ...labels.map((_, i) => labels.slice(i).join(".")), ...labels];
}

/** Forward terms (E.164 digits, national number with and without trunk prefix) and the reversed E.164 digits. */
export function phoneTerms(phoneKey: string | null): string[] {
  if (!phoneKey) return [];
  const digits = phoneKey.replace(/\D/g, "");
  if (!digits) return [];
  const forward = new Set([digits]);
  if (phoneKey.startsWith("+")) {
    const parsed = parsePhoneNumberFromString(phoneKey);
    if (parsed) {
      forward.add(String(parsed.nationalNumber));
      forward.add(parsed.formatNational().replace(/\D/g, ""));
    }
  }
  forward.delete("");
  return [...[...forward].map((d) => PHONE_FORWARD + d), PHONE_REVERSED + [...digits].reverse().join("")];
}

/** A term made only of letters, 4 or more: what one typo may reach (docs/api.md §11.6). */
export const TYPO_MIN_WORD = 4;
export const TYPO_MAX_WORD = 32;
export const isTypoWord = (term: string) => {
  const length = [...term].length;
  return length >= TYPO_MIN_WORD && length <= TYPO_MAX_WORD && /^\p{L}+$/u.test(term);
};

/** The keys a word is found by within one edit: itself and every string one deletion away. */
export function typoKeysOf(word: string): string[] {
  const chars = [...word];
  const keys = new Set([word]);
  for (let i = 0; i < chars.length; i++) keys.add(chars.slice(0, i).join("") + chars.slice(i + 1).join(""));
  return [...keys];
}

/** Optimal string alignment distance ≤ 1: one insertion, deletion, substitution or adjacent transposition. */
export function withinOneEdit(a: string, b: string): boolean {
  const x = [...a];
  const y = [...b];
  if (Math.abs(x.length - y.length) > 1) return false;
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  if (i === x.length && i === y.length) return true;
  const rest = (p: number, q: number) => x.slice(p).join("") === y.slice(q).join("");
  if (x.length === y.length) {
    if (rest(i + 1, i + 1)) return true; // substitution
    return x[i] === y[i + 1] && x[i + 1] === y[i] && rest(i + 2, i + 2); // transposition
  }
  return x.length > y.length ? rest(i + 1, i) : rest(i, i + 1);
}
