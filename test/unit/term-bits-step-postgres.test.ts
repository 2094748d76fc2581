/**
 * PostgreSQL migration 0013_search_term_bits_second_hash while a node of the earlier version
 * still writes (src/storage/term-bits-step.ts; docs/operations.md §3.3): the step locks the
 * term table against writes first, so a term row written meanwhile waits and is kept, never
 * left in the old table the step drops. PostgreSQL only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pg from "pg";
import { termHead } from "../../src/contacts/matching.ts";
import { termBitsOf } from "../../src/contacts/search/term-bits.ts";
import { migratePostgres } from "../../src/storage/postgres/migrate.ts";
import { postgresMigrations } from "../../src/storage/postgres/migrations.ts";
import { sleep } from "../helpers/spawn.ts";
import { createTestDatabase, dropTestDatabase, pgClient, testBackend } from "../helpers/postgres.ts";

const STEP = "0013_search_term_bits_second_hash";
const BEFORE = postgresMigrations.slice(0, postgresMigrations.findIndex((m) => m.name === STEP));
/** Up to the step and no further: later migrations are not this test's. */
const THROUGH = postgresMigrations.slice(0, BEFORE.length + 1);
const PROJECT = "prj_lockedstep000000000000";
const T0 = "2026-01-01T00:00:00.000Z";

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: migration 0013 beside a node of the earlier version", () => {
  let url: string | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    url = await createTestDatabase();
    pool = new pg.Pool({ connectionString: url, max: 2 });
    expect((await migratePostgres(pool, BEFORE)).at(-1)).toBe("0012_search_term_ranges");
    await pool.query("INSERT INTO projects (id, name, created_at, updated_at) VALUES ($1, $1, $2, $2)", [PROJECT, T0]);
    await pool.query(
      "INSERT INTO contacts (id, project_id, contact_number, identity_type, first_name, address, created_at, updated_at) VALUES (1, $1, 1, 'personal', 'Maria', '{}', $2, $2)",
      [PROJECT, T0],
    );
    await insertTerm(pool, "maria", ["maria"]);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    if (url) await dropTestDatabase(url).catch(() => {});
  });

  /** A term row as a node of the 0012 level writes it: columns a and b only. */
  const insertTerm = (on: pg.Pool | pg.Client, term: string, terms: string[]) => {
    const [a, b] = termBitsOf(terms);
    return on.query(
      "INSERT INTO contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number, term_bits_a, term_bits_b) VALUES ($1, $2, 1, $3, $4, 1, $5, $6)",
      [PROJECT, term, termHead(term), T0, a, b],
    );
  };

  test("a term row whose write was under way when the step began is kept, with its contact's four columns", async () => {
    // The earlier node's write is open (its transaction holds the table for writing) when the migration starts.
    const node = await pgClient(url!);
    try {
      await node.query("BEGIN");
      await insertTerm(node, "ramos", ["maria", "ramos"]);
      const migrating = migratePostgres(pool!, THROUGH);
      await sleep(500);
      await node.query("COMMIT");
      expect(await migrating).toEqual([STEP]);
    } finally {
      await node.end();
    }
    const rows = (await pool!.query("SELECT term, term_bits_a::text AS a, term_bits_b::text AS b, term_bits_c::text AS c, term_bits_d::text AS d FROM contact_search_terms ORDER BY term")).rows;
    const bits = termBitsOf(["maria", "ramos"]).map(String);
    expect(rows).toEqual(["maria", "ramos"].map((term) => ({ term, a: bits[0], b: bits[1], c: bits[2], d: bits[3] })));
  }, 60_000);
});
