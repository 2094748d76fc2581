/**
 * Which index a search's page reads (docs/api.md §11.6), chosen by counts this service takes
 * itself: src/contacts/list-query.ts reads the page through the driver chosen here.
 */
import { sql, type ExpressionBuilder, type SelectQueryBuilder } from "kysely";
import type { Database, Db } from "../../storage/schema.ts";
import { HEAD_LENGTH, termHead } from "../matching.ts";
import { PAIR_ANY, pairHeadOf, pairTerm } from "./pair-terms.ts";
import { projectSizeHint } from "./project-size.ts";
import { projectTermIn, type SearchWord, type TermMatch } from "./query.ts";
import { bitStrength } from "./term-bits.ts";

/**
 * The counts a request has already taken (`countUpTo`), by statement: relevance's tiers
 * (src/contacts/search/relevance.ts) count the same pair term. A count only chooses the
 * driver, never what is found, so one taken a moment before serves.
 */
export type RangeCounts = Map<string, number>;

/** Below this many matches a search prefix is sorted; above it, walked in list order. */
export const DENSE_PREFIX = 2000;
/**
 * Of several words, one whose range holds fewer than `sortedMax` rows is sorted, the others
 * tested by their bits on each row: at about 0.15 µs a row (SQLite, 1 M contacts), 2–3 ms.
 * `weakSortedMax`: the same for a driver whose other words test fewer bits than another
 * driver's would (a 3-letter word: 2 bits, about a row in 200 also needs a lookup). It was
 * 6,000 while a 3-letter word tested 1 bit; since migration 0016 its 2 bits let few rows
 * through, and 16,000 sorts "jean smi" by `jean` rather than walk the `smi` group
 * (docs/performance.md). (Tests lower them, to reach these paths on a small project.)
 */
export const sortedRangeLimits = { sortedMax: 16_000, weakSortedMax: 16_000 };
/** Two words drive by their pair term while its range is under the cap (src/contacts/search/pair-terms.ts); tests turn it off to reach the paths a dense pair takes. */
export const pairTermsDrive = { enabled: true };

/** A driver table under alias `t`: it carries contact_id and the order keys. */
export type DriverDb = Database & { t: { contact_id: number; updated_at: string; contact_number: number } };
export type DriverQuery = SelectQueryBuilder<DriverDb, "t", object>;
export type DriverBuilder = ExpressionBuilder<DriverDb, "t">;
export type DriverRow = { contact_id: number; updated_at: string; contact_number: number };
/**
 * `ordered`: its index yields rows in list order (walk it); otherwise its few matches are
 * sorted. Several `arms` (ordered walks: a word's near words or phone forms, each in its own
 * head group) are each walked to a page's LIMIT and merged.
 */
export interface Driver {
  arms: Array<(db: Db) => DriverQuery>;
  ordered: boolean;
  /** Its rows are term rows: the other words' term bits are tested on them first (src/contacts/search/term-bits.ts). */
  termRows?: boolean;
}

/**
 * Which search word drives, and how; the other words (`rest`) are per-candidate checks.
 * A word whose one match is a prefix of exactly 3 characters is a whole `head` group of
 * contact_search_terms_walk: walking it in list order reads only its matches, so it needs
 * no count. Otherwise each word's term rows (the union of its matches: a phone's digits
 * forward and reversed, a typo's near words) are counted up to a cap (index ranges, no
 * more) and the rarest drives: fewer than 2,000 matches take their ranges of the primary
 * key and are sorted; a denser word with one match of 3+ characters walks its head group,
 * one with several such matches merges their walks (`arms`); otherwise, past the cap (a
 * large share of the project, so candidates match often) no word drives (`driver: null`):
 * the page walks the contacts in list order, checking the words. Of several words, first:
 * the word that leaves the others the strongest term bits to test (2 or more bits each,
 * src/contacts/search/term-bits.ts) is sorted when its range holds fewer than the cap, or
 * `sortedMax` when counted on, rows: reading a range is cheap when most rows fail the bits.
 * When that fails and a dense word would be walked, a word of 4+ letters whose others test
 * fewer bits is sorted under `weakSortedMax` rows. A word implied by another ("ma" by "mar")
 * is never sorted. A word (or pair) counted 0 has no match: `none`, nothing more is read.
 */
export async function searchDriver(db: Db, projectId: string, words: SearchWord[], wanted: number, taken?: RangeCounts): Promise<{ driver: Driver | null; rest: SearchWord[]; none?: boolean }> {
  const range = (d: Db, word: SearchWord) => termRanges(d, projectId, word.matches);
  const walkable = (word: SearchWord) => (word.matches.length === 1 && [...word.matches[0]!.term].length >= HEAD_LENGTH ? word.matches[0]! : null);
  const walk = (match: TermMatch) => (d: Db) => {
    const q = d.selectFrom("contact_search_terms as t").where("t.project_id", "=", projectId).where("t.head", "=", termHead(match.term));
    if (match.prefix && [...match.term].length === HEAD_LENGTH) return q as unknown as DriverQuery;
    // The term only through substr(), which no index serves: with `term = …` both backends
    // took the primary key's range of the term and sorted it whole (a typo of "james":
    // 172,000 rows at 1 M contacts). One character more than the word matches the word alone.
    const length = [...match.term].length + (match.prefix ? 0 : 1);
    return q.where(sql<string>`substr(t.term, 1, ${length})`, "=", match.term) as unknown as DriverQuery;
  };
  const walked = (...matches: TermMatch[]): Driver => ({ arms: matches.map(walk), ordered: true, termRows: true });
  const sorted = (word: SearchWord): Driver => ({ arms: [(d: Db) => range(d, word) as unknown as DriverQuery], ordered: false, termRows: true });
  const merges = (word: SearchWord) => word.matches.length > 1 && word.matches.every((m) => [...m.term].length >= HEAD_LENGTH);
  const loneMatch = words.length === 1 ? walkable(words[0]!) : null;
  const lone = loneMatch !== null || (words.length === 1 && merges(words[0]!));
  if (loneMatch?.prefix && [...loneMatch.term].length === HEAD_LENGTH) return { driver: walked(loneMatch), rest: [] };
  // Sorting `cap` rows costs about what walking `wanted × contacts / cap` candidates does.
  const cap = Math.max(DENSE_PREFIX, Math.round(Math.sqrt(wanted * (await projectSizeHint(db, projectId)))));
  // Two words of different heads: the contacts with both heads (their pair term) are few; every word is tested on them.
  const pair = pairTermsDrive.enabled ? pairOf(words) : null;
  if (pair) {
    const n = await countUpTo(db, projectId, pair.matches, cap, taken);
    if (n === 0) return NONE;
    if (n < cap) {
      // Whole words (relevance's first tier, docs/api.md §11.6): one of them is often far rarer
      // than the pair ("jame" whole against every jam…+bro… contact): its range is sorted instead.
      const whole = words.every((w) => w.matches.every((m) => !m.prefix)) ? await rarestUnder(db, projectId, words, Math.min(n, DENSE_PREFIX), taken) : null;
      if (whole?.n === 0) return NONE;
      return whole ? { driver: sorted(whole.word), rest: words.filter((w) => w !== whole.word) } : { driver: sorted(pair), rest: words };
    }
  }
  const counts = await Promise.all(
    words.map(async (word, i) => {
      // A walkable word (or one whose walks merge) walks once past 2,000 (of several words, unless
      // one is sorted: counted on below, `sortedMax`): no need to count further.
      const limit = lone || walkable(word) || merges(word) ? DENSE_PREFIX : cap;
      const n = word.matches.length === 0 ? 0 : await countUpTo(db, projectId, word.matches, limit, taken);
      const match = walkable(word);
      return { word, i, n, counted: n < limit, match, length: match ? [...match.term].length : 0 };
    }),
  );
  if (counts.some((c) => c.n === 0)) return NONE;
  // Rarest first; among words past the cap, a walkable one, the longest (a longer prefix matches fewer).
  const rank = (c: { length: number; match: TermMatch | null }) => (c.match?.prefix && c.length === HEAD_LENGTH ? 1000 : c.length);
  counts.sort((a, b) => (a.n !== b.n ? a.n - b.n : rank(b) - rank(a) || a.i - b.i));
  const others = (word: SearchWord) => words.filter((w) => w !== word);
  // Several words, each other word tested by its bits on the row read (src/contacts/search/term-bits.ts):
  // sorting a word's whole range costs little more than reading it (most rows fail the bits), while a
  // walk in list order reads its head group until a page of contacts has every word, which, for two
  // words common apart and rare together ("mary thor"), is the whole group (150,000 rows at 1 M).
  // The driver is chosen so the words left to test have the strongest bits (a 3-letter word
  // tests 2 bits, about 1 row in 200 of the others passes; 4 letters, 3; 5 or more, 4).
  const weakest = (word: SearchWord) => Math.min(...others(word).map(bitStrength));
  // A word every contact of another word matches ("ma" of "mar") sorts a range holding the other's whole: never sorted.
  const implied = (word: SearchWord) => others(word).some((other) => impliedBy(word, other));
  const testable = words.length > 1 ? counts.filter((c) => weakest(c.word) > 0 && !implied(c.word)) : [];
  const strongest = Math.max(0, ...testable.map((c) => weakest(c.word)));
  // A word testing one bit would let too many rows through (none does since migration 0016: kept as the bound).
  const pool = strongest >= 2 ? testable.filter((c) => weakest(c.word) === strongest) : [];
  if (pool.length > 0 && pool[0]!.counted && pool[0]!.n < cap) return { driver: sorted(pool[0]!.word), rest: others(pool[0]!.word) };
  if (pool.length > 0) {
    // All past the cap: the likeliest rarest (the longest term; then the later word, a last name
    // after a first) is counted on to `sortedMax`, and sorted when under it.
    const likeliest = [...pool].sort((a, b) => longest(b.word) - longest(a.word) || b.i - a.i)[0]!;
    if ((await countUpTo(db, projectId, likeliest.word.matches, sortedRangeLimits.sortedMax, taken)) < sortedRangeLimits.sortedMax) return { driver: sorted(likeliest.word), rest: others(likeliest.word) };
  }
  const best = counts[0]!;
  const rest = words.filter((w) => w !== best.word);
  // A whole head group (a 3-letter prefix) walks at any count; a longer prefix or a whole term
  // ("jam" exact, the relevance's first tier) walks only when dense: under 2,000 its sorted
  // range is read, where its walk read the head group past every other term ("jam…": 25 ms).
  const walks = best.match && ((best.match.prefix && best.length === HEAD_LENGTH) || best.n >= DENSE_PREFIX);
  if (walks || best.n >= DENSE_PREFIX) {
    // Weaker bits (a 3-letter word left to test: 2 bits, where a longer word tests 3 or 4):
    // a range of up to `weakSortedMax` rows still costs a few ms, where the walk of a dense head
    // group until a page has every word can read it whole ("jam morri": 15 ms).
    // Only a word of 4 or more letters: a shorter one's range is never that small in a large
    // project, and it often overlaps the walked word ("ma mar": every walked row matches both).
    const weak = testable.filter((c) => !pool.includes(c) && longest(c.word) > HEAD_LENGTH).sort((a, b) => longest(b.word) - longest(a.word) || b.i - a.i)[0];
    if (weak && (weak.counted ? weak.n : await countUpTo(db, projectId, weak.word.matches, sortedRangeLimits.weakSortedMax, taken)) < sortedRangeLimits.weakSortedMax) {
      return { driver: sorted(weak.word), rest: others(weak.word) };
    }
  }
  if (walks) return { driver: walked(best.match!), rest };
  // A dense word of several matches (a typo's near words, a phone's forms), each at least a head long: its walks merged.
  if (best.n >= DENSE_PREFIX && merges(best.word)) return { driver: walked(...best.word.matches), rest };
  if (best.n >= cap) return { driver: null, rest: words };
  return { driver: sorted(best.word), rest };
}

/** Of `words`, the one with the fewest term rows when that is under `limit` (each counted up to it), and that count. */
async function rarestUnder(db: Db, projectId: string, words: SearchWord[], limit: number, taken?: RangeCounts): Promise<{ word: SearchWord; n: number } | null> {
  let best: { word: SearchWord; n: number } | null = null;
  for (const word of words) {
    const n = word.matches.length === 0 ? 0 : await countUpTo(db, projectId, word.matches, limit, taken);
    if (n < limit && (!best || n < best.n)) best = { word, n };
    if (best?.n === 0) break;
  }
  return best;
}

/**
 * The pair terms that find every contact with two of `words` (the first two whose heads a
 * pair can find and differ), as one word matching them (src/contacts/search/pair-terms.ts).
 */
function pairOf(words: SearchWord[]): SearchWord | null {
  const heads = [...new Set(words.map((w) => pairHeadOf(w.matches)).filter((h): h is string => h !== null))];
  if (heads.length < 2) return null;
  return { matches: [{ term: pairTerm(heads[0]!, heads[1]!), prefix: false }, { term: PAIR_ANY, prefix: false }], exact: [] };
}

/** A word no term of the project matches (counted 0): no contact has every word, nothing is read. */
const NONE = { driver: null, rest: [] as SearchWord[], none: true } as const;

/** Every term `other` matches starts with a prefix `word` matches: a contact with `other` has `word`. */
const impliedBy = (word: SearchWord, other: SearchWord) =>
  other.matches.length > 0 && other.matches.every((o) => word.matches.some((w) => w.prefix && o.term.startsWith(w.term)));

/** The longest term a word matches (a longer prefix matches fewer). */
const longest = (word: SearchWord) => Math.max(0, ...word.matches.map((m) => [...m.term].length));

/** The columns a driver reads from a term row: the contact, its order keys and its term bits. */
const TERM_ROW_COLUMNS = ["contact_id", "updated_at", "contact_number", "term_bits_a", "term_bits_b", "term_bits_c", "term_bits_d"] as const;

/**
 * The project's term rows in one of `matches`, as table `t`. Several matches are a UNION ALL
 * of one index range each: as an OR, PostgreSQL read the ranges through a BitmapOr and
 * visited a heap page per row, and read every range whole before a LIMIT could stop it (a
 * count of "3315"'s forward, reversed and plain ranges to 2,000: 13–85 ms for 10,672 rows of
 * the first); each range alone is an index-only scan of the primary key that stops at the
 * LIMIT. (A word's matches never overlap: a phone's forms each start with their own marker,
 * a typo's near words are whole terms; a row in two ranges would come twice, and its contact
 * still count once in the page.)
 */
function termRanges(db: Db, projectId: string, matches: TermMatch[]): DriverQuery {
  const one = (d: Db, m: TermMatch[]) => d.selectFrom("contact_search_terms as t").where((eb) => projectTermIn(eb, "t", projectId, m));
  if (matches.length <= 1) return one(db, matches) as unknown as DriverQuery;
  const arms = matches.map((m) => one(db, [m]).select(TERM_ROW_COLUMNS.map((c) => `t.${c}` as const)));
  const union = arms.slice(1).reduce((all, arm) => all.unionAll(arm as never), arms[0]!);
  return db.selectFrom(union.as("t")) as unknown as DriverQuery;
}

/**
 * The project's term rows in one of `matches` (`termRanges`), counted up to `limit`: no more
 * of the index is read. A UNION ALL of ranges is read range by range and stops once `limit`
 * rows are in: neither PostgreSQL's Append nor SQLite's compound co-routine reads further. A
 * count this request has `taken` already is not taken again.
 */
async function countUpTo(db: Db, projectId: string, matches: TermMatch[], limit: number, taken?: RangeCounts): Promise<number> {
  const key = `${projectId}\0${limit}\0${JSON.stringify(matches)}`;
  const kept = taken?.get(key);
  if (kept !== undefined) return kept;
  const row = await db
    .selectFrom(termRanges(db, projectId, matches).select("t.contact_id").limit(limit).as("m") as never)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  const n = Number((row as { n: number | string }).n);
  taken?.set(key, n);
  return n;
}

