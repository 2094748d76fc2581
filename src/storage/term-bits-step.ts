import type { PoolClient } from "pg";
import { BIT_COLUMNS, termBitsOf } from "../contacts/search/term-bits.ts";
import type { SqliteHandle } from "../runtime/types.ts";

/**
 * The steps of migrations 0015_search_term_bits and 0016_search_term_bits_second_hash
 * (PostgreSQL 0011 and 0013): every row of contact_search_terms is copied into
 * contact_search_terms_with_bits with its contact's term bits (src/contacts/search/term-bits.ts:
 * columns a and b in 0015, all four in 0016), then the new table takes the old one's name
 * and indexes. The bits come from the term rows themselves (a contact's bits are those of
 * all its terms), read contact by contact through contact_search_terms_contact in windows of
 * contact ids, and staged one row per contact in a temporary table; the copy then reads the
 * old table in key order and writes the new one in the same order, so the indexes are made
 * once, at the end, by the database's sorter. It runs in the migration's transaction:
 * stopped halfway, the database is as it was. Measured at 1,000,000 contacts in
 * docs/operations.md §3.3.
 */

/** What differs between the two migrations: how many bit columns, and the indexes made after the copy. */
export interface TermBitsLevel {
  columns: 2 | 4;
  sqliteIndexes: string[];
  /** Run after the rename: 0011 renames its key and foreign key; 0013 makes them (its table has none, so the copy writes no index). */
  postgresAfter: string[];
}

/** 0015 / 0011: columns a and b (db/0015_search_term_bits.sql lists the indexes). */
export const FIRST_TERM_BITS: TermBitsLevel = {
  columns: 2,
  sqliteIndexes: [
    "CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term, term_bits_a, term_bits_b)",
    "CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term)",
  ],
  postgresAfter: [
    "ALTER TABLE contact_search_terms RENAME CONSTRAINT contact_search_terms_with_bits_pkey TO contact_search_terms_pkey",
    "ALTER TABLE contact_search_terms RENAME CONSTRAINT contact_search_terms_with_bits_contact_id_fkey TO contact_search_terms_contact_id_fkey",
    "CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term) INCLUDE (contact_id, term_bits_a, term_bits_b)",
    "CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term)",
  ],
};

/** 0016 / 0013: all four columns (db/0016_search_term_bits_second_hash.sql lists the indexes). */
export const SECOND_TERM_BITS: TermBitsLevel = {
  columns: 4,
  sqliteIndexes: [
    "CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term, term_bits_a, term_bits_b, term_bits_c, term_bits_d)",
    "CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term)",
  ],
  postgresAfter: [
    "ALTER TABLE contact_search_terms ADD CONSTRAINT contact_search_terms_pkey PRIMARY KEY (project_id, term, contact_id) INCLUDE (updated_at, contact_number, term_bits_a, term_bits_b, term_bits_c, term_bits_d)",
    "ALTER TABLE contact_search_terms ADD CONSTRAINT contact_search_terms_contact_id_fkey FOREIGN KEY (contact_id) REFERENCES contacts(id) ON DELETE CASCADE",
    "CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term) INCLUDE (contact_id, term_bits_a, term_bits_b, term_bits_c, term_bits_d)",
    "CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term)",
  ],
};

/** Contact ids per read window. */
const WINDOW = 5_000;
/** Staged rows per INSERT. */
const STAGE_ROWS = 500;

const STAGED = "term_bits_staged";
const COLUMNS = "project_id, term, contact_id, head, updated_at, contact_number";
/** The staged table's bit columns, and the term table's, of a level. */
const stagedColumns = (level: TermBitsLevel) => ["a", "b", "c", "d"].slice(0, level.columns);
const bitColumns = (level: TermBitsLevel) => BIT_COLUMNS.slice(0, level.columns);

/** One staged row per contact of a window's term rows (ordered by contact): [contact_id, ...bits]. */
function bitsOfWindow(rows: ReadonlyArray<{ contact_id: number | string; term: string }>, level: TermBitsLevel): number[][] {
  const staged: number[][] = [];
  let current: number | null = null;
  let terms: string[] = [];
  const flush = () => {
    if (current !== null) staged.push([current, ...termBitsOf(terms).slice(0, level.columns)]);
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

/** One line before a long wait and one after, as the rebuild of 0014 says (src/storage/search-rebuild.ts). */
function announce(): () => void {
  const started = performance.now();
  console.error("crm: adding term bits to the search index (once, docs/operations.md §3.3); the server listens when it is done");
  return () => console.error(`crm: term bits added in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** The copy's SELECT: the old table joined to the staged bits. */
const copyOf = (level: TermBitsLevel, join: string) =>
  `INSERT INTO contact_search_terms_with_bits (${COLUMNS}, ${bitColumns(level).join(", ")})
   SELECT t.project_id, t.term, t.contact_id, t.head, t.updated_at, t.contact_number, ${stagedColumns(level).map((c) => `s.${c}`).join(", ")}
   FROM contact_search_terms AS t ${join} ${STAGED} AS s ON s.contact_id = t.contact_id`;

/** SQLite: synchronous, on the raw handle, in the runner's transaction. Returns the contacts staged. */
export function termBitsStepSqlite(raw: SqliteHandle, level: TermBitsLevel): number {
  const staging = stagedColumns(level);
  raw.exec(`CREATE TEMP TABLE ${STAGED} (contact_id INTEGER PRIMARY KEY, ${staging.map((c) => `${c} INTEGER NOT NULL`).join(", ")})`);
  const last = Number(raw.all<{ m: number | null }>("SELECT max(contact_id) AS m FROM contact_search_terms")[0]?.m ?? 0);
  const done = last > 0 ? announce() : () => {};
  const read = "SELECT contact_id, term FROM contact_search_terms WHERE contact_id > ? AND contact_id <= ? ORDER BY contact_id";
  const row = `(?, ${staging.map(() => "?").join(", ")})`;
  let contacts = 0;
  for (let from = 0; from < last; from += WINDOW) {
    const staged = bitsOfWindow(raw.all<{ contact_id: number; term: string }>(read, [from, from + WINDOW]), level);
    contacts += staged.length;
    for (let i = 0; i < staged.length; i += STAGE_ROWS) {
      const part = staged.slice(i, i + STAGE_ROWS);
      raw.all(`INSERT INTO ${STAGED} (contact_id, ${staging.join(", ")}) VALUES ${part.map(() => row).join(", ")}`, part.flat());
    }
  }
  // The old table outer, in its key order (CROSS JOIN keeps it outer): the new one is written in order.
  raw.exec(`${copyOf(level, "CROSS JOIN")} ORDER BY t.project_id, t.term, t.contact_id`);
  raw.exec(`DROP TABLE ${STAGED}`);
  raw.exec("DROP TABLE contact_search_terms");
  raw.exec("ALTER TABLE contact_search_terms_with_bits RENAME TO contact_search_terms");
  for (const index of level.sqliteIndexes) raw.exec(index);
  done();
  return contacts;
}

/** PostgreSQL: on the connection holding the start lock, in the file's transaction. Returns the contacts staged. */
export async function termBitsStepPostgres(client: PoolClient, level: TermBitsLevel): Promise<number> {
  const staging = stagedColumns(level);
  // Nodes of the earlier version may still write: their term rows wait until the new table
  // has its name (then land in it), rather than go into the old one after the copy read it.
  await client.query("LOCK TABLE contact_search_terms IN SHARE MODE");
  await client.query(`CREATE TEMP TABLE ${STAGED} (contact_id bigint PRIMARY KEY, ${staging.map((c) => `${c} bigint NOT NULL`).join(", ")}) ON COMMIT DROP`);
  const last = Number((await client.query<{ m: string | null }>("SELECT max(contact_id) AS m FROM contact_search_terms")).rows[0]?.m ?? 0);
  const done = last > 0 ? announce() : () => {};
  const read = "SELECT contact_id, term FROM contact_search_terms WHERE contact_id > $1 AND contact_id <= $2 ORDER BY contact_id";
  const arrays = ["contact_id", ...staging].map((_, i) => `$${i + 1}::bigint[]`).join(", ");
  const stage = `INSERT INTO ${STAGED} (contact_id, ${staging.join(", ")}) SELECT * FROM unnest(${arrays})`;
  let contacts = 0;
  for (let from = 0; from < last; from += WINDOW) {
    const staged = bitsOfWindow((await client.query<{ contact_id: string; term: string }>(read, [from, from + WINDOW])).rows, level);
    if (staged.length === 0) continue;
    contacts += staged.length;
    await client.query(stage, [0, ...staging.map((_, i) => i + 1)].map((c) => staged.map((row) => row[c])));
  }
  await client.query(copyOf(level, "JOIN"));
  await client.query("DROP TABLE contact_search_terms");
  await client.query("ALTER TABLE contact_search_terms_with_bits RENAME TO contact_search_terms");
  for (const statement of level.postgresAfter) await client.query(statement);
  await client.query("ANALYZE contact_search_terms");
  done();
  return contacts;
}
