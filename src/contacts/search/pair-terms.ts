import { HEAD_LENGTH, termHead } from "../matching.ts";

/**
 * Pair terms (docs/performance.md "Two words: pair terms"): each contact also has a term for
 * every two of its 3-character heads, so a search of two words with different heads reads
 * the contacts that have both heads (at 1,000,000 contacts about 50 rows, at most a few
 * thousand) rather than one word's range of up to 16,000 rows or a walk of a dense head
 * group. A pair only narrows: each word is still tested on the rows it reads (term bits, then
 * the terms themselves), so a pair term never finds a contact the words do not.
 *
 * Exact by construction: a contact that matches a word has a term starting with the word, so
 * it has the word's head; a contact that matches two words of different heads has the pair
 * term of the two heads, or `PAIR_ANY` when it has more heads than `PAIR_MAX_HEADS`. The
 * phone's terms, the contactId and the heads of `UNPAIRED_HEADS` are left out (a word that
 * could find one never drives through a pair: `pairHeadOf`).
 */

/** Marks a pair term; control characters never reach a term made of text (src/contacts/search/terms.ts foldSearch). */
export const PAIR = "\u0003";
/** The one pair term of a contact with more heads than PAIR_MAX_HEADS (a long business name): every pair finds it. */
export const PAIR_ANY = `${PAIR}*`;
/** At most this many heads are paired: 66 pair terms. */
export const PAIR_MAX_HEADS = 12;

/**
 * Heads never paired: the top-level domains and the large mail providers, which half of all
 * contacts have (their email's `com`, `gmail.com`…) and which would pair with every other head
 * for nothing (a search of `gmail` and a name is rare). Fixed: a word with one of these heads
 * never drives through a pair (`pairHeadOf`), whatever else it could match ("compton").
 */
export const UNPAIRED_HEADS: ReadonlySet<string> = new Set(["com", "net", "org", "co.", "gma", "yah", "hot", "out", "icl", "aol", "gmx", "msn"]);

/** A term a pair is made from: text of a head's length or more, not a phone's, not the contactId, not a pair. */
const pairable = (term: string) => !/^[\u0001-\u0003]/.test(term) && !/^cr-\d+$/.test(term) && [...term].length >= HEAD_LENGTH;

/** The pair term of two different heads (in code-unit order, as `pairTermsOf` makes them). */
export const pairTerm = (a: string, b: string) => PAIR + (a < b ? a + b : b + a);

/** A contact's pair terms, from its other terms. */
export function pairTermsOf(terms: Iterable<string>): string[] {
  const heads = [...new Set([...terms].filter(pairable).map(termHead))].filter((h) => !UNPAIRED_HEADS.has(h)).sort();
  if (heads.length > PAIR_MAX_HEADS) return [PAIR_ANY];
  const pairs: string[] = [];
  for (let i = 0; i < heads.length; i++) for (let j = i + 1; j < heads.length; j++) pairs.push(PAIR + heads[i]! + heads[j]!);
  return pairs;
}

/**
 * The head a search word's one match has, when a pair can find the word: a text match (a
 * prefix or a whole term) of a head's length or more that could not find a phone's term
 * (markers) or a contactId (`cr-`, then digits), and whose head is paired. Null otherwise.
 */
export function pairHeadOf(matches: ReadonlyArray<{ term: string }>): string | null {
  if (matches.length !== 1) return null;
  const term = matches[0]!.term;
  if ([...term].length < HEAD_LENGTH || /^[\u0000-\u0003]/.test(term) || /^cr-\d*$/.test(term)) return null;
  const head = termHead(term);
  return UNPAIRED_HEADS.has(head) ? null : head;
}
