/**
 * Migration 0016_search_term_bits_second_hash (src/storage/term-bits-step.ts; docs/operations.md
 * §3.3): on a database at the level of 0015, whose term rows carry columns a and b only, every
 * row gets its contact's four columns of term bits (src/contacts/search/term-bits.ts), no row
 * is lost or added, and the walk index carries the new columns. A row written afterwards by a
 * node that knows only a and b gets -1 (every bit) in c and d, which every word passes.
 */
import { describe, expect, test } from "bun:test";
import { termHead } from "../../src/contacts/matching.ts";
import { searchTerms } from "../../src/contacts/search/terms.ts";
import { ALL_TERM_BITS, termBitsOf } from "../../src/contacts/search/term-bits.ts";
import { runtime } from "../../src/runtime/index.ts";
import { migrate } from "../../src/storage/sqlite/migrate.ts";
import { migrations } from "../../src/storage/sqlite/migrations.ts";

const STEP = "0016_search_term_bits_second_hash";
const BEFORE = migrations.slice(0, migrations.findIndex((m) => m.name === STEP));
const PROJECT = "prj_secondhash00000000000a";
const NAMES = [["Maria", "Ramos"], ["Jean", "Marchand"], ["Ramón", "Jeanneret"], ["Mary", "Thornton"], ["Søren", "Mørk"]];

describe("migration 0016 on a database at the level of 0015", () => {
  const raw = runtime.openSqlite(":memory:");
  raw.exec("PRAGMA foreign_keys = ON");
  expect(migrate(raw, BEFORE).at(-1)).toBe("0015_search_term_bits");
  const t0 = "2026-01-01T00:00:00.000Z";
  raw.all("INSERT INTO projects (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)", [PROJECT, PROJECT, t0, t0]);
  // More contacts than one read window of the step (5,000), with gaps in the ids.
  const contacts = Array.from({ length: 6_200 }, (_, i) => {
    const [first, last] = NAMES[i % NAMES.length]!;
    return { id: i * 3 + 1, number: i + 1, terms: searchTerms({ firstName: first!, lastName: `${last}${i % 37}`, businessName: null, email: `${first!.toLowerCase()}${i}@example.com`, phoneKey: null, contactId: `CR-${i + 1}` }) };
  });
  raw.exec("BEGIN");
  for (const c of contacts) {
    raw.all(
      "INSERT INTO contacts (id, project_id, contact_number, identity_type, first_name, address, created_at, updated_at) VALUES (?, ?, ?, 'personal', 'x', '{}', ?, ?)",
      [c.id, PROJECT, c.number, t0, t0],
    );
    const [a, b] = termBitsOf(c.terms);
    for (const term of c.terms) {
      raw.all("INSERT INTO contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number, term_bits_a, term_bits_b) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
        PROJECT, term, c.id, termHead(term), t0, c.number, a, b,
      ]);
    }
  }
  raw.exec("COMMIT");
  const before = raw.all<{ n: number }>("SELECT count(*) AS n FROM contact_search_terms")[0]!.n;
  // Through this step and no further (later migrations have their own tests).
  const applied = migrate(raw, migrations.slice(0, BEFORE.length + 1));

  test("applies 0016, recorded, and keeps every row", () => {
    expect(applied).toEqual([STEP]);
    expect(raw.all("SELECT count(*) AS n FROM contact_search_terms")).toEqual([{ n: before }]);
    expect(before).toBe(contacts.reduce((n, c) => n + c.terms.length, 0));
  });

  test("every row carries its contact's four columns, made from all of the contact's terms", () => {
    const rows = raw.all<{ contact_id: number; a: number; b: number; c: number; d: number }>(
      `SELECT contact_id, term_bits_a AS a, term_bits_b AS b, term_bits_c AS c, term_bits_d AS d FROM contact_search_terms
       GROUP BY contact_id, term_bits_a, term_bits_b, term_bits_c, term_bits_d ORDER BY contact_id`,
    );
    expect(rows).toEqual(contacts.map((c) => {
      const [a, b, cc, d] = termBitsOf(c.terms);
      return { contact_id: c.id, a, b, c: cc, d };
    }));
  });

  test("the walk index carries the four columns; the contact index and the foreign key hold", () => {
    const indexes = raw.all<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'contact_search_terms' AND sql IS NOT NULL ORDER BY name");
    expect(indexes.map((i) => i.name)).toEqual(["contact_search_terms_contact", "contact_search_terms_walk"]);
    expect(indexes[1]!.sql).toContain("term_bits_a, term_bits_b, term_bits_c, term_bits_d");
    expect(raw.all("PRAGMA foreign_key_check")).toEqual([]);
  });

  test("a row written by a node that knows only a and b gets every bit in c and d", () => {
    const [a, b] = termBitsOf(["zoe"]);
    raw.all("INSERT INTO contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number, term_bits_a, term_bits_b) VALUES (?, 'zoe', ?, 'zoe', ?, ?, ?, ?)", [
      PROJECT, contacts[0]!.id, t0, contacts[0]!.number, a, b,
    ]);
    expect(raw.all("SELECT term_bits_c AS c, term_bits_d AS d FROM contact_search_terms WHERE term = 'zoe'")).toEqual([{ c: ALL_TERM_BITS, d: ALL_TERM_BITS }]);
  });
});
