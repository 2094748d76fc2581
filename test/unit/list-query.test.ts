/**
 * The list drivers of GET /contacts (docs/api.md §11) against brute force on a real database:
 * a dense search prefix (walked), a rare one (sorted), a dense 1-letter word (checked on each
 * contact), several words (the rarest drives), a tag, several types, an email, and their
 * combinations give exactly the matching contacts in list order, page after page.
 */
import type { SearchWord } from "../../src/contacts/search/query.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CompiledQuery, Kysely, KyselyPlugin } from "kysely";
import { listContactRows, type ContactFilters } from "../../src/contacts/list-query.ts";
import { pairTermsDrive, sortedRangeLimits } from "../../src/contacts/search/driver.ts";
import { PAIR_ANY, pairTerm } from "../../src/contacts/search/pair-terms.ts";
import { resolveSearch } from "../../src/contacts/search/query.ts";
import { relevanceRows } from "../../src/contacts/search/relevance.ts";
import { findTagIds } from "../../src/reference/repository.ts";
import { createContact, patchContact } from "../../src/contacts/service.ts";
import { openDatabase } from "../../src/storage/sqlite/open.ts";
import type { Database } from "../../src/storage/schema.ts";
import { createProject } from "../../src/projects/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-list-query-"));
let db: Kysely<Database>;
let close: () => Promise<void>;
let projectId: string;
let typeIds: Record<string, string>;
interface Seeded { number: number; first: string; last: string; email: string; tags: string[]; type?: string }
const seeded: Seeded[] = [];

beforeAll(async () => {
  ({ db, close } = await openDatabase(join(dir, "l.db"), "NORMAL"));
  projectId = (await createProject(db, "l", isoNow(systemClock))).id;
  const firsts = ["Mark", "Maria", "Martin", "Marek", "Paul", "Zoe"];
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < 3000; i++) {
      const first = firsts[i % firsts.length]!;
      const last = i % 7 === 0 ? "Marsh" : "Stone";
      const email = `${first.toLowerCase()}${i}@example.com`;
      const tags = i % 5 === 0 ? ["five"] : i % 11 === 0 ? ["eleven"] : [];
      const c = await createContact(trx, projectId, { firstName: first, lastName: last, email, tags }, { emitEvent: false, now: isoNow(systemClock) });
      seeded.push({ number: Number(c.contactId.slice(3)), first, last, email, tags });
    }
  });
  // Touch some so updatedAt order differs from creation order.
  await db.transaction().execute(async (trx) => {
    for (const n of [5, 17, 1200, 2999]) await patchContact(trx, projectId, n, { notes: `touched ${n}` }, isoNow(systemClock));
  });
  // Some Leads and some Others, for filters on several types at once.
  const types = await db.selectFrom("contact_types").select(["id", "category"]).where("project_id", "=", projectId).execute();
  typeIds = Object.fromEntries(types.map((t) => [t.category, t.id]));
  await db.transaction().execute(async (trx) => {
    for (const s of seeded) {
      const type = s.number % 3 === 0 ? "Lead" : s.number % 7 === 0 ? "Other" : undefined;
      if (!type) continue;
      await patchContact(trx, projectId, s.number, { contactTypeId: typeIds[type]! }, isoNow(systemClock));
      s.type = type;
    }
  });
}, 120_000);
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

async function walkAll(f: ContactFilters, limit: number, project = projectId) {
  const out: number[] = [];
  let after: [string, number] | undefined;
  for (;;) {
    const rows = await listContactRows(db, project, { ...f, after }, limit);
    const page = rows.slice(0, limit);
    out.push(...page.map((r) => r.contact_number));
    if (rows.length <= limit) return out;
    const last = page[page.length - 1]!;
    after = [last.updated_at, last.contact_number];
  }
}

async function expected(match: (s: Seeded) => boolean) {
  const rows = await db.selectFrom("contacts").select(["contact_number", "updated_at"]).where("project_id", "=", projectId).execute();
  const keep = new Set(seeded.filter(match).map((s) => s.number));
  return rows
    .filter((r) => keep.has(r.contact_number))
    .sort((a, b) => (a.updated_at === b.updated_at ? b.contact_number - a.contact_number : a.updated_at < b.updated_at ? 1 : -1))
    .map((r) => r.contact_number);
}

/** Search words as resolveSearch makes them for plain text: each a prefix (docs/api.md §11.6). */
const prefixWords = (tokens: string[]): SearchWord[] => tokens.map((term) => ({ matches: [{ term, prefix: true }], exact: [{ term, prefix: false }] }));
const words = (s: Seeded) => [s.first.toLowerCase(), s.last.toLowerCase(), s.email, `cr-${s.number}`];
const prefixMatch = (s: Seeded, token: string) => words(s).some((w) => w.startsWith(token));

describe("GET /contacts drivers", () => {
  test("a dense prefix (walked in list order) returns every match once, in order", async () => {
    // "mar" matches Mark, Maria, Martin, Marek, Marsh and their emails: over 2,000 term rows.
    expect(await walkAll({ searchWords: prefixWords(["mar"]) }, 50)).toEqual(await expected((s) => prefixMatch(s, "mar")));
  });

  test("a longer prefix of a dense group (about 1,000 matches, sorted) returns every match in order", async () => {
    expect(await walkAll({ searchWords: prefixWords(["mari"]) }, 37)).toEqual(await expected((s) => prefixMatch(s, "mari")));
  });

  test("a rare prefix (sorted) returns every match in order", async () => {
    expect(await walkAll({ searchWords: prefixWords(["paul1"]) }, 20)).toEqual(await expected((s) => prefixMatch(s, "paul1")));
  });

  test("a short prefix and a multi-word search", async () => {
    expect(await walkAll({ searchWords: prefixWords(["z"]) }, 100)).toEqual(await expected((s) => prefixMatch(s, "z")));
    expect(await walkAll({ searchWords: prefixWords(["mar", "marsh"]) }, 30)).toEqual(
      await expected((s) => prefixMatch(s, "mar") && prefixMatch(s, "marsh")),
    );
  });

  test("a dense word of several matches (a typo's near words, a phone's forms) merges their walks: every match once, in order, page after page", async () => {
    // Mark, Maria, Martin… and Marsh: each contact has several of these terms, and is listed once.
    const near: SearchWord[] = [{ matches: ["mar", "mark", "marsh"].map((term) => ({ term, prefix: true })), exact: [] }];
    const either = (s: Seeded) => ["mar", "mark", "marsh"].some((t) => prefixMatch(s, t));
    for (const limit of [7, 50]) expect(await walkAll({ searchWords: near }, limit)).toEqual(await expected(either));
    const since = (await db.selectFrom("contacts").select("updated_at").where("contact_number", "=", 1200).executeTakeFirstOrThrow()).updated_at;
    const times = new Map((await db.selectFrom("contacts").select(["contact_number", "updated_at"]).execute()).map((r) => [r.contact_number, r.updated_at]));
    expect(await walkAll({ searchWords: [...near, ...prefixWords(["paul"])], updatedSince: since }, 5)).toEqual(
      await expected((s) => either(s) && prefixMatch(s, "paul") && times.get(s.number)! >= since),
    );
  });

  test("a tag drives the list; a second tag and search combine with it", async () => {
    const [five] = (await findTagIds(db, projectId, ["five"]))!;
    const [eleven] = (await findTagIds(db, projectId, ["eleven"]))!;
    expect(await walkAll({ tagIds: [five!] }, 50)).toEqual(await expected((s) => s.tags.includes("five")));
    expect(await walkAll({ tagIds: [five!, eleven!] }, 50)).toEqual([]);
    expect(await walkAll({ tagIds: [eleven!], searchWords: prefixWords(["mark"]) }, 10)).toEqual(
      await expected((s) => s.tags.includes("eleven") && prefixMatch(s, "mark")),
    );
  });

  test("updatedSince and email filters combine with a dense search", async () => {
    const since = (await db.selectFrom("contacts").select("updated_at").where("contact_number", "=", 1200).executeTakeFirstOrThrow()).updated_at;
    const times = new Map((await db.selectFrom("contacts").select(["contact_number", "updated_at"]).execute()).map((r) => [r.contact_number, r.updated_at]));
    expect(await walkAll({ searchWords: prefixWords(["mar"]), updatedSince: since }, 5)).toEqual(
      await expected((s) => prefixMatch(s, "mar") && times.get(s.number)! >= since),
    );
    expect(await walkAll({ searchWords: prefixWords(["mar"]), emailKey: "maria1@example.com" }, 5)).toEqual([2]);
  });

  test("several contact types (a category) merge their walks in list order, page after page", async () => {
    const types = [typeIds.Lead!, typeIds.Other!];
    expect(await walkAll({ contactTypeIds: types }, 70)).toEqual(await expected((s) => s.type === "Lead" || s.type === "Other"));
    const since = (await db.selectFrom("contacts").select("updated_at").where("contact_number", "=", 1500).executeTakeFirstOrThrow()).updated_at;
    const times = new Map((await db.selectFrom("contacts").select(["contact_number", "updated_at"]).execute()).map((r) => [r.contact_number, r.updated_at]));
    expect(await walkAll({ contactTypeIds: types, updatedSince: since }, 33)).toEqual(
      await expected((s) => (s.type === "Lead" || s.type === "Other") && times.get(s.number)! >= since),
    );
    expect(await walkAll({ contactTypeIds: [] }, 10)).toEqual([]);
  });

  test("an email or phone drives; type, tags and every search word are checked on its few rows", async () => {
    const [five] = (await findTagIds(db, projectId, ["five"]))!;
    // Contact 1 (index 0): Mark Marsh, mark0@example.com, tag five, type Customer.
    expect(await walkAll({ emailKey: "mark0@example.com", searchWords: prefixWords(["mar", "marsh"]), tagIds: [five!], contactTypeIds: [typeIds.Customer!] }, 5)).toEqual([1]);
    expect(await walkAll({ emailKey: "mark0@example.com", searchWords: prefixWords(["mar", "stone"]) }, 5)).toEqual([]);
    expect(await walkAll({ emailKey: "mark0@example.com", contactTypeIds: [typeIds.Lead!] }, 5)).toEqual([]);
    expect(await walkAll({ emailKey: "mark0@example.com", phoneKey: "+14155550100" }, 5)).toEqual([]);
  });

  test("a dense 1-letter word (no driver: the contacts are walked) alone, with a tag and with a type", async () => {
    const [five] = (await findTagIds(db, projectId, ["five"]))!;
    expect(await walkAll({ searchWords: prefixWords(["m"]) }, 150)).toEqual(await expected((s) => prefixMatch(s, "m")));
    expect(await walkAll({ searchWords: prefixWords(["m", "s"]) }, 90)).toEqual(await expected((s) => prefixMatch(s, "m") && prefixMatch(s, "s")));
    expect(await walkAll({ searchWords: prefixWords(["m"]), tagIds: [five!] }, 40)).toEqual(await expected((s) => prefixMatch(s, "m") && s.tags.includes("five")));
    expect(await walkAll({ searchWords: prefixWords(["m"]), contactTypeIds: [typeIds.Lead!, typeIds.Other!] }, 40)).toEqual(
      await expected((s) => prefixMatch(s, "m") && (s.type === "Lead" || s.type === "Other")),
    );
  });

  test("several words: the rarest drives, in any order, and each must match", async () => {
    const both = await expected((s) => prefixMatch(s, "mar") && prefixMatch(s, "stone"));
    expect(both.length).toBeGreaterThan(0);
    expect(await walkAll({ searchWords: prefixWords(["mar", "stone"]) }, 25)).toEqual(both);
    expect(await walkAll({ searchWords: prefixWords(["stone", "mar"]) }, 25)).toEqual(both);
    expect(await walkAll({ searchWords: prefixWords(["m", "marsh", "paul"]) }, 25)).toEqual(await expected((s) => ["m", "marsh", "paul"].every((t) => prefixMatch(s, t))));
  });

  test("two words, the rarer sorted: the other is tested by its term bits, looked up for the page's rows only, and every match comes once, in order, page after page", async () => {
    for (const tokens of [["paul1", "stone"], ["paul1", "marsh"], ["marsh", "zoe1"], ["stone", "paul2", "paul"]]) {
      const want = await expected((s) => tokens.every((t) => prefixMatch(s, t)));
      expect(want.length).toBeGreaterThan(0);
      for (const limit of [2, 7, 50]) expect({ tokens, limit, got: await walkAll({ searchWords: prefixWords(tokens) }, limit) }).toEqual({ tokens, limit, got: want });
    }
    // A word the bits cannot test (2 letters) is checked on every candidate instead.
    expect(await walkAll({ searchWords: prefixWords(["paul1", "st"]) }, 5)).toEqual(await expected((s) => prefixMatch(s, "paul1") && prefixMatch(s, "st")));
  });

  test("when more of the first rows read fail their lookup than the quarter read beyond the page, the rest of the range is read and every match still comes once, in order", async () => {
    // Contacts CR-1000 to CR-1999 (and CR-1, CR-10…) are left out by `notAll`: a long run of
    // rows in list order that pass the bits and fail the lookup.
    const notAll = [[{ term: "cr-1", prefix: true }]];
    for (const tokens of [["pau", "sto"], ["paul", "stone"], ["mar", "sto"]]) {
      const want = await expected((s) => tokens.every((t) => prefixMatch(s, t)) && !`cr-${s.number}`.startsWith("cr-1"));
      expect(want.length).toBeGreaterThan(0);
      for (const limit of [3, 7, 50]) expect({ tokens, limit, got: await walkAll({ searchWords: prefixWords(tokens), notAll }, limit) }).toEqual({ tokens, limit, got: want });
    }
  });

  test("a word (or two words' pair) no term of the project matches answers an empty page at once: no driver is read, nor any contact", async () => {
    for (const tokens of [["zzzz"], ["zzzz", "mar"], ["mar", "zzzz1"], ["paul", "zoe"], ["zzzz", "m"]]) {
      // The statements run (a subquery is handed to plugins too, but only a statement run has a result).
      const compiled = new Map<unknown, string>();
      const run: string[] = [];
      const recorder: KyselyPlugin = {
        transformQuery: ({ node, queryId }) => (compiled.has(queryId) || compiled.set(queryId, db.getExecutor().compileQuery(node, queryId).sql), node),
        transformResult: async ({ result, queryId }) => (run.push(compiled.get(queryId)!), result),
      };
      expect(await listContactRows(db.withPlugin(recorder), projectId, { searchWords: prefixWords(tokens) }, 10)).toEqual([]);
      expect({ tokens, read: run.filter((sql) => !sql.startsWith("select count(*)") && !sql.startsWith('select "contact_count"')) }).toEqual({ tokens, read: [] });
    }
    // ("paul zoe": both names exist, never on one contact: their pair term has no row.)
    expect(await expected((s) => prefixMatch(s, "paul") && prefixMatch(s, "zoe"))).toEqual([]);
  });

  test("a rare prefix (sorted) with updatedSince and a type, page after page", async () => {
    const since = (await db.selectFrom("contacts").select("updated_at").where("contact_number", "=", 100).executeTakeFirstOrThrow()).updated_at;
    const times = new Map((await db.selectFrom("contacts").select(["contact_number", "updated_at"]).execute()).map((r) => [r.contact_number, r.updated_at]));
    expect(await walkAll({ searchWords: prefixWords(["paul1"]), updatedSince: since, contactTypeIds: [typeIds.Lead!] }, 7)).toEqual(
      await expected((s) => prefixMatch(s, "paul1") && s.type === "Lead" && times.get(s.number)! >= since),
    );
  });
});

describe("GET /contacts pages: whole rows, limit + 1 of them, in list order", () => {
  const FILTERS: Array<[string, () => Promise<ContactFilters>]> = [
    ["no filter (the project in list order)", async () => ({})],
    ["a dense prefix (walked)", async () => ({ searchWords: prefixWords(["mar"]) })],
    ["a rarer prefix (sorted)", async () => ({ searchWords: prefixWords(["mari"]) })],
    ["a dense 1-letter word (checked on each contact)", async () => ({ searchWords: prefixWords(["m"]) })],
    ["a tag", async () => ({ tagIds: (await findTagIds(db, projectId, ["five"]))! })],
    ["several contact types", async () => ({ contactTypeIds: [typeIds.Lead!, typeIds.Other!] })],
    ["one contact type and a word", async () => ({ contactTypeIds: [typeIds.Lead!], searchWords: prefixWords(["mar"]) })],
  ];

  for (const [name, filters] of FILTERS)
    test(`${name}: exactly limit + 1 rows when more match, so the page knows there is more`, async () => {
      for (const limit of [1, 10]) expect(await listContactRows(db, projectId, await filters(), limit)).toHaveLength(limit + 1);
    });

  for (const [name, filters] of FILTERS)
    test(`${name}: each row is the whole contact with its type's name and category`, async () => {
      const bySeed = new Map(seeded.map((s) => [s.number, s]));
      const rows = await listContactRows(db, projectId, await filters(), 25);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        const s = bySeed.get(row.contact_number)!;
        expect([row.project_id, row.first_name, row.last_name, row.email]).toEqual([projectId, s.first, s.last, s.email]);
        const type = s.type ?? "Customer";
        expect([row.type_name, row.type_category]).toEqual([type, type]);
      }
    });

  for (const [name, filters] of FILTERS)
    test(`${name}: contacts left out by id (relevance's first tier) are not on the page, which still holds limit + 1 rows`, async () => {
      const f = await filters();
      const all = await listContactRows(db, projectId, f, 30);
      const leaveOut = new Set(all.filter((_, i) => i % 3 !== 1).slice(0, 12).map((r) => Number(r.id)));
      const page = await listContactRows(db, projectId, { ...f, leaveOut }, 10);
      expect(page.map((r) => r.contact_number)).toEqual(all.filter((r) => !leaveOut.has(Number(r.id))).slice(0, 11).map((r) => r.contact_number));
    });

  test("an empty set of contact types (a category with no type) matches nothing, whatever else is asked", async () => {
    expect(await listContactRows(db, projectId, { contactTypeIds: [] }, 10)).toHaveLength(0);
    expect(await listContactRows(db, projectId, { contactTypeIds: [], searchWords: prefixWords(["mar"]) }, 10)).toHaveLength(0);
    expect(await listContactRows(db, projectId, { contactTypeIds: [], emailKey: "mark0@example.com" }, 10)).toHaveLength(0);
  });
});

describe("GET /contacts by email or phone, and several types, on contacts whose update order is not their number order", () => {
  let k: string;
  const types: Record<string, string> = {};
  // Minutes after 2026-01-01T00:00Z at which contact n (1-based) was last written.
  const MINUTE = [5, 1, 7, 3, 8, 2, 6, 4];
  const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();

  beforeAll(async () => {
    k = (await createProject(db, "keyed", isoNow(systemClock))).id;
    const rows = await db.selectFrom("contact_types").select(["id", "category"]).where("project_id", "=", k).execute();
    for (const r of rows) types[r.category] = r.id;
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < MINUTE.length; i++) {
        const contactTypeId = i % 2 === 0 ? types.Lead! : types.Other!;
        await createContact(trx, k, { firstName: `Dup${i + 1}`, email: "Dup@Example.com", contactTypeId }, { emitEvent: false, now: at(MINUTE[i]!) });
      }
      await createContact(trx, k, { firstName: "Solo", email: "solo@example.com", phone: "+1 415 555 0100" }, { emitEvent: false, now: at(9) });
      await createContact(trx, k, { firstName: "Solo2", email: "solo@example.com", phone: "+1 415 555 0199" }, { emitEvent: false, now: at(9) });
    });
  });

  /** Contact numbers 1–8 in list order: newest update first, then the higher number. */
  const listOrder = (numbers: number[]) =>
    [...numbers].sort((a, b) => (MINUTE[a - 1] === MINUTE[b - 1] ? b - a : MINUTE[b - 1]! - MINUTE[a - 1]!));
  const DUPS = [1, 2, 3, 4, 5, 6, 7, 8];

  test("an email shared by more contacts than a page is walked page after page, in list order", async () => {
    expect(listOrder(DUPS)).toEqual([5, 3, 7, 1, 8, 4, 6, 2]);
    for (const limit of [1, 3, 8]) expect(await walkAll({ emailKey: "dup@example.com" }, limit, k)).toEqual(listOrder(DUPS));
    expect(await listContactRows(db, k, { emailKey: "dup@example.com" }, 3)).toHaveLength(4);
  });

  test("with an email, updatedSince and the types are checked on its rows", async () => {
    const since = at(4);
    expect(await walkAll({ emailKey: "dup@example.com", updatedSince: since }, 2, k)).toEqual(listOrder(DUPS.filter((n) => MINUTE[n - 1]! >= 4)));
    expect(await walkAll({ emailKey: "dup@example.com", contactTypeIds: [types.Other!] }, 2, k)).toEqual(listOrder([2, 4, 6, 8]));
  });

  test("an email and a phone must both match the same contact", async () => {
    expect(await walkAll({ emailKey: "solo@example.com", phoneKey: "+14155550100" }, 5, k)).toEqual([9]);
    expect(await walkAll({ emailKey: "solo@example.com", phoneKey: "+14155550199" }, 5, k)).toEqual([10]);
    expect(await walkAll({ emailKey: "solo@example.com", phoneKey: "+14155550111" }, 5, k)).toEqual([]);
    expect(await walkAll({ emailKey: "solo@example.com" }, 5, k)).toEqual([10, 9]);
    expect(await walkAll({ phoneKey: "+14155550199" }, 5, k)).toEqual([10]);
  });

  test("several types merge in list order (by update), not in number order, page after page", async () => {
    for (const limit of [1, 3, 10]) expect(await walkAll({ contactTypeIds: [types.Lead!, types.Other!] }, limit, k)).toEqual(listOrder(DUPS));
    expect(await listContactRows(db, k, { contactTypeIds: [types.Lead!, types.Other!] }, 3)).toHaveLength(4);
  });
});

/**
 * Which filter drives (docs/api.md §11: "must stay fast at a million contacts"): the rows a page
 * reads are bounded by the rarest tag or word, so these tests look at the statement that
 * walks a driver table (contact_tags or contact_search_terms under alias `t`) and at the
 * counting statements run to choose it.
 */
describe("GET /contacts: the rarest filter drives", () => {
  // The paths a pair too dense to drive takes (past the cap, at a size no unit test builds).
  beforeAll(() => void (pairTermsDrive.enabled = false));
  afterAll(() => void (pairTermsDrive.enabled = true));
  async function driving(f: ContactFilters, limit = 10) {
    const statements: CompiledQuery[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => (statements.push(db.getExecutor().compileQuery(node, queryId)), node),
      transformResult: async ({ result }) => result,
    };
    await listContactRows(db.withPlugin(recorder), projectId, f, limit);
    // (Kysely hands a subquery to plugins too: the page around it, when there is one, is the statement run.)
    const drivers = statements.filter((st) => st.sql.startsWith('select "t"."contact_id", "t"."updated_at", "t"."contact_number"'));
    const driver = drivers.find((st) => st.sql.includes(' as "hit" from (')) ?? drivers[0];
    // A sorted driver's other words are looked up on its page only (`hit`): their parameters come first.
    const outer = driver?.sql.split(' as "hit" from (');
    const looked = outer && outer.length > 1 ? outer[0]!.split("?").length - 1 : 0;
    const params = ((driver?.parameters ?? []) as unknown[]).slice(looked);
    const lookedUp = ((driver?.parameters ?? []) as unknown[]).slice(0, looked);
    const [byTag, byHead] = [driver?.sql.includes('from "contact_tags" as "t"'), driver?.sql.includes('"t"."head" = ?')];
    // The driver's own parameters come first: a tag id; or project, head and, unless the word is the head (a 3-letter prefix), the word's length and the word; or project and the word's range.
    const whole = byHead && !driver!.sql.includes("substr(t.term");
    const own = byTag ? 1 : whole ? 2 : byHead ? 4 : 3;
    return {
      counts: statements.filter((st) => st.sql.startsWith("select count(*)")).length,
      tag: byTag ? params[0] : undefined,
      walked: whole ? params[1] : byHead ? params[3] : undefined,
      ranged: driver && !byTag && !byHead ? params[1] : undefined,
      /** Words and tag ids the driver checks on each candidate (prefix ends and the limit left out). */
      checked: [...lookedUp, ...params.slice(own)].filter((p) => typeof p === "string" && !p.endsWith("\u{10FFFF}")),
    };
  }

  test("one tag drives without counting anything", async () => {
    const [five] = (await findTagIds(db, projectId, ["five"]))!;
    expect(await driving({ tagIds: [five!] })).toMatchObject({ counts: 0, tag: five });
  });

  test("of several tags, the one with fewer contacts drives, in whichever order they are given", async () => {
    const [five, eleven] = (await findTagIds(db, projectId, ["five", "eleven"]))!;
    expect(await driving({ tagIds: [five!, eleven!] })).toMatchObject({ counts: 2, tag: eleven, checked: [five] });
    expect(await driving({ tagIds: [eleven!, five!] })).toMatchObject({ counts: 2, tag: eleven, checked: [five] });
  });

  test("a lone 3-letter word walks its head group without counting", async () => {
    expect(await driving({ searchWords: prefixWords(["mar"]) })).toMatchObject({ counts: 0, walked: "mar" });
  });

  test("a lone dense word of 4+ letters walks its head group (no range of 2,000+ rows is sorted)", async () => {
    expect(await driving({ searchWords: prefixWords(["stone"]) })).toMatchObject({ walked: "stone", ranged: undefined });
  });

  test("a lone rare word of 4+ letters takes its range, sorted", async () => {
    expect(await driving({ searchWords: prefixWords(["paul1"]) })).toMatchObject({ ranged: "paul1", walked: undefined });
  });

  test("a lone whole word of 3 letters under 2,000 rows (relevance's first tier) takes its range, sorted, not its head group's walk", async () => {
    const zoe: SearchWord[] = [{ matches: [{ term: "zoe", prefix: false }], exact: [] }];
    expect(await driving({ searchWords: zoe })).toMatchObject({ ranged: "zoe", walked: undefined });
    const want = await expected((s) => s.first === "Zoe");
    expect(want.length).toBe(500);
    for (const limit of [7, 50]) expect(await walkAll({ searchWords: zoe }, limit)).toEqual(want);
  });

  test("of several words the rarest drives; only the others are checked on each candidate", async () => {
    for (const tokens of [["stone", "paul1"], ["paul1", "stone"]]) {
      expect(await driving({ searchWords: prefixWords(tokens) })).toMatchObject({ ranged: "paul1", checked: ["stone"] });
    }
  });

  test("a dense word of several matches, each at least a head long, walks each match's head group in list order, not the project", async () => {
    const statements: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => (statements.push(db.getExecutor().compileQuery(node, queryId).sql), node),
      transformResult: async ({ result }) => result,
    };
    const near: SearchWord[] = [{ matches: ["mark", "marsh", "stone"].map((term) => ({ term, prefix: false })), exact: [] }];
    await listContactRows(db.withPlugin(recorder), projectId, { searchWords: near }, 10);
    const walks = statements.filter((sql) => sql.includes('"t"."head" = ?') && sql.includes('order by "t"."updated_at" desc'));
    expect(walks).toHaveLength(3);
    expect(statements.some((sql) => sql.includes('"contacts"."deleted_at" is null and exists'))).toBe(false);
  });

  test("of several dense words, the one that leaves the strongest term bits to test drives, its range sorted while under 16,000 rows", async () => {
    // "stone" tests 3 bits on each of mar's rows; "mar" would test only 1 on stone's.
    for (const tokens of [["stone", "mar"], ["mar", "stone"]]) {
      expect(await driving({ searchWords: prefixWords(tokens) })).toMatchObject({ ranged: "mar", walked: undefined, checked: ["stone"] });
    }
  });

  test("when the word with the strongest bits to test is past sortedMax, a word of 4+ letters whose range is under weakSortedMax is sorted rather than a dense head group walked", async () => {
    // The limits lowered to this project's size: mar's rows (about 4,500) are past sortedMax, stone's (about 2,600) under weakSortedMax.
    const saved = { ...sortedRangeLimits };
    Object.assign(sortedRangeLimits, { sortedMax: 2500, weakSortedMax: 3000 });
    try {
      for (const tokens of [["stone", "mar"], ["mar", "stone"]]) {
        expect(await driving({ searchWords: prefixWords(tokens) })).toMatchObject({ ranged: "stone", walked: undefined, checked: ["mar"] });
        const want = await expected((s) => prefixMatch(s, "mar") && prefixMatch(s, "stone"));
        expect(want.length).toBeGreaterThan(0);
        for (const limit of [7, 50]) expect(await walkAll({ searchWords: prefixWords(tokens) }, limit)).toEqual(want);
      }
      // Under weakSortedMax no more: the dense 3-letter word is walked, as before.
      Object.assign(sortedRangeLimits, { weakSortedMax: 2000 });
      expect(await driving({ searchWords: prefixWords(["stone", "mar"]) })).toMatchObject({ walked: "mar", checked: ["stone"] });
    } finally {
      Object.assign(sortedRangeLimits, saved);
    }
  });

  test("of several dense words whose bits test little (3 letters or fewer), a 3-letter one (its head group holds only its matches) is walked", async () => {
    for (const tokens of [["ma", "mar"], ["mar", "ma"]]) {
      expect(await driving({ searchWords: prefixWords(tokens) })).toMatchObject({ walked: "mar", checked: ["ma"] });
    }
  });
});

describe("GET /contacts: two words of different heads drive by their pair term", () => {
  async function driverParameters(f: ContactFilters, project = projectId) {
    const statements: CompiledQuery[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => (statements.push(db.getExecutor().compileQuery(node, queryId)), node),
      transformResult: async ({ result }) => result,
    };
    await listContactRows(db.withPlugin(recorder), project, f, 10);
    // The statements that read rows in list order (a count's ranges, handed to plugins too, are not the driver).
    const read = (st: CompiledQuery) => st.sql.startsWith('select "t"."contact_id", "t"."updated_at", "t"."contact_number"') && st.sql.includes(" order by ");
    lookedUpForPage = statements.some((st) => st.sql.includes(' as "hit" from ('));
    return statements.filter(read).flatMap((st) => st.parameters as unknown[]);
  }
  /** Whether the last driverParameters looked the words up for the page's rows only (`hit`). */
  let lookedUpForPage = false;

  test("the pair term of the two heads (and the many-heads term) is the range read, and each word is still tested: every match once, in order, page after page", async () => {
    for (const tokens of [["mar", "stone"], ["stone", "mar"], ["paul", "marsh"], ["marti", "sto"], ["zoe", "marsh"]]) {
      const params = await driverParameters({ searchWords: prefixWords(tokens) });
      const heads = tokens.map((t) => t.slice(0, 3));
      expect(params).toContain(pairTerm(heads[0]!, heads[1]!));
      expect(params).toContain(PAIR_ANY);
      const want = await expected((s) => tokens.every((t) => prefixMatch(s, t)));
      expect(want.length).toBeGreaterThan(0);
      for (const limit of [7, 50]) expect(await walkAll({ searchWords: prefixWords(tokens) }, limit)).toEqual(want);
    }
  });

  test("a pair whose heads both match but whose words do not (mark stone: the heads of mar and sto) finds nobody wrongly", async () => {
    const tokens = ["marku", "stonex"];
    expect(await walkAll({ searchWords: prefixWords(tokens) }, 10)).toEqual([]);
    expect(await walkAll({ searchWords: prefixWords(["marek", "stone"]) }, 10)).toEqual(await expected((s) => s.first === "Marek" && s.last === "Stone"));
  });

  test("words of one head, a contactId, an unpaired head (com) or shorter than a head take the other drivers, with the same answers", async () => {
    // Every contact's email ends in .com: `com` matches them all (the label's term).
    const matches = (s: Seeded, t: string) => t === "com" || prefixMatch(s, t);
    for (const tokens of [["mar", "mark"], ["ma", "stone"], ["cr-1", "stone"], ["marsh", "com"]]) {
      const params = await driverParameters({ searchWords: prefixWords(tokens) });
      expect(params.some((p) => typeof p === "string" && p.startsWith("\u0003"))).toBe(false);
      const want = await expected((s) => tokens.every((t) => matches(s, t)));
      expect(want.length).toBeGreaterThan(0);
      expect(await walkAll({ searchWords: prefixWords(tokens) }, 50)).toEqual(want);
    }
  });

  test("whole words (relevance's first tier): a word rarer than the pair sorts its own range, and every word is still tested", async () => {
    const whole = (tokens: string[]): SearchWord[] => tokens.map((term) => ({ matches: [{ term, prefix: false }], exact: [] }));
    // marek (500 rows) against the pair of mar and sto (every Mar… Stone: about 1,700).
    for (const tokens of [["marek", "stone"], ["stone", "marek"]]) {
      const params = await driverParameters({ searchWords: whole(tokens) });
      expect(params).toContain("marek");
      expect(params).not.toContain(pairTerm("mar", "sto"));
      const want = await expected((s) => s.first === "Marek" && s.last === "Stone");
      expect(want.length).toBeGreaterThan(0);
      for (const limit of [7, 50]) expect(await walkAll({ searchWords: whole(tokens) }, limit)).toEqual(want);
    }
    // No contact has the whole word "mar": nobody, without reading the pair's range.
    expect(await driverParameters({ searchWords: whole(["mar", "stone"]) })).not.toContain(pairTerm("mar", "sto"));
    expect(await walkAll({ searchWords: whole(["mar", "stone"]) }, 10)).toEqual([]);
    // Whole words whose pair is the rarer: the pair drives.
    expect(await driverParameters({ searchWords: whole(["zoe", "marsh"]) })).toContain(pairTerm("mar", "zoe"));
    expect(await walkAll({ searchWords: whole(["zoe", "marsh"]) }, 10)).toEqual(await expected((s) => s.first === "Zoe" && s.last === "Marsh"));
  });

  test("relevance's second tier (not every word whole) through the pair: every match once, in order, page after page", async () => {
    const notAll = [[{ term: "marek", prefix: false }], [{ term: "stone", prefix: false }]];
    const params = await driverParameters({ searchWords: prefixWords(["mar", "stone"]), notAll });
    expect(params).toContain(pairTerm("mar", "sto"));
    expect(lookedUpForPage).toBe(true);
    const want = await expected((s) => prefixMatch(s, "mar") && prefixMatch(s, "stone") && !(s.first === "Marek" && s.last === "Stone"));
    expect(want.length).toBeGreaterThan(1000);
    for (const limit of [7, 50, 200]) expect(await walkAll({ searchWords: prefixWords(["mar", "stone"]), notAll }, limit)).toEqual(want);
  });

  test("sort=relevance counts the pair's range once for both tiers, and its first page is the whole words, then the rest, each newest first", async () => {
    const other = (await createProject(db, "relevance-pair", isoNow(systemClock))).id;
    const made: Array<{ number: number; whole: boolean }> = [];
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < 12; i++) {
        const whole = i % 3 === 0;
        const body = whole ? { firstName: "Ann", lastName: "Lee" } : { firstName: "Anna", lastName: "Leeson" };
        const c = await createContact(trx, other, body, { emitEvent: false, now: isoNow(systemClock) });
        made.push({ number: Number(c.contactId.slice(3)), whole });
      }
    });
    const newestFirst = (xs: typeof made) => xs.map((m) => m.number).sort((a, b) => b - a);
    const search = await resolveSearch(db, other, "ann lee");
    for (const limit of [50, 4, 3]) {
      const statements: CompiledQuery[] = [];
      const recorder: KyselyPlugin = {
        transformQuery: ({ node, queryId }) => (statements.push(db.getExecutor().compileQuery(node, queryId)), node),
        transformResult: async ({ result }) => result,
      };
      const rows = await relevanceRows(db.withPlugin(recorder), other, { searchWords: search.words }, search, undefined, limit);
      const pairCounts = statements.filter((st) => st.sql.startsWith("select count(*)") && (st.parameters as unknown[]).includes(pairTerm("ann", "lee")));
      expect({ limit, pairCounts: pairCounts.length }).toEqual({ limit, pairCounts: 1 });
      const want = [...newestFirst(made.filter((m) => m.whole)), ...newestFirst(made.filter((m) => !m.whole))].slice(0, limit + 1);
      expect({ limit, got: rows.map((r) => [r.contact_number, r.rank]) }).toEqual({ limit, got: want.map((n) => [n, made.find((m) => m.number === n)!.whole ? 0 : 1]) });
    }
  });

  test("a contact with more heads than are paired is found through the many-heads term", async () => {
    const other = (await createProject(db, "many-heads", isoNow(systemClock))).id;
    const business = "Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliet Kilo Lima Mike";
    const made = await createContact(db, other, { firstName: "Quentin", lastName: "Stone", businessName: business }, { emitEvent: false, now: isoNow(systemClock) });
    await createContact(db, other, { firstName: "Quentin", lastName: "Rivers" }, { emitEvent: false, now: isoNow(systemClock) });
    const rows = await listContactRows(db, other, { searchWords: prefixWords(["quen", "sto"]) }, 10);
    expect(rows.map((r) => r.contact_number)).toEqual([Number(made.contactId.slice(3))]);
    expect((await listContactRows(db, other, { searchWords: prefixWords(["kilo", "quen"]) }, 10)).map((r) => r.contact_number)).toEqual([Number(made.contactId.slice(3))]);
  });
});
