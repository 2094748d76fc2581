/**
 * Migration 0017_search_pair_terms (PostgreSQL 0015; src/storage/pair-terms-step.ts;
 * docs/operations.md §3.3): on a database at the level before it, whose contacts have their
 * text terms but no pair terms, every contact gets exactly the pair terms of its terms
 * (src/contacts/search/pair-terms.ts), each row with its contact's order keys and term bits;
 * no other row changes. SQLite here; on PostgreSQL in the PostgreSQL job.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pg from "pg";
import { termHead } from "../../src/contacts/matching.ts";
import { PAIR, pairTermsOf } from "../../src/contacts/search/pair-terms.ts";
import { termBitsOf } from "../../src/contacts/search/term-bits.ts";
import { searchTerms } from "../../src/contacts/search/terms.ts";
import { runtime } from "../../src/runtime/index.ts";
import { migratePostgres } from "../../src/storage/postgres/migrate.ts";
import { postgresMigrations } from "../../src/storage/postgres/migrations.ts";
import { migrate } from "../../src/storage/sqlite/migrate.ts";
import { migrations } from "../../src/storage/sqlite/migrations.ts";
import { createTestDatabase, dropTestDatabase, testBackend } from "../helpers/postgres.ts";

const PROJECT = "prj_pairterms0000000000000a";
const T0 = "2026-01-01T00:00:00.000Z";
const NAMES = [["Maria", "Ramos"], ["Jean", "Marchand"], ["Ramón", "Jeanneret"], ["Mary", "Thornton"], ["Søren", "Mørk"]];
const BUSINESS = "Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliet Kilo Lima Mike";

/** More contacts than one read window of the step (5,000), with gaps in the ids; one in 500 has more heads than are paired. */
const contacts = Array.from({ length: 6_200 }, (_, i) => {
  const [first, last] = NAMES[i % NAMES.length]!;
  const made = searchTerms({
    firstName: first!,
    lastName: `${last}${i % 37}`,
    businessName: i % 500 === 0 ? BUSINESS : null,
    email: `${first!.toLowerCase()}${i}@example.com`,
    phoneKey: i % 3 === 0 ? `+1415555${String(i).padStart(4, "0")}` : null,
    contactId: `CR-${i + 1}`,
  });
  const terms = made.filter((t) => !t.startsWith(PAIR));
  return { id: i * 3 + 1, number: i + 1, updatedAt: `2026-01-0${1 + (i % 9)}T00:00:00.000Z`, terms, bits: termBitsOf(terms) };
});

/** Every row as [contact_id, term, head, updated_at, contact_number, a, b, c, d], sorted. */
type Row = [number, string, string, string, number, number, number, number, number];
const sorted = (rows: Row[]) => rows.sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0));
const rowsOf = (withPairs: boolean): Row[] =>
  sorted(contacts.flatMap((c) => [...c.terms, ...(withPairs ? pairTermsOf(c.terms) : [])].map((term): Row => [c.id, term, termHead(term), c.updatedAt, c.number, ...c.bits])));
const READ = "SELECT contact_id, term, head, updated_at, contact_number, term_bits_a, term_bits_b, term_bits_c, term_bits_d FROM contact_search_terms";
const asRow = (r: Record<string, unknown>): Row => Object.values(r).map((v, i) => (i === 1 || i === 2 || i === 3 ? v : Number(v))) as Row;

describe.skipIf(testBackend() === "postgres")("SQLite: migration 0017 on a database at the level of 0016", () => {
  const STEP = "0017_search_pair_terms";
  const before = migrations.slice(0, migrations.findIndex((m) => m.name === STEP));
  const raw = runtime.openSqlite(":memory:");
  raw.exec("PRAGMA foreign_keys = ON");
  expect(migrate(raw, before).at(-1)).toBe("0016_search_term_bits_second_hash");
  raw.all("INSERT INTO projects (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)", [PROJECT, PROJECT, T0, T0]);
  raw.exec("BEGIN");
  for (const c of contacts) {
    raw.all("INSERT INTO contacts (id, project_id, contact_number, identity_type, first_name, address, created_at, updated_at) VALUES (?, ?, ?, 'personal', 'x', '{}', ?, ?)", [
      c.id, PROJECT, c.number, T0, c.updatedAt,
    ]);
    for (const term of c.terms) {
      raw.all(
        "INSERT INTO contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number, term_bits_a, term_bits_b, term_bits_c, term_bits_d) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [PROJECT, term, c.id, termHead(term), c.updatedAt, c.number, ...c.bits],
      );
    }
  }
  raw.exec("COMMIT");
  const applied = migrate(raw, migrations.slice(0, before.length + 1));

  test("applies 0017 and gives every contact exactly its pair terms, with its order keys and bits; the other rows as they were", () => {
    expect(applied).toEqual([STEP]);
    expect(sorted(raw.all<Record<string, unknown>>(READ).map(asRow))).toEqual(rowsOf(true));
    expect(raw.all("PRAGMA foreign_key_check")).toEqual([]);
  });

  test("contacts with more heads than are paired have the one many-heads term", () => {
    expect(raw.all("SELECT count(*) AS n FROM contact_search_terms WHERE term = ?", [`${PAIR}*`])).toEqual([{ n: contacts.filter((_, i) => i % 500 === 0).length }]);
  });
});

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: migration 0015 on a database at the level of 0014", () => {
  const STEP = "0015_search_pair_terms";
  const before = postgresMigrations.slice(0, postgresMigrations.findIndex((m) => m.name === STEP));
  let url: string | undefined;
  let pool: pg.Pool | undefined;
  let applied: string[] = [];
  beforeAll(async () => {
    url = await createTestDatabase();
    pool = new pg.Pool({ connectionString: url, max: 2 });
    expect((await migratePostgres(pool, before)).at(-1)).toBe("0014_rate_limit_take");
    await pool.query("INSERT INTO projects (id, name, created_at, updated_at) VALUES ($1, $1, $2, $2)", [PROJECT, T0]);
    await pool.query(
      `INSERT INTO contacts (id, project_id, contact_number, identity_type, first_name, address, created_at, updated_at)
       SELECT id, $1, n, 'personal', 'x', '{}', $2, u FROM unnest($3::bigint[], $4::bigint[], $5::text[]) AS c(id, n, u)`,
      [PROJECT, T0, contacts.map((c) => c.id), contacts.map((c) => c.number), contacts.map((c) => c.updatedAt)],
    );
    const rows = rowsOf(false);
    await pool.query(
      `INSERT INTO contact_search_terms (project_id, contact_id, term, head, updated_at, contact_number, term_bits_a, term_bits_b, term_bits_c, term_bits_d)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])`,
      [PROJECT, ...Array.from({ length: 9 }, (_, c) => rows.map((r) => r[c]))],
    );
    applied = await migratePostgres(pool, postgresMigrations.slice(0, before.length + 1));
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    if (url) await dropTestDatabase(url).catch(() => {});
  });

  test("applies 0015 and gives every contact exactly its pair terms, with its order keys and bits; the other rows as they were", async () => {
    expect(applied).toEqual([STEP]);
    expect(sorted((await pool!.query(READ)).rows.map(asRow))).toEqual(rowsOf(true));
  });
});
