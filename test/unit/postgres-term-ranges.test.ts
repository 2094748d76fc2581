/**
 * On PostgreSQL a search word's term range, read whole and sorted (docs/performance.md "Two
 * words: term bits"), comes from the primary key's index alone: the index carries each row's
 * order keys and term bits (db/postgres/0012_search_term_ranges.sql). Without them PostgreSQL
 * visits the table for every row of the range (120 ms for 13,700 rows at 1.1 M contacts).
 * The statements are the ones the list code runs (recorded), explained as run: PostgreSQL plans
 * an Index Only Scan only when the index holds every column the statement reads. (On the test
 * cluster, which commits asynchronously, VACUUM leaves the pages not all-visible, so the scan
 * still fetches rows from the table here; on a server autovacuum marks them.) And a word
 * checked on each walked candidate stays a probe per candidate (src/contacts/search/query.ts
 * hasTermIn). PostgreSQL run only (CRM_TEST_BACKEND=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql, type CompiledQuery, type Kysely } from "kysely";
import { listContactRows } from "../../src/contacts/list-query.ts";
import { resolveSearch } from "../../src/contacts/search/query.ts";
import { createContact } from "../../src/contacts/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";
import { createProject } from "../../src/projects/service.ts";
import type { Database } from "../../src/storage/schema.ts";
import { openPostgres, type OpenPostgres } from "../../src/storage/postgres/open.ts";
import { createTestDatabase, dropTestDatabase, testBackend } from "../helpers/postgres.ts";

const FIRST = ["Kevin", "Maria", "Mark", "Jean", "Laura", "Kenji"];
const LAST = ["Morrison", "Moreno", "Morales", "Brown", "Smith", "Ramos"];

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: the plans of a search's term reads", () => {
  let pg: OpenPostgres | undefined;
  let url: string | undefined;
  afterAll(async () => {
    await pg?.close();
    if (url) await dropTestDatabase(url).catch(() => {});
  });

  let project: { id: string };
  beforeAll(async () => {
    url = await createTestDatabase();
    pg = await openPostgres(url, 1); // one connection: the SETs below hold for every statement
    project = await createProject(pg.db, "ranges", isoNow(systemClock));
    await pg.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 600; i++) {
        const body = { firstName: FIRST[i % FIRST.length]!, lastName: `${LAST[i % LAST.length]!}` };
        await createContact(trx, project.id, body, { emitEvent: false, now: isoNow(systemClock) });
      }
      for (let i = 0; i < 40; i++) {
        const body = { firstName: "Dana", lastName: "Phone", phone: `+1 202 555 ${String(100 + i).padStart(4, "0")}` };
        await createContact(trx, project.id, body, { emitEvent: false, now: isoNow(systemClock) });
      }
    });
    // Statistics as autovacuum takes them.
    await sql`ANALYZE contact_search_terms`.execute(pg.db);
    // A small table would be read whole; the question is which index a range read takes and whether it needs the table.
    await sql`SET enable_seqscan = off`.execute(pg.db);
    await sql`SET enable_bitmapscan = off`.execute(pg.db);
  }, 60_000);

  test("one word and two words: the range is an Index Only Scan of contact_search_terms_pkey", async () => {
    const db = pg!.db;
    for (const search of ["morri", "kevin morri"]) {
      const statements = await pageStatements(db, project.id, search);
      // The statement that reads the page: it selects the order keys from the term table, sorted.
      const page = statements.filter((s) => /from "contact_search_terms" as "t"/.test(s.sql) && /order by/.test(s.sql));
      expect(page.length).toBeGreaterThan(0);
      for (const s of page) {
        const plan = JSON.stringify((await sql.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${inline(s)}`).execute(db)).rows);
        const ranges = [...plan.matchAll(/"Node Type":"(Index Only Scan|Index Scan)","Parent Relationship":"[^"]*",[^{}]*?"Index Name":"contact_search_terms_pkey"/g)];
        const scans = [...plan.matchAll(/"Index Name":"contact_search_terms_pkey"/g)];
        expect({ search, scans: scans.length }).toEqual({ search, scans: ranges.length });
        expect(ranges.length).toBeGreaterThan(0);
        for (const r of ranges) expect({ search, node: r[1] }).toEqual({ search, node: "Index Only Scan" });
      }
    }
  }, 60_000);

  test("a word of several ranges (a phone's digits forward, reversed and as text) reads each range alone from contact_search_terms_pkey, never through a BitmapOr", async () => {
    // As one OR, PostgreSQL read the ranges through a BitmapOr and a Bitmap Heap Scan: every range
    // whole and a table page per row, before any LIMIT ("3315" at 1.1 M: 13–85 ms to count 2,000).
    // src/contacts/search/driver.ts termRanges makes them a UNION ALL. Bitmap scans are on for this test.
    const db = pg!.db;
    await sql`RESET enable_bitmapscan`.execute(db);
    try {
      const statements = (await pageStatements(db, project.id, "0123")).filter((s) => /from "contact_search_terms" as "t"/.test(s.sql) && !/"head" =/.test(s.sql) && /count\(\*\)|order by/.test(s.sql));
      // The count of the word's rows and the read of its sorted range (the statements run: a
      // UNION's arms are recorded on their own too, as Kysely builds them).
      expect(statements.some((s) => /count\(\*\)/.test(s.sql))).toBe(true);
      expect(statements.some((s) => /order by/.test(s.sql))).toBe(true);
      for (const s of statements) {
        const plan = JSON.stringify((await sql.raw(`EXPLAIN (FORMAT JSON) ${inline(s)}`).execute(db)).rows);
        expect(plan).not.toMatch(/Bitmap/);
        expect([...plan.matchAll(/"Index Name":"contact_search_terms_pkey"/g)].length).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await sql`SET enable_bitmapscan = off`.execute(db);
    }
  }, 60_000);

  test("a word's check on a walked candidate stays a probe per candidate (a SubPlan), never a join over the word's whole range", async () => {
    // A walk of one head group checks the other word in the WHERE clause (src/contacts/search/query.ts
    // hasTermIn). Without the subquery's OFFSET, PostgreSQL pulls the EXISTS up into a semi-join
    // driven by the word's range in every project ("lau ken": 210 ms at 1.1 M contacts, where 44
    // probes were needed). In a project this small, two 3-letter words are sorted rather than
    // walked (their bits test each other); a word of 2 letters, implied by the other, never drives.
    const db = pg!.db;
    const checked = (await pageStatements(db, project.id, "kev ke")).filter((s) => /from "contact_search_terms" as "t"/.test(s.sql) && /where .*exists \(/.test(s.sql));
    expect(checked.length).toBeGreaterThan(0);
    for (const s of checked) {
      const plan = JSON.stringify((await sql.raw(`EXPLAIN (FORMAT JSON) ${inline(s)}`).execute(db)).rows);
      expect(plan).not.toMatch(/"Join Type":"(Semi|Anti)"|Semi Join/);
      expect(plan).toMatch(/"Subplan Name":"(SubPlan|EXISTS)/);
    }
  }, 60_000);
});

/** The statements the list code runs for one page of `search` (the words resolved first, not recorded); the page has a contact. */
async function pageStatements(db: Kysely<Database>, projectId: string, search: string): Promise<CompiledQuery[]> {
  const statements: CompiledQuery[] = [];
  const recorded = db.withPlugin({
    transformQuery: ({ node, queryId }) => (statements.push(db.getExecutor().compileQuery(node, queryId)), node),
    transformResult: async ({ result }) => result,
  });
  const words = (await resolveSearch(recorded, projectId, search)).words;
  statements.length = 0;
  expect((await listContactRows(recorded, projectId, { searchWords: words }, 50)).length).toBeGreaterThan(0);
  return statements;
}

/** A recorded statement with its values written in, for EXPLAIN (which takes no parameters through Kysely here). */
function inline(s: CompiledQuery): string {
  return s.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = s.parameters[Number(n) - 1];
    return typeof value === "number" || typeof value === "bigint" ? `${value}` : `'${String(value).replace(/'/g, "''")}'`;
  });
}
