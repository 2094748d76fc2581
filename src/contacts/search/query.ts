import { sql, type Expression, type ExpressionBuilder, type SqlBool } from "kysely";
import type { Database, Db } from "../../storage/schema.ts";
import { prefixEnd } from "../matching.ts";
import { PHONE_FORWARD, PHONE_REVERSED, TERM_MAX, foldSearch, isTypoWord, typoKeysOf, withinOneEdit } from "./terms.ts";

/**
 * A `search` read into what each of its words matches (docs/api.md §11.6). Every word must
 * match (AND, any order); a word matches a contact that has a term in one of its `matches`.
 */
export interface TermMatch {
  term: string;
  /** true: any term starting with `term`; false: the term itself. */
  prefix: boolean;
}

export interface SearchWord {
  /** What the word matches: its prefix, or, for a phone, its digits forward, reversed and as text. */
  matches: TermMatch[];
  /** The matches that make it an exact word match (relevance rank 0); empty for a typo. */
  exact: TermMatch[];
}

export interface ResolvedSearch {
  words: SearchWord[];
  /** A word matched only through a typo: every contact found ranks as a typo match (rank 2). */
  typo: boolean;
}

/** At most this many words are read from a search; more are ignored. */
export const SEARCH_MAX_WORDS = 8;
/** A phone query has at least this many digits (docs/api.md §11.6). */
export const PHONE_MIN_DIGITS = 4;
/** A word of at least this many letters may be matched through one typo. */
export const TYPO_MIN_QUERY = 5;
/** Candidate words one typo away, at most (a query word near many words matches their union). */
const TYPO_MAX_CANDIDATES = 64;

type ParsedWord = { kind: "text"; text: string } | { kind: "phone"; digits: string; dialled: string[] };

const PHONE_CHARS = /^[\d\s().+-]+$/;

/**
 * Splits a search into words: runs of phone-like words (only digits, spaces, dashes, dots,
 * parentheses and `+`) with 4 or more digits together are one phone word; the rest are
 * folded text words.
 */
export function parseSearch(search: string): ParsedWord[] {
  const raw = search.toWellFormed().split(/\s+/).filter(Boolean);
  const words: ParsedWord[] = [];
  let run: string[] = [];
  const flush = () => {
    // "+44 (0)20 …": the trunk 0 in parentheses is not dialled after a country code.
    const digits = run.join("").replace(/\(0\)/g, "").replace(/\D/g, "");
    if (digits.length >= PHONE_MIN_DIGITS) words.push({ kind: "phone", digits, dialled: internationalForms(digits) });
    else for (const part of run) words.push(...textWords(part));
    run = [];
  };
  for (const word of raw) {
    if (PHONE_CHARS.test(word) && /\d/.test(word)) run.push(word);
    else {
      flush();
      words.push(...textWords(word));
    }
  }
  flush();
  const seen = new Set<string>();
  return words
    .filter((w) => {
      const key = w.kind === "text" ? `t:${w.text}` : `p:${w.digits}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, SEARCH_MAX_WORDS);
}

/** Digits dialled with an international prefix (00 in most countries, 011 from North America): also read without it. */
function internationalForms(digits: string): string[] {
  const forms = [digits];
  for (const prefix of ["011", "00"]) if (digits.startsWith(prefix) && digits.length - prefix.length >= PHONE_MIN_DIGITS) forms.push(digits.slice(prefix.length));
  return forms;
}

function textWords(word: string): ParsedWord[] {
  // Punctuation around a word is not part of it: "Lovelace, Ada" is two names.
  const folded = foldSearch(word).trim();
  const trimmed = /[\p{L}\p{N}]/u.test(folded) ? folded.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "") : folded;
  // A contactId's number is read without leading zeros, as the API reads `CR-007` (docs/api.md §11.1).
  const text = [...trimmed.replace(/^cr-0+(?=\d)/, "cr-")].slice(0, TERM_MAX).join("");
  return text ? [{ kind: "text", text }] : [];
}

/**
 * What each word of `search` matches in this project. A word of 5 or more letters with no
 * term starting with it in the project is matched through one typo: the project's words one
 * edit away (search_typo_keys), each as a whole term.
 */
export async function resolveSearch(db: Db, projectId: string, search: string): Promise<ResolvedSearch> {
  let typo = false;
  const words = await Promise.all(
    parseSearch(search).map(async (word): Promise<SearchWord> => {
      if (word.kind === "phone") {
        const { digits, dialled } = word;
        const reversed = [...digits].reverse().join("");
        return {
          matches: [
            ...dialled.map((d) => ({ term: PHONE_FORWARD + d, prefix: true })),
            { term: PHONE_REVERSED + reversed, prefix: true },
            { term: digits, prefix: true },
          ],
          exact: [...dialled.map((d) => ({ term: PHONE_FORWARD + d, prefix: false })), { term: digits, prefix: false }],
        };
      }
      const { text } = word;
      const plain: SearchWord = { matches: [{ term: text, prefix: true }], exact: [{ term: text, prefix: false }] };
      if ([...text].length < TYPO_MIN_QUERY || !isTypoWord(text) || (await hasPrefixMatch(db, projectId, text))) return plain;
      typo = true;
      const near = await wordsOneEditAway(db, projectId, text);
      return { matches: near.map((term) => ({ term, prefix: false })), exact: [] };
    }),
  );
  return { words, typo };
}

async function hasPrefixMatch(db: Db, projectId: string, text: string): Promise<boolean> {
  const row = await db
    .selectFrom("contact_search_terms")
    .select("contact_id")
    .where("project_id", "=", projectId)
    .where("term", ">=", text)
    .where("term", "<", prefixEnd(text))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The project's words one edit from `text`: they share a key (itself or one deletion), checked exactly after. */
async function wordsOneEditAway(db: Db, projectId: string, text: string): Promise<string[]> {
  const rows = await db
    .selectFrom("search_typo_keys")
    .select("word")
    .distinct()
    .where("project_id", "=", projectId)
    .where("key", "in", typoKeysOf(text))
    .limit(TYPO_MAX_CANDIDATES * 4)
    .execute();
  return rows
    .map((r) => r.word)
    .filter((w) => w !== text && withinOneEdit(text, w))
    .sort()
    .slice(0, TYPO_MAX_CANDIDATES);
}

/** `column` (a term) is one of `matches`: OR of equalities and prefix ranges, each an index range. */
export function termIn(eb: ExpressionBuilder<any, any>, column: string, matches: TermMatch[]): Expression<SqlBool> {
  const ref = sql.ref<string>(column);
  const one = (m: TermMatch) => (m.prefix ? eb.and([eb(ref, ">=", m.term), eb(ref, "<", prefixEnd(m.term))]) : eb(ref, "=", m.term));
  if (matches.length === 0) return sql<SqlBool>`1 = 0`;
  return matches.length === 1 ? one(matches[0]!) : eb.or(matches.map(one));
}

/**
 * The project's term rows (`alias`: contact_search_terms) in one of `matches`. Each branch of
 * the OR names the project itself: SQLite then reads each as its own range of the primary
 * key (a MULTI-INDEX OR); with the project outside the OR it scanned the project's terms.
 */
export function projectTermIn(eb: ExpressionBuilder<any, any>, alias: string, projectId: string, matches: TermMatch[]): Expression<SqlBool> {
  if (matches.length === 0) return sql<SqlBool>`1 = 0`;
  const project = eb(sql.ref(`${alias}.project_id`), "=", projectId);
  return eb.or(matches.map((m) => eb.and([project, termIn(eb, `${alias}.term`, [m])])));
}

/**
 * The contact whose id is `contactId` has a term in `matches` (contact_search_terms_contact):
 * a probe per candidate. The OFFSET keeps PostgreSQL from turning the EXISTS into a join
 * driven by the term's range over every project ("lau ken": 17,000 `ken` rows hashed, then
 * a probe for each, 210 ms, where the candidates that passed the bits needed 44 probes);
 * it changes nothing on SQLite (test/unit/postgres-term-ranges.test.ts checks the plan).
 */
export function hasTermIn(eb: ExpressionBuilder<Database, any>, contactId: string, matches: TermMatch[]): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom("contact_search_terms as o")
      .select("o.contact_id")
      .where("o.contact_id", "=", sql.ref<number>(contactId))
      .where((inner) => termIn(inner, "o.term", matches))
      .limit(1)
      .offset(0),
  );
}
