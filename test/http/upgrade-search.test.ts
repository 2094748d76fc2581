/**
 * Upgrading to search that finds people (docs/api.md §11.6, docs/operations.md §3.3): a
 * database at the migration level before 0014_search_folding (PostgreSQL 0010), whose
 * contacts carry the previous build's search terms, is started with this build; the
 * migration's step rebuilds the terms, so search finds its contacts by folded names, phone
 * digits in any format and email parts, and through one typo. Trashed and merged-away
 * contacts stay out until restored. On both backends.
 *
 * The old database is made by this build, then taken back to the previous level as that
 * build left it: the new migration unrecorded, its table gone, every term row as the
 * previous build wrote it (lower-cased, not folded, the email whole, no phone).
 */
import { termsBefore0014 } from "../fixtures/migrations/history.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { termHead } from "../../src/contacts/matching.ts";
import { migrations } from "../../src/storage/sqlite/migrations.ts";
import { postgresMigrations } from "../../src/storage/postgres/migrations.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase, type SideDatabase } from "../helpers/side-db.ts";

const oldTerms = termsBefore0014;

/** contact_search_terms before 0015_search_term_bits (db/0004_order_keys_and_delivery_status.sql), its rows kept. */
const TERMS_BEFORE_BITS_SQLITE = `
  CREATE TABLE terms_before_bits (
    project_id TEXT NOT NULL, term TEXT NOT NULL, contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
    head TEXT NOT NULL, updated_at TEXT NOT NULL, contact_number INTEGER NOT NULL,
    PRIMARY KEY (project_id, term, contact_id)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO terms_before_bits SELECT project_id, term, contact_id, head, updated_at, contact_number FROM contact_search_terms;
  DROP TABLE contact_search_terms;
  ALTER TABLE terms_before_bits RENAME TO contact_search_terms;
  CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term);
  CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term);`;
/** The same on PostgreSQL (db/postgres/0001_init.sql; the primary key as it was before 0012_search_term_ranges). */
const TERMS_BEFORE_BITS_POSTGRES = `
  DROP INDEX contact_search_terms_walk;
  ALTER TABLE contact_search_terms DROP CONSTRAINT contact_search_terms_pkey;
  ALTER TABLE contact_search_terms DROP COLUMN term_bits_a, DROP COLUMN term_bits_b, DROP COLUMN term_bits_c, DROP COLUMN term_bits_d;
  ALTER TABLE contact_search_terms ADD CONSTRAINT contact_search_terms_pkey PRIMARY KEY (project_id, term, contact_id);
  CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term);`;

const NOT_SEARCH = new Set(["0014_rate_limit_take"]);

/** Takes a stopped server's database back to the level before search folding, as the previous build left it. */
async function backToPreviousLevel(db: SideDatabase): Promise<void> {
  const list = db.backend === "postgres" ? postgresMigrations : migrations;
  const folding = list.findIndex((m) => m.name.endsWith("_search_folding"));
  // Migrations after the folding that leave search alone stay applied (PostgreSQL's rate-limit take function).
  const undone = list.slice(folding).map((m) => m.name).filter((name) => !NOT_SEARCH.has(name));
  // Only the term table's changes follow the folding (its bits, then their second hash; on
  // PostgreSQL its primary key's carried columns; the pair terms' rows): it goes back to its earlier shape (db/0004, db/postgres/0001).
  expect(undone.slice(1).every((name) => /_search_(term_(bits|ranges|bits_second_hash)|pair_terms)$/.test(name))).toBe(true);
  if (undone.length > 1) await db.run(db.backend === "postgres" ? TERMS_BEFORE_BITS_POSTGRES : TERMS_BEFORE_BITS_SQLITE);
  const contacts = await db.all<{ id: number; project_id: string; contact_number: number; updated_at: string; first_name: string | null; last_name: string | null; business_name: string | null; email: string | null }>(
    `SELECT id, project_id, contact_number, updated_at, first_name, last_name, business_name, email FROM contacts AS c
     WHERE EXISTS (SELECT 1 FROM contact_search_terms AS t WHERE t.contact_id = c.id) ORDER BY id`,
  );
  await db.run("DROP TABLE search_typo_keys");
  for (const name of undone) await db.run("DELETE FROM schema_migrations WHERE name = ?", name);
  await db.run("DELETE FROM contact_search_terms");
  for (const c of contacts) {
    for (const term of oldTerms(c)) {
      await db.run("INSERT INTO contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number) VALUES (?, ?, ?, ?, ?, ?)", c.project_id, term, c.id, termHead(term), c.updated_at, c.contact_number);
    }
  }
}

describe("a database the previous build made, started with this build", () => {
  let srv: ServerHandle;
  /** The old terms, as read before the upgrade. */
  let oldRows: Array<{ term: string; contact_number: number }> = [];
  const found = async (search: string) => {
    const res = await srv.api("GET", "/contacts", { query: { search } });
    expect(res.status).toBe(200);
    return res.json.data.map((c: { contactId: string }) => c.contactId).sort();
  };

  beforeAll(async () => {
    const first = await startServer({ env: "sandbox" });
    const made = [
      { firstName: "José", lastName: "García", email: "jose.garcia@correo.example.es", phone: "+1 202 555 0143" },
      { firstName: "Jürgen", lastName: "Müller", businessName: "Müller & Söhne", phone: "+49 30 1234567" },
      { firstName: "Zoë", lastName: "Trashed", email: "zoe@trash.example" },
      { firstName: "Ann", lastName: "Mergedaway", email: "ann@merged.example" },
      { firstName: "Søren", lastName: "Straße", email: "soren@example.dk" },
    ];
    for (const body of made) expect((await first.api("POST", "/contacts", { body })).status).toBe(201);
    expect((await first.api("DELETE", "/contacts/CR-3")).status).toBe(204);
    expect((await first.api("POST", "/contacts/CR-5/merge", { body: { contactIds: ["CR-4"] } })).status).toBe(200);
    await first.stop(true);

    const db = await openSideDatabase(first.env);
    try {
      await backToPreviousLevel(db);
      oldRows = await db.all("SELECT t.term, c.contact_number FROM contact_search_terms AS t JOIN contacts AS c ON c.id = t.contact_id ORDER BY t.term");
    } finally {
      await db.close();
    }
    srv = await startServer({ dir: first.dir, env: "sandbox", expectBootstrapKey: false });
  }, 90_000);
  afterAll(async () => {
    await srv?.stop();
  }, 30_000);

  test("before the upgrade the terms were the old ones: accents kept, the email whole, no phone, none for the trashed and merged-away", () => {
    const terms = oldRows.map((r) => r.term);
    expect(terms).toContain("josé");
    expect(terms).toContain("müller");
    expect(terms).toContain("jose.garcia@correo.example.es");
    expect(terms).not.toContain("jose");
    expect(terms).not.toContain("correo");
    expect(terms.some((t) => /^[\u0001\u0002]/.test(t))).toBe(false);
    expect(new Set(oldRows.map((r) => r.contact_number))).toEqual(new Set([1, 2, 5]));
  });

  test("search finds the old contacts by their names folded", async () => {
    expect(await found("jose")).toEqual(["CR-1"]);
    expect(await found("JOSÉ garcia")).toEqual(["CR-1"]);
    expect(await found("muller")).toEqual(["CR-2"]);
    expect(await found("jurgen sohne")).toEqual(["CR-2"]);
    expect(await found("soren strasse")).toEqual(["CR-5"]);
  });

  test("by phone digits in another format than stored, from the start or the end", async () => {
    expect(await found("(202) 555-01")).toEqual(["CR-1"]);
    expect(await found("+1 202 555")).toEqual(["CR-1"]);
    expect(await found("0143")).toEqual(["CR-1"]);
    expect(await found("030 1234")).toEqual(["CR-2"]);
    expect(await found("49301234567")).toEqual(["CR-2"]);
  });

  test("by the email's domain and its labels, and through one typo", async () => {
    expect(await found("correo.example.es")).toEqual(["CR-1"]);
    expect(await found("correo")).toEqual(["CR-1"]);
    expect(await found("muler")).toEqual(["CR-2"]);
    expect(await found("garcai")).toEqual(["CR-1"]);
  });

  test("the trashed and the merged-away contacts are still not found", async () => {
    expect(await found("zoe")).toEqual([]);
    expect(await found("trash.example")).toEqual([]);
    expect(await found("mergedaway")).toEqual([]);
    expect(await found("ann@merged")).toEqual([]);
  });

  test("a restore brings the trashed contact back, findable by its folded name and email domain", async () => {
    const restored = await srv.api("POST", "/contacts/CR-3/restore");
    expect(restored.status).toBe(200);
    expect(await found("zoe")).toEqual(["CR-3"]);
    expect(await found("trash.example")).toEqual(["CR-3"]);
    expect(await found("trashd")).toEqual(["CR-3"]);
  });
});
