import type { PoolClient } from "pg";
import { termHead } from "../contacts/matching.ts";
import { isTypoWord, searchTerms, typoKeysOf } from "../contacts/search/terms.ts";
import type { SqliteHandle } from "../runtime/types.ts";

/**
 * The step of migration 0014_search_folding (PostgreSQL 0010_search_folding): the search
 * terms of the contacts a database made by an earlier build already holds are rebuilt as
 * this build makes them (docs/api.md §11.6: folded, email parts, phone digits), and each of
 * their typo words gets its keys in search_typo_keys. It runs right after the file's SQL, in
 * the migration's transaction (src/storage/sqlite/migrate.ts, src/storage/postgres/migrate.ts),
 * so the database is upgraded whole or not at all.
 *
 * Exactly the contacts that have term rows are rebuilt: trashed and merged-away contacts
 * have none and get none (restoring one writes its terms). Contacts are read in batches in
 * id order, so memory stays flat however many there are, and the new rows are written by
 * multi-row inserts; how the old rows give way is each backend's (below). Measured at
 * 1,000,000 contacts in docs/operations.md §3.3.
 */

/** Contacts read per batch. */
export const REBUILD_BATCH = 5_000;
/** Rows per INSERT statement (6 values a term row, 3 a key: within both backends' bound-parameter limits). */
export const INSERT_ROWS = 500;
/** Typo words remembered as already keyed (per run), before the memory is cleared: repeats are then skipped by the database. */
const SEEN_MAX = 100_000;

/** What a contact's terms are made of, as its row stores it. */
export interface RebuildSource {
  id: number;
  project_id: string;
  contact_number: number;
  updated_at: string;
  first_name: string | null;
  last_name: string | null;
  business_name: string | null;
  email: string | null;
  phone_key: string | null;
}

/** The next batch: contacts after the last one read (`?` / `$1`) that have term rows now. */
const nextBatch = (param: string) =>
  `SELECT c.id, c.project_id, c.contact_number, c.updated_at, c.first_name, c.last_name, c.business_name, c.email, c.phone_key
   FROM contacts AS c
   WHERE c.id > ${param} AND EXISTS (SELECT 1 FROM contact_search_terms AS t WHERE t.contact_id = c.id)
   ORDER BY c.id LIMIT ${REBUILD_BATCH}`;

/** The old term rows of a batch: those of the contacts in its id range (after the previous batch, through its last). */
const deleteRange = (from: string, to: string) => `DELETE FROM contact_search_terms WHERE contact_id > ${from} AND contact_id <= ${to}`;

const TERM_COLUMNS = "(project_id, term, contact_id, head, updated_at, contact_number)";
const KEY_COLUMNS = "(project_id, key, word)";

/** A multi-row insert of `rows` rows of `width` values, placeholders made by `param(n)` (1-based). */
function insertOf(table: string, columns: string, width: number, rows: number, param: (n: number) => string, ignoreTaken: boolean): string {
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const values: string[] = [];
    for (let c = 1; c <= width; c++) values.push(param(r * width + c));
    tuples.push(`(${values.join(", ")})`);
  }
  return `INSERT INTO ${table} ${columns} VALUES ${tuples.join(", ")}${ignoreTaken ? " ON CONFLICT DO NOTHING" : ""}`;
}

/** The rows one batch writes: its contacts' term rows and the keys of typo words not keyed yet in this run. */
export interface BatchRows {
  /** [project_id, term, contact_id, head, updated_at, contact_number] */
  terms: unknown[][];
  /** [project_id, key, word] */
  keys: unknown[][];
}

/** Makes the rows of each batch; remembers the typo words it keyed (bounded), so a common name is keyed once. */
export class SearchRebuild {
  private seen = new Set<string>();
  contacts = 0;
  termRows = 0;
  keyRows = 0;
  private started = 0;

  rowsOf(contacts: readonly RebuildSource[]): BatchRows {
    const terms: unknown[][] = [];
    const keys: unknown[][] = [];
    for (const c of contacts) {
      const id = Number(c.id);
      const number = Number(c.contact_number);
      const made = searchTerms({
        firstName: c.first_name,
        lastName: c.last_name,
        businessName: c.business_name,
        email: c.email,
        phoneKey: c.phone_key,
        // formatContactId (src/contacts/service.ts), not imported: the storage layer stays below the services.
        contactId: `CR-${number}`,
      });
      for (const term of made) {
        terms.push([c.project_id, term, id, termHead(term), c.updated_at, number]);
        if (!isTypoWord(term)) continue;
        const seenKey = `${c.project_id}\u0000${term}`;
        if (this.seen.has(seenKey)) continue;
        if (this.seen.size >= SEEN_MAX) this.seen.clear();
        this.seen.add(seenKey);
        for (const key of typoKeysOf(term)) keys.push([c.project_id, key, term]);
      }
    }
    // One line before a long wait: the start listens only once the rebuild is done.
    if (this.contacts === 0 && contacts.length > 0) {
      this.started = performance.now();
      console.error("crm: rebuilding the search index of the contacts stored so far (once, docs/operations.md §3.3); the server listens when it is done");
    }
    this.contacts += contacts.length;
    this.termRows += terms.length;
    this.keyRows += keys.length;
    return { terms, keys };
  }

  /** The counts, told on stderr when there was anything to rebuild. */
  done(): RebuildCounts {
    if (this.contacts > 0) {
      const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
      console.error(`crm: search index rebuilt: ${this.contacts} contacts, ${this.termRows} terms in ${seconds} s`);
    }
    return { contacts: this.contacts, termRows: this.termRows, keyRows: this.keyRows };
  }
}

/** `rows` in chunks of INSERT_ROWS, each with its statement (a full chunk's text is the same every time: cached). */
function* chunks(rows: unknown[][], statement: (count: number) => string): Generator<[string, unknown[]]> {
  for (let i = 0; i < rows.length; i += INSERT_ROWS) {
    const part = rows.slice(i, i + INSERT_ROWS);
    yield [statement(part.length), part.flat()];
  }
}

const sqliteParam = () => "?";
const memo = (make: (count: number) => string) => {
  const made = new Map<number, string>();
  return (count: number) => made.get(count) ?? (made.set(count, make(count)), made.get(count)!);
};

/** Counts of a rebuild, for its log line and tests. */
export interface RebuildCounts {
  contacts: number;
  termRows: number;
  keyRows: number;
}

/**
 * SQLite: runs in the migration's transaction on the raw handle (synchronous, like the
 * runner). Inserting ten million term rows one contact at a time lands each in a random
 * place of three B-trees far larger than the page cache, so the new rows are staged first
 * (appended to a plain table), then the old ones are deleted at once and the staged rows
 * copied in key order, with the secondary indexes dropped and made again from their own
 * CREATE INDEX text: SQLite's sorter (temporary files, cache-sized runs) does the ordering,
 * and memory stays flat.
 */
export function rebuildSearchSqlite(raw: SqliteHandle): RebuildCounts {
  const rebuild = new SearchRebuild();
  raw.exec(`CREATE TEMP TABLE ${STAGED} (project_id TEXT, term TEXT, contact_id INTEGER, head TEXT, updated_at TEXT, contact_number INTEGER)`);
  const select = nextBatch("?");
  const stageTerms = memo((n) => insertOf(STAGED, TERM_COLUMNS, 6, n, sqliteParam, false));
  const insertKeys = memo((n) => insertOf("search_typo_keys", KEY_COLUMNS, 3, n, sqliteParam, true));
  let after = 0;
  for (;;) {
    const contacts = raw.all<RebuildSource>(select, [after]);
    if (contacts.length === 0) break;
    const { terms, keys } = rebuild.rowsOf(contacts);
    for (const [sql, params] of chunks(terms, stageTerms)) raw.all(sql, params);
    for (const [sql, params] of chunks(keys, insertKeys)) raw.all(sql, params);
    after = Number(contacts[contacts.length - 1]!.id);
  }
  // Every term row belongs to a contact just read: all of them are replaced.
  const indexes = raw.all<{ name: string; sql: string }>(
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'contact_search_terms' AND sql IS NOT NULL ORDER BY name",
  );
  for (const { name } of indexes) raw.exec(`DROP INDEX "${name}"`);
  raw.exec("DELETE FROM contact_search_terms");
  raw.exec(`INSERT INTO contact_search_terms ${TERM_COLUMNS} SELECT * FROM ${STAGED} ORDER BY project_id, term, contact_id`);
  raw.exec(`DROP TABLE ${STAGED}`);
  for (const { sql } of indexes) raw.exec(sql);
  return rebuild.done();
}

/** SQLite's staging table, made and dropped within the step. */
const STAGED = "search_rebuild_staged_terms";

/**
 * PostgreSQL: runs in the migration's transaction, on the connection that holds the start
 * lock. Each batch's old rows are deleted by their id range (the contacts between the
 * batch's ends that have none have nothing to delete), then its new rows inserted in one
 * statement per table, each column bound as one array (unnest): thousands of bound
 * parameters per statement cost more to bind than the rows to write.
 */
export async function rebuildSearchPostgres(client: PoolClient): Promise<RebuildCounts> {
  const rebuild = new SearchRebuild();
  const select = nextBatch("$1");
  const remove = deleteRange("$1", "$2");
  const insertTerms = `INSERT INTO contact_search_terms ${TERM_COLUMNS}
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[])`;
  const insertKeys = `INSERT INTO search_typo_keys ${KEY_COLUMNS} SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`;
  let after = 0;
  for (;;) {
    const contacts = (await client.query<RebuildSource>(select, [after])).rows;
    if (contacts.length === 0) break;
    const last = Number(contacts[contacts.length - 1]!.id);
    const { terms, keys } = rebuild.rowsOf(contacts);
    await client.query(remove, [after, last]);
    if (terms.length > 0) await client.query(insertTerms, columnsOf(terms, 6));
    if (keys.length > 0) await client.query(insertKeys, columnsOf(keys, 3));
    after = last;
  }
  // Every term row was rewritten: the planner's statistics of the old rows would mislead it
  // until autovacuum's next round (src/storage/postgres/statistics.ts).
  if (rebuild.contacts > 0) await client.query("ANALYZE contact_search_terms, search_typo_keys");
  return rebuild.done();
}

/** Rows → one array per column. */
function columnsOf(rows: unknown[][], width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) for (let c = 0; c < width; c++) columns[c]!.push(row[c]);
  return columns;
}
