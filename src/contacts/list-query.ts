import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from "kysely";
import { keysetAfter } from "../storage/keyset.ts";
import type { Database, Db } from "../storage/schema.ts";
import type { FilterOnly } from "../storage/port.ts";
import { filterOnlyIn, inListOrder } from "../storage/query.ts";
import { HEAD_LENGTH, termHead } from "./matching.ts";
import { hasTermIn, projectTermIn, type SearchWord, type TermMatch } from "./search/query.ts";
import { PAIR_ANY, pairHeadOf, pairTerm } from "./search/pair-terms.ts";
import { projectSizeHint } from "./search/project-size.ts";
import { bitStrength, mayMatchWord } from "./search/term-bits.ts";
import { contactRowsByIds, withType, type ContactView } from "./repository.ts";

export interface ContactFilters {
  emailKey?: string | null;
  phoneKey?: string | null;
  contactTypeIds?: string[];
  tagIds?: string[];
  updatedSince?: string;
  /** Each word must match (docs/api.md §11.6): src/contacts/search/query.ts. */
  searchWords?: SearchWord[];
  /** Leaves out contacts that match every one of these lists (a relevance tier already read). */
  notAll?: TermMatch[][];
  /** Keyset position: [updatedAt, contactNumber] of the last row of the previous page. */
  after?: [string, number];
  /** Contacts (by id) left out of the page: relevance's first tier, already read (src/contacts/search/relevance.ts). */
  leaveOut?: ReadonlySet<number>;
}

/**
 * The counts a request has already taken (`countUpTo`), by statement: relevance's tiers
 * (src/contacts/search/relevance.ts) count the same pair term. A count only chooses the
 * driver, never what is found, so one taken a moment before serves.
 */
export type RangeCounts = Map<string, number>;

/** Below this many matches a search prefix is sorted; above it, walked in list order. */
const DENSE_PREFIX = 2000;
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

/**
 * One page of GET /contacts (docs/api.md §11), `limit + 1` rows, newest update first. One
 * filter drives, chosen by kind and by counts we take ourselves, never by the planner's
 * statistics: an email or phone (contacts_email, contacts_phone: a handful of rows,
 * sorted), else the rarest search word (contact_search_terms), else the rarest tag
 * (contact_tags_recent), else a contact type (contacts_type), else the project in list
 * order (contacts_recent). Every other filter is a per-candidate check written with
 * `filterOnly`, so the driver's index is the only one the planner can pick: on a database
 * filled through the API, with no statistics, `?email=` walked the whole project
 * (docs/performance.md).
 */
export async function listContactRows(db: Db, projectId: string, f: ContactFilters, limit: number, counts?: RangeCounts): Promise<ContactView[]> {
  const { leaveOut } = f;
  if (!leaveOut?.size) return pageRows(db, projectId, f, limit, counts);
  // The page is read `leaveOut.size` rows further, those contacts dropped (a driver drops their ids before reading rows).
  const rows = await pageRows(db, projectId, { ...f, leaveOut: undefined }, limit + leaveOut.size, counts, leaveOut);
  return rows.filter((r) => !leaveOut.has(Number(r.id))).slice(0, limit + 1);
}

async function pageRows(db: Db, projectId: string, f: ContactFilters, limit: number, counts?: RangeCounts, skip?: ReadonlySet<number>): Promise<ContactView[]> {
  const rowsOf = (ids: number[]) => contactRowsByIds(db, projectId, skip ? ids.filter((id) => !skip.has(id)) : ids);
  if (f.contactTypeIds?.length === 0) return [];
  if (f.emailKey !== undefined || f.phoneKey !== undefined) return keyedRows(db, projectId, f, limit);
  const search = f.searchWords?.length ? await searchDriver(db, projectId, f.searchWords, limit + 1, counts) : null;
  if (search?.none) return [];
  if (search?.driver) return rowsOf(await drivenIds(db, search.driver, { ...f, searchWords: search.rest }, limit + 1));
  // No search word is rare enough to drive (only dense 1–2 letter words): they become checks.
  if (f.tagIds?.length) {
    const [first, ...rest] = await rarestTagFirst(db, f.tagIds);
    return rowsOf(await drivenIds(db, tagDriver(first!), { ...f, tagIds: rest }, limit + 1));
  }
  if (f.contactTypeIds) return typedRows(db, projectId, f, f.contactTypeIds, limit);
  // A trashed contact keeps its row (docs/api.md §19.3) and is left out here; the other paths find contacts through rows it no longer has.
  let q = withType(db).where("contacts.project_id", "=", projectId).where("contacts.deleted_at", "is", null);
  if (f.updatedSince) q = q.where("contacts.updated_at", ">=", f.updatedSince);
  if (f.searchWords?.length || f.notAll) q = q.where((eb) => candidateCondition(eb as never, { searchWords: f.searchWords, notAll: f.notAll }, filterOnlyIn(db)));
  if (f.after) q = q.where((eb) => keysetAfter(eb as never, ["contacts.updated_at", "contacts.contact_number"], f.after!, "desc"));
  return q.orderBy("contacts.updated_at", "desc").orderBy("contacts.contact_number", "desc").limit(limit + 1).execute();
}

/** By email (else phone) match key: its index gives the few candidates, sorted here. */
function keyedRows(db: Db, projectId: string, f: ContactFilters, limit: number): Promise<ContactView[]> {
  const filterOnly = filterOnlyIn(db);
  const byEmail = f.emailKey !== undefined;
  const rest: ContactFilters = { ...f, emailKey: undefined, phoneKey: byEmail ? f.phoneKey : undefined, after: undefined };
  let q = withType(db)
    .where("contacts.project_id", "=", projectId)
    .where(byEmail ? "contacts.email_key" : "contacts.phone_key", "=", (byEmail ? f.emailKey : f.phoneKey) ?? null)
    .where((eb) => candidateCondition(eb as never, rest, filterOnly));
  const order = [filterOnly("contacts.updated_at"), filterOnly("contacts.contact_number")] as const;
  if (f.after) q = q.where((eb) => keysetAfter(eb as never, order, f.after!, "desc"));
  return q.orderBy(order[0], "desc").orderBy(order[1], "desc").limit(limit + 1).execute();
}

/**
 * By contact type: each type's contacts_type range is in list order; several types (a
 * category) are merged here, at most `limit + 1` rows from each.
 */
async function typedRows(db: Db, projectId: string, f: ContactFilters, typeIds: string[], limit: number): Promise<ContactView[]> {
  const filterOnly = filterOnlyIn(db);
  const pages = await Promise.all(
    typeIds.map((typeId) => {
      // project_id as a filter only: otherwise contacts_recent would compete (types belong to one project).
      let q = withType(db)
        .where(filterOnly("contacts.project_id"), "=", projectId)
        .where("contacts.contact_type_id", "=", typeId)
        .where("contacts.deleted_at", "is", null);
      if (f.updatedSince) q = q.where("contacts.updated_at", ">=", f.updatedSince);
      if (f.searchWords?.length || f.notAll) q = q.where((eb) => candidateCondition(eb as never, { searchWords: f.searchWords, notAll: f.notAll }, filterOnly));
      if (f.after) q = q.where((eb) => keysetAfter(eb as never, ["contacts.updated_at", "contacts.contact_number"], f.after!, "desc"));
      return q.orderBy("contacts.updated_at", "desc").orderBy("contacts.contact_number", "desc").limit(limit + 1).execute();
    }),
  );
  if (pages.length === 1) return pages[0]!;
  return pages.flat().sort(listOrder).slice(0, limit + 1);
}

/** Newest update first, then the higher number (the list's order, docs/api.md §11). */
const listOrder = (a: { updated_at: string; contact_number: number }, b: { updated_at: string; contact_number: number }) =>
  a.updated_at === b.updated_at ? b.contact_number - a.contact_number : a.updated_at < b.updated_at ? 1 : -1;

/**
 * The filters a candidate row must also pass, none of them usable to pick an index
 * (`filterOnly`): the candidate comes from the driver, these only accept or refuse it.
 */
function candidateCondition(eb: ExpressionBuilder<Database, "contacts">, f: ContactFilters, filterOnly: FilterOnly): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [];
  if (f.emailKey !== undefined) conditions.push(eb(filterOnly("contacts.email_key"), "=", f.emailKey));
  if (f.phoneKey !== undefined) conditions.push(eb(filterOnly("contacts.phone_key"), "=", f.phoneKey));
  if (f.contactTypeIds) conditions.push(eb(filterOnly("contacts.contact_type_id"), "in", f.contactTypeIds));
  if (f.updatedSince) conditions.push(eb(filterOnly("contacts.updated_at"), ">=", f.updatedSince));
  for (const tagId of f.tagIds ?? []) {
    conditions.push(
      eb.exists(
        eb.selectFrom("contact_tags").select("contact_tags.tag_id").whereRef("contact_tags.contact_id", "=", "contacts.id").where(filterOnly("contact_tags.tag_id"), "=", tagId),
      ),
    );
  }
  conditions.push(...termConditions(eb as never, "contacts.id", f));
  return eb.and(conditions);
}

/** The search words' checks on the contact whose id is `contactId` (contact_search_terms_contact). */
function termConditions(eb: ExpressionBuilder<Database, never>, contactId: string, f: ContactFilters): Expression<SqlBool>[] {
  const conditions = (f.searchWords ?? []).map((word) => hasTermIn(eb, contactId, word.matches));
  if (f.notAll?.length) conditions.push(eb.not(eb.and(f.notAll.map((matches) => hasTermIn(eb, contactId, matches)))));
  return conditions;
}

/** A driver table under alias `t`: it carries contact_id and the order keys. */
type DriverDb = Database & { t: { contact_id: number; updated_at: string; contact_number: number } };
type DriverQuery = SelectQueryBuilder<DriverDb, "t", object>;
type DriverBuilder = ExpressionBuilder<DriverDb, "t">;
type DriverRow = { contact_id: number; updated_at: string; contact_number: number };
/**
 * `ordered`: its index yields rows in list order (walk it); otherwise its few matches are
 * sorted. Several `arms` (ordered walks: a word's near words or phone forms, each in its own
 * head group) are each walked to a page's LIMIT and merged.
 */
interface Driver {
  arms: Array<(db: Db) => DriverQuery>;
  ordered: boolean;
  /** Its rows are term rows: the other words' term bits are tested on them first (src/contacts/search/term-bits.ts). */
  termRows?: boolean;
}

/**
 * Contact ids in list order from a driver table (search terms or tags), with the filters
 * `f` leaves as per-candidate checks; a contact reached through several terms counts once.
 */
async function drivenIds(db: Db, driver: Driver, f: ContactFilters, wanted: number): Promise<number[]> {
  return driver.ordered ? inListOrder(db, (d) => readDriven(d, driver, f, wanted)) : readDriven(db, driver, f, wanted);
}

async function readDriven(db: Db, driver: Driver, f: ContactFilters, wanted: number): Promise<number[]> {
  const filterOnly = filterOnlyIn(db);
  const rest: ContactFilters = { contactTypeIds: f.contactTypeIds, tagIds: f.tagIds };
  const needsContact = rest.contactTypeIds !== undefined || !!rest.tagIds?.length;
  // A sorted driver's order keys are filters only, so its term range stays the only index choice.
  const key = (column: "updated_at" | "contact_number") => (driver.ordered ? sql.ref<string>(`t.${column}`) : filterOnly<string>(`t.${column}`));
  const ids: number[] = [];
  let after = f.after;
  for (let round = 0; round < 100 && ids.length < wanted; round++) {
    const position = after;
    const checks = { searchWords: f.searchWords, notAll: f.notAll };
    const checked = !!(checks.searchWords?.length || checks.notAll);
    // A sorted driver reads its whole range: when the bits test every other word, their terms
    // are looked up only for the page's rows (`hit`, below), not for every row the bits let
    // through. (A word of 1 or 2 letters tests no bit and lets every row through: the page
    // would hold few contacts with every word.)
    // `notAll` (relevance's second tier: not every word whole) has no bits, and rarely fails: looked up with the words.
    const bitsTestAll = !!driver.termRows && (f.searchWords ?? []).every((word) => bitStrength(word) >= 2);
    // Only the first page is looked up after: when it holds too few contacts with every word
    // (the words are rare together), the rest of the range is read once, each row that passes
    // the bits looked up in the same statement, rather than page by page.
    const lookUpAfter = round === 0 && checked && !driver.ordered && bitsTestAll;
    // Looked up after, the first page's rows are read with a quarter more than it needs, not
    // twice: the bits let few rows through that fail the lookup, and each row read is a
    // lookup, a page read for the first time on a cold cache (docs/performance.md).
    const batch = lookUpAfter ? wanted + Math.ceil(wanted / 4) : wanted * 2;
    const narrowed = (base: DriverQuery) => {
      let q = base;
      if (driver.termRows) {
        for (const word of f.searchWords ?? []) {
          const test = mayMatchWord("t", word);
          if (test) q = q.where(test);
        }
      }
      if (checked && !lookUpAfter) q = q.where((eb: DriverBuilder) => eb.and(termConditions(eb as never, "t.contact_id", checks)));
      if (needsContact) {
        q = q.where((eb: DriverBuilder) =>
          eb.exists(
            eb.selectFrom("contacts").select("contacts.id").whereRef("contacts.id", "=", "t.contact_id").where((c) => candidateCondition(c as never, rest, filterOnly)),
          ),
        );
      }
      if (f.updatedSince) q = q.where(key("updated_at"), ">=", f.updatedSince);
      if (position) q = q.where((eb: DriverBuilder) => keysetAfter(eb as never, [key("updated_at"), key("contact_number")], position, "desc"));
      return q.select(["t.contact_id", "t.updated_at", "t.contact_number"]);
    };
    // Each arm is its own walk to the batch's LIMIT, merged here: the batch's rows are among
    // each arm's first. (One compound statement merged the walks on SQLite, but PostgreSQL
    // appended the arms whole and sorted them.) A contact in several arms repeats, as in one walk: dropped below.
    const rows: Array<DriverRow & { hit?: unknown }> = [];
    for (const arm of driver.arms) {
      const walk = narrowed(arm(db)).orderBy(key("updated_at"), "desc").orderBy(key("contact_number"), "desc").limit(batch);
      if (!lookUpAfter) {
        rows.push(...(await walk.execute()));
        continue;
      }
      // The outer LIMIT keeps SQLite from flattening the page into its query (the lookups would run on every row before the sort).
      const page = db
        .selectFrom(walk.as("t") as never)
        .select((eb) => ["t.contact_id", "t.updated_at", "t.contact_number", eb.and(termConditions(eb as never, "t.contact_id", checks)).as("hit")] as never)
        .limit(batch);
      rows.push(...((await page.execute()) as Array<DriverRow & { hit: unknown }>));
    }
    if (driver.arms.length > 1 || lookUpAfter) rows.sort(listOrder).splice(batch);
    for (const r of rows) if ((!lookUpAfter || truthy(r.hit)) && !ids.includes(r.contact_id) && ids.length < wanted) ids.push(r.contact_id);
    if (rows.length < batch) break;
    const last = rows[rows.length - 1]!;
    after = [last.updated_at, last.contact_number];
  }
  return ids;
}

/** A boolean column as each backend returns it (SQLite: 0 or 1; PostgreSQL: true or false). */
const truthy = (value: unknown) => value === true || value === 1 || value === "1";

/** Several tags: the one with the fewest contacts (counted up to 2,000) drives; ties keep their order. */
async function rarestTagFirst(db: Db, tagIds: string[]): Promise<string[]> {
  if (tagIds.length === 1) return tagIds;
  const counted = await Promise.all(
    tagIds.map(async (tagId, i) => {
      const row = await db
        .selectFrom((d) => d.selectFrom("contact_tags").select("contact_id").where("tag_id", "=", tagId).limit(DENSE_PREFIX).as("m"))
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return { tagId, n: Number(row.n), i };
    }),
  );
  return counted.sort((a, b) => a.n - b.n || a.i - b.i).map((c) => c.tagId);
}

/** A tag's rows in list order (contact_tags_recent); the other tags are per-candidate checks. */
function tagDriver(tagId: string): Driver {
  return { arms: [(db) => db.selectFrom("contact_tags as t").where("t.tag_id", "=", tagId) as unknown as DriverQuery], ordered: true };
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
async function searchDriver(db: Db, projectId: string, words: SearchWord[], wanted: number, taken?: RangeCounts): Promise<{ driver: Driver | null; rest: SearchWord[]; none?: boolean }> {
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
