import type { PoolClient } from "pg";
import { termBitsOf } from "../contacts/search/term-bits.ts";
import type { SqliteHandle } from "../runtime/types.ts";

/**
 * The step of migration 0015_search_term_bits (PostgreSQL 0011_search_term_bits): every row
 * of contact_search_terms is copied into contact_search_terms_with_bits with its contact's
 * term bits (src/contacts/search/term-bits.ts), then the new table takes the old one's name
 * and indexes. The bits come from the term rows themselves (a contact's bits are those of
 * all its terms), read contact by contact through contact_search_terms_contact in windows of
 * contact ids, and staged one row per contact in a temporary table; the copy then reads the
 * old table in key order and writes the new one in the same order, so the indexes are made
 * once, at the end, by the database's sorter. It runs in the migration's transaction:
 * stopped halfway, the database is as it was. Measured at 1,000,000 contacts in
 * docs/operations.md §3.3.
 */

/** Contact ids per read window. */
const WINDOW = 5_000;
/** Staged rows per INSERT (3 values each). */
const STAGE_ROWS = 500;

const STAGED = "term_bits_staged";
const COLUMNS = "project_id, term, contact_id, head, updated_at, contact_number";

/** The indexes of contact_search_terms, made after the copy (db/0015_search_term_bits.sql lists them). */
const SQLITE_INDEXES = [
  "CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term, term_bits_a, term_bits_b)",
  "CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term)",
];
const POSTGRES_INDEXES = [
  "CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term) INCLUDE (contact_id, term_bits_a, term_bits_b)",
  "CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term)",
];

/** One staged row per contact of a window's term rows (ordered by contact): [contact_id, a, b]. */
function bitsOfWindow(rows: ReadonlyArray<{ contact_id: number | string; term: string }>): number[][] {
  const staged: number[][] = [];
  let current: number | null = null;
  let terms: string[] = [];
  const flush = () => {
    if (current !== null) staged.push([current, ...termBitsOf(terms)]);
  };
  for (const row of rows) {
    const id = Number(row.contact_id);
    if (id !== current) {
      flush();
      current = id;
      terms = [];
    }
    terms.push(row.term);
  }
  flush();
  return staged;
}

const valuesOf = (count: number, param: (n: number) => string) =>
  Array.from({ length: count }, (_, r) => `(${param(r * 3 + 1)}, ${param(r * 3 + 2)}, ${param(r * 3 + 3)})`).join(", ");

/** One line before a long wait and one after, as the rebuild of 0014 says (src/storage/search-rebuild.ts). */
function announce(): () => void {
  const started = performance.now();
  console.error("crm: adding term bits to the search index (once, docs/operations.md §3.3); the server listens when it is done");
  return () => console.error(`crm: term bits added in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** SQLite: synchronous, on the raw handle, in the runner's transaction. Returns the contacts staged. */
export function termBitsStepSqlite(raw: SqliteHandle): number {
  raw.exec(`CREATE TEMP TABLE ${STAGED} (contact_id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b INTEGER NOT NULL)`);
  const last = Number(raw.all<{ m: number | null }>("SELECT max(contact_id) AS m FROM contact_search_terms")[0]?.m ?? 0);
  const done = last > 0 ? announce() : () => {};
  const read = "SELECT contact_id, term FROM contact_search_terms WHERE contact_id > ? AND contact_id <= ? ORDER BY contact_id";
  let contacts = 0;
  for (let from = 0; from < last; from += WINDOW) {
    const staged = bitsOfWindow(raw.all<{ contact_id: number; term: string }>(read, [from, from + WINDOW]));
    contacts += staged.length;
    for (let i = 0; i < staged.length; i += STAGE_ROWS) {
      const part = staged.slice(i, i + STAGE_ROWS);
      raw.all(`INSERT INTO ${STAGED} (contact_id, a, b) VALUES ${valuesOf(part.length, () => "?")}`, part.flat());
    }
  }
  // The old table outer, in its key order (CROSS JOIN keeps it outer): the new one is written in order.
  raw.exec(
    `INSERT INTO contact_search_terms_with_bits (${COLUMNS}, term_bits_a, term_bits_b)
     SELECT t.project_id, t.term, t.contact_id, t.head, t.updated_at, t.contact_number, s.a, s.b
     FROM contact_search_terms AS t CROSS JOIN ${STAGED} AS s ON s.contact_id = t.contact_id
     ORDER BY t.project_id, t.term, t.contact_id`,
  );
  raw.exec(`DROP TABLE ${STAGED}`);
  raw.exec("DROP TABLE contact_search_terms");
  raw.exec("ALTER TABLE contact_search_terms_with_bits RENAME TO contact_search_terms");
  for (const index of SQLITE_INDEXES) raw.exec(index);
  done();
  return contacts;
}

/** PostgreSQL: on the connection holding the start lock, in the file's transaction. Returns the contacts staged. */
export async function termBitsStepPostgres(client: PoolClient): Promise<number> {
  await client.query(`CREATE TEMP TABLE ${STAGED} (contact_id bigint PRIMARY KEY, a bigint NOT NULL, b bigint NOT NULL) ON COMMIT DROP`);
  const last = Number((await client.query<{ m: string | null }>("SELECT max(contact_id) AS m FROM contact_search_terms")).rows[0]?.m ?? 0);
  const done = last > 0 ? announce() : () => {};
  const read = "SELECT contact_id, term FROM contact_search_terms WHERE contact_id > $1 AND contact_id <= $2 ORDER BY contact_id";
  const stage = `INSERT INTO ${STAGED} (contact_id, a, b) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[])`;
  let contacts = 0;
  for (let from = 0; from < last; from += WINDOW) {
    const staged = bitsOfWindow((await client.query<{ contact_id: string; term: string }>(read, [from, from + WINDOW])).rows);
    if (staged.length === 0) continue;
    contacts += staged.length;
    await client.query(stage, [0, 1, 2].map((c) => staged.map((row) => row[c])));
  }
  await client.query(
    `INSERT INTO contact_search_terms_with_bits (${COLUMNS}, term_bits_a, term_bits_b)
     SELECT t.project_id, t.term, t.contact_id, t.head, t.updated_at, t.contact_number, s.a, s.b
     FROM contact_search_terms AS t JOIN ${STAGED} AS s ON s.contact_id = t.contact_id`,
  );
  await client.query("DROP TABLE contact_search_terms");
  await client.query("ALTER TABLE contact_search_terms_with_bits RENAME TO contact_search_terms");
  await client.query("ALTER TABLE contact_search_terms RENAME CONSTRAINT contact_search_terms_with_bits_pkey TO contact_search_terms_pkey");
  await client.query(
    "ALTER TABLE contact_search_terms RENAME CONSTRAINT contact_search_terms_with_bits_contact_id_fkey TO contact_search_terms_contact_id_fkey",
  );
  for (const index of POSTGRES_INDEXES) await client.query(index);
  await client.query("ANALYZE contact_search_terms");
  done();
  return contacts;
}
