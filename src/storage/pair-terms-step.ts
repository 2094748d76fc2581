import type { PoolClient } from "pg";
import { termHead } from "../contacts/matching.ts";
import { pairTermsOf } from "../contacts/search/pair-terms.ts";
import type { SqliteHandle } from "../runtime/types.ts";

/**
 * The step of migration 0017_search_pair_terms (PostgreSQL 0015): every contact that has
 * search terms gets its pair terms (src/contacts/search/pair-terms.ts), made from the term
 * rows it has, with the order keys and term bits those rows carry. Term rows are read
 * contact by contact through contact_search_terms_contact in windows of contact ids, and the
 * new rows written by multi-row inserts that skip a row already there (a database upgraded
 * from before 0014 got its pairs in that rebuild). Nothing is read from the contacts. It runs
 * in the migration's transaction: stopped halfway, the database is as it was. Measured at
 * 1,110,000 contacts in docs/operations.md §3.3.
 */

/** Contact ids per read window. */
const WINDOW = 5_000;
/** Rows per INSERT: 10 values a row, within both backends' bound-parameter limits. */
const INSERT_ROWS = 500;
const COLUMNS = "project_id, term, contact_id, head, updated_at, contact_number, term_bits_a, term_bits_b, term_bits_c, term_bits_d";
const READ_COLUMNS = "contact_id, project_id, term, updated_at, contact_number, term_bits_a, term_bits_b, term_bits_c, term_bits_d";

interface TermRow {
  contact_id: number | string;
  project_id: string;
  term: string;
  updated_at: string;
  contact_number: number | string;
  term_bits_a: number | string;
  term_bits_b: number | string;
  term_bits_c: number | string;
  term_bits_d: number | string;
}

/** The pair rows of a window's term rows (ordered by contact), each with the order keys and bits of its contact's first row. */
export function pairRowsOf(rows: readonly TermRow[]): unknown[][] {
  const made: unknown[][] = [];
  let first: TermRow | null = null;
  let terms: string[] = [];
  const flush = () => {
    if (!first) return;
    const f = first;
    const bits = [f.term_bits_a, f.term_bits_b, f.term_bits_c, f.term_bits_d].map(Number);
    for (const pair of pairTermsOf(terms)) made.push([f.project_id, pair, Number(f.contact_id), termHead(pair), f.updated_at, Number(f.contact_number), ...bits]);
  };
  for (const row of rows) {
    if (!first || Number(row.contact_id) !== Number(first.contact_id)) {
      flush();
      first = row;
      terms = [];
    }
    terms.push(row.term);
  }
  flush();
  return made;
}

/** One line before a long wait and one after, as the rebuild of 0014 says (src/storage/search-rebuild.ts). */
function announce(): (rows: number) => void {
  const started = performance.now();
  console.error("crm: adding pair terms to the search index (once, docs/operations.md §3.3); the server listens when it is done");
  return (rows) => console.error(`crm: ${rows} pair terms added in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** SQLite's multi-row insert of `rows` pair rows, skipping any already there. */
const sqliteInsertOf = (rows: number) => `INSERT OR IGNORE INTO contact_search_terms (${COLUMNS}) VALUES ${Array(rows).fill(`(${Array(10).fill("?").join(", ")})`).join(", ")}`;

/** SQLite: synchronous, on the raw handle, in the runner's transaction. Returns the pair rows written. */
export function pairTermsStepSqlite(raw: SqliteHandle): number {
  const last = Number(raw.all<{ m: number | null }>("SELECT max(contact_id) AS m FROM contact_search_terms")[0]?.m ?? 0);
  const done = last > 0 ? announce() : () => {};
  const read = `SELECT ${READ_COLUMNS} FROM contact_search_terms WHERE contact_id > ? AND contact_id <= ? ORDER BY contact_id`;
  let written = 0;
  for (let from = 0; from < last; from += WINDOW) {
    const rows = pairRowsOf(raw.all<TermRow>(read, [from, from + WINDOW]));
    for (let i = 0; i < rows.length; i += INSERT_ROWS) {
      const part = rows.slice(i, i + INSERT_ROWS);
      raw.all(sqliteInsertOf(part.length), part.flat());
      // Rows already there (made by 0014's rebuild on an upgrade from before it) are not counted.
      written += Number(raw.all<{ n: number }>("SELECT changes() AS n")[0]?.n ?? 0);
    }
  }
  done(written);
  return written;
}

/** PostgreSQL: on the connection holding the start lock, in the file's transaction. Returns the pair rows written. */
export async function pairTermsStepPostgres(client: PoolClient): Promise<number> {
  // Nodes of the earlier version may still write: a contact they change now would lose its
  // pairs again, so their term writes wait for this step (docs/operations.md §3.3).
  await client.query("LOCK TABLE contact_search_terms IN SHARE MODE");
  const last = Number((await client.query<{ m: string | null }>("SELECT max(contact_id) AS m FROM contact_search_terms")).rows[0]?.m ?? 0);
  const done = last > 0 ? announce() : () => {};
  const read = `SELECT ${READ_COLUMNS} FROM contact_search_terms WHERE contact_id > $1 AND contact_id <= $2 ORDER BY contact_id`;
  const arrays = ["text", "text", "bigint", "text", "text", "bigint", "bigint", "bigint", "bigint", "bigint"].map((type, i) => `$${i + 1}::${type}[]`).join(", ");
  const insert = `INSERT INTO contact_search_terms (${COLUMNS}) SELECT * FROM unnest(${arrays}) ON CONFLICT DO NOTHING`;
  let written = 0;
  for (let from = 0; from < last; from += WINDOW) {
    const rows = pairRowsOf((await client.query<TermRow>(read, [from, from + WINDOW])).rows);
    if (rows.length === 0) continue;
    // Rows already there (made by 0010's rebuild on an upgrade from before it) are not counted.
    written += (await client.query(insert, Array.from({ length: 10 }, (_, c) => rows.map((row) => row[c])))).rowCount ?? 0;
  }
  await client.query("ANALYZE contact_search_terms");
  done(written);
  return written;
}
