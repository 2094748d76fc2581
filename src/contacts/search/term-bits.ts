import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { SearchWord, TermMatch } from "./query.ts";
import { PAIR } from "./pair-terms.ts";
import { PHONE_FORWARD, PHONE_REVERSED } from "./terms.ts";

/**
 * A contact's term bits (docs/performance.md "Two words"): each of its term rows carries
 * which prefixes of 3, 4 and 5 characters its terms (but its phone's and its contactId) have, hashed into 104 bits (two columns
 * of 52, so each is a safe integer in JavaScript and a 64-bit one in both databases), and
 * each 3-character prefix hashed a second time into 104 more (columns c and d, migration
 * 0016): one bit of 104 let about a row in eleven through for a 3-letter word, two let one
 * in two hundred (docs/performance.md "Two words: a second hash"). A
 * search of several words drives by one word's rows and tests the other words on the row
 * already read: a contact whose bits lack a word's prefixes cannot match it. The bits only
 * rule out; a candidate they let through is still checked against its terms, so a
 * collision costs a lookup, never a wrong answer. Two words each common but rare together
 * ("mary thor": 70,000 and 8,000 rows, 19 contacts with both) took one index probe per
 * candidate; most are now refused in the row.
 */
export const TERM_BITS_PER_COLUMN = 52;
const BITS = TERM_BITS_PER_COLUMN * 2;
/** The prefix lengths hashed; a query word shorter than the shortest is not tested. */
const PREFIX_LENGTHS = [3, 4, 5] as const;
/** The columns of contact_search_terms holding a TermBits, in its order. */
export const BIT_COLUMNS = ["term_bits_a", "term_bits_b", "term_bits_c", "term_bits_d"] as const;
/** Every bit set: rows written before their bits were known match everything (db/0015_search_term_bits.sql, db/0016_search_term_bits_second_hash.sql). */
export const ALL_TERM_BITS = -1;

/** The four columns' values: a and b the first hash of every prefix, c and d the second of a 3-character one. */
export type TermBits = [a: number, b: number, c: number, d: number];
const NONE: TermBits = [0, 0, 0, 0];

/** FNV-1a over UTF-16 units from `seed`, reduced to a bit position of 104. */
function bitOf(prefix: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < prefix.length; i++) {
    h ^= prefix.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % BITS;
}
const FIRST_SEED = 0x811c9dc5;
/** The second hash's seed (FNV's offset plus the golden ratio's 32 bits): independent enough of the first. */
const SECOND_SEED = (0x811c9dc5 + 0x9e3779b1) >>> 0;

/**
 * The bit positions (0–207: a/b below 104, c/d above) a term sets, or a match of it needs:
 * its prefixes of 3, 4 and 5 characters that it has, and its 3-character prefix again.
 */
function positionsOf(term: string): number[] {
  const chars = [...term];
  const positions = PREFIX_LENGTHS.filter((n) => chars.length >= n).map((n) => bitOf(chars.slice(0, n).join(""), FIRST_SEED));
  if (chars.length >= PREFIX_LENGTHS[0]) positions.push(BITS + bitOf(chars.slice(0, PREFIX_LENGTHS[0]).join(""), SECOND_SEED));
  return positions;
}

/** The four columns' values of a set of positions (sums of distinct powers of two: exact below 2^53). */
function columnsOf(positions: Iterable<number>): TermBits {
  const columns: TermBits = [0, 0, 0, 0];
  for (const p of new Set(positions)) columns[Math.floor(p / TERM_BITS_PER_COLUMN)]! += 2 ** (p % TERM_BITS_PER_COLUMN);
  return columns;
}

/**
 * Terms left out of the bits: the phone's (four a contact, they would fill a third of the
 * bits), the contactId and the pair terms (src/contacts/search/pair-terms.ts: made of the
 * others). Such words usually drive a search themselves; as another word they are checked
 * against the terms (`untested`).
 */
const leftOut = (term: string) => term.startsWith(PHONE_FORWARD) || term.startsWith(PHONE_REVERSED) || term.startsWith(PAIR) || /^cr-\d+$/.test(term);
/** A match that could find a term left out (a prefix of one): its bits cannot rule a contact out. */
const untested = (term: string) => term.startsWith(PHONE_FORWARD) || term.startsWith(PHONE_REVERSED) || /^cr-\d*$/.test(term);

/** The term bits of a contact, from all of its terms (src/contacts/search/terms.ts searchTerms) but those left out. */
export function termBitsOf(terms: Iterable<string>): TermBits {
  const positions: number[] = [];
  for (const term of terms) if (!leftOut(term)) positions.push(...positionsOf(term));
  return columnsOf(positions);
}

/** The bits a contact must have for `match` to find one of its terms (a term starting with it, or equal, has its prefixes); none for a match not tested. */
export function bitsOfMatch(match: TermMatch): TermBits {
  return untested(match.term) ? NONE : columnsOf(positionsOf(match.term));
}

/**
 * How many distinct bits a word's weakest match tests (0: none, the word is too short to
 * test; 2 for 3 letters, 3 for 4, 4 for 5 or more). Two prefixes of a word can hash to one
 * bit ("ran" and "rand"): it tests one fewer.
 */
export function bitStrength(word: SearchWord): number {
  if (word.matches.length === 0) return 0;
  return Math.min(...word.matches.map((m) => (untested(m.term) ? 0 : new Set(positionsOf(m.term)).size)));
}

/**
 * The row under `alias` (contact_search_terms) may match `word`: for one of its matches the
 * row's bits hold all the match's bits. Null when a match needs no bit (too short): no test.
 */
export function mayMatchWord(alias: string, word: SearchWord): RawBuilder<SqlBool> | null {
  const tests: RawBuilder<SqlBool>[] = [];
  for (const match of word.matches) {
    const bits = bitsOfMatch(match);
    if (bits.every((v) => v === 0)) return null;
    // Literals, not parameters: integers computed here, so both backends do 64-bit arithmetic.
    const has = (column: string, value: number) => sql<SqlBool>`(${sql.ref(`${alias}.${column}`)} & ${sql.raw(String(value))}) = ${sql.raw(String(value))}`;
    const parts = BIT_COLUMNS.flatMap((column, i) => (bits[i] !== 0 ? [has(column, bits[i]!)] : []));
    tests.push(sql<SqlBool>`(${sql.join(parts, sql` AND `)})`);
  }
  if (tests.length === 0) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`(${sql.join(tests, sql` OR `)})`;
}
