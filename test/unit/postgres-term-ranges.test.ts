/**
 * On PostgreSQL a search word's term range, read whole and sorted (docs/performance.md "Two
 * words: term bits"), comes from the primary key's index alone: the index carries each row's
 * order keys and term bits (db/postgres/0012_search_term_ranges.sql). Without them PostgreSQL
 * visits the table for every row of the range (120 ms for 13,700 rows at 1.1 M contacts).
 * The statements are the ones the list code runs (recorded), explained as run: PostgreSQL plans
 * an Index Only Scan only when the index holds every column the statement reads. (On the test
 * cluster, which commits asynchronously, VACUUM leaves the pages not all-visible, so the scan
 * still fetches rows from the table here; on a server autovacuum marks them.) PostgreSQL run
 * only (CRM_TEST_BACKEND=postgres).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { sql, type CompiledQuery, type KyselyPlugin } from "kysely";
import { listContactRows } from "../../src/contacts/list-query.ts";
import { resolveSearch } from "../../src/contacts/search/query.ts";
import { createContact } from "../../src/contacts/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";
import { createProject } from "../../src/projects/service.ts";
import { openPostgres, type OpenPostgres } from "../../src/storage/postgres/open.ts";
import { createTestDatabase, dropTestDatabase, testBackend } from "../helpers/postgres.ts";

const FIRST = ["Kevin", "Maria", "Mark", "Jean", "Laura", "Kenji"];
const LAST = ["Morrison", "Moreno", "Morales", "Brown", "Smith", "Ramos"];

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: a search word's sorted term range is read from the index alone", () => {
  let pg: OpenPostgres | undefined;
  let url: string | undefined;
  afterAll(async () => {
    await pg?.close();
    if (url) await dropTestDatabase(url).catch(() => {});
  });

  test("one word and two words: the range is an Index Only Scan of contact_search_terms_pkey", async () => {
    url = await createTestDatabase();
    pg = await openPostgres(url, 1); // one connection: the SETs below hold for every statement
    const db = pg.db;
    const project = await createProject(db, "ranges", isoNow(systemClock));
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < 600; i++) {
        const body = { firstName: FIRST[i % FIRST.length]!, lastName: `${LAST[i % LAST.length]!}` };
        await createContact(trx, project.id, body, { emitEvent: false, now: isoNow(systemClock) });
      }
    });
    // Statistics as autovacuum takes them.
    await sql`ANALYZE contact_search_terms`.execute(db);
    // A small table would be read whole; the question is which index a range read takes and whether it needs the table.
    await sql`SET enable_seqscan = off`.execute(db);
    await sql`SET enable_bitmapscan = off`.execute(db);

    for (const search of ["morri", "kevin morri"]) {
      const statements: CompiledQuery[] = [];
      const recorder: KyselyPlugin = {
        transformQuery: ({ node, queryId }) => (statements.push(db.getExecutor().compileQuery(node, queryId)), node),
        transformResult: async ({ result }) => result,
      };
      const recorded = db.withPlugin(recorder);
      const words = (await resolveSearch(recorded, project.id, search)).words;
      statements.length = 0;
      const rows = await listContactRows(recorded, project.id, { searchWords: words }, 50);
      expect(rows.length).toBeGreaterThan(0);
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
});

/** A recorded statement with its values written in, for EXPLAIN (which takes no parameters through Kysely here). */
function inline(s: CompiledQuery): string {
  return s.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = s.parameters[Number(n) - 1];
    return typeof value === "number" || typeof value === "bigint" ? `${value}` : `'${String(value).replace(/'/g, "''")}'`;
  });
}
