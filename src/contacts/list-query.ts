import { sql, type Expression, type ExpressionBuilder, type SqlBool } from "kysely";
import { keysetAfter } from "../storage/keyset.ts";
import type { Database, Db } from "../storage/schema.ts";
import type { FilterOnly } from "../storage/port.ts";
import { filterOnlyIn, inListOrder } from "../storage/query.ts";
import { DENSE_PREFIX, searchDriver, type Driver, type DriverBuilder, type DriverQuery, type DriverRow, type RangeCounts } from "./search/driver.ts";
import { hasTermIn, type SearchWord, type TermMatch } from "./search/query.ts";
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
