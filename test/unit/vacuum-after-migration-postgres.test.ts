/**
 * PostgreSQL: a migration that rewrites the search's term table has it vacuumed and analyzed
 * before the node serves (src/storage/postgres/migrate.ts `vacuumAfter`; docs/operations.md
 * §3.3), once however many such migrations were pending; migrations that rewrite nothing
 * vacuum nothing. PostgreSQL only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pg from "pg";
import { migratePostgres } from "../../src/storage/postgres/migrate.ts";
import { postgresMigrations } from "../../src/storage/postgres/migrations.ts";
import { createTestDatabase, dropTestDatabase, testBackend } from "../helpers/postgres.ts";

const through = (name: string) => postgresMigrations.slice(0, postgresMigrations.findIndex((m) => m.name === name) + 1);

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: tables a migration rewrote are vacuumed and analyzed before the node serves", () => {
  let url: string | undefined;
  let pool: pg.Pool | undefined;
  const maintained = async (table: string) => {
    // Manual VACUUMs only (autovacuum counts apart); a step may ANALYZE on its own too, so analyses are at least the vacuums.
    const { rows } = await pool!.query<{ vacuums: number; analyzed: boolean }>(
      "SELECT vacuum_count::int AS vacuums, analyze_count >= vacuum_count AND (vacuum_count = 0 OR last_analyze >= last_vacuum) AS analyzed FROM pg_stat_user_tables WHERE relname = $1",
      [table],
    );
    return rows[0];
  };
  beforeAll(async () => {
    url = await createTestDatabase();
    pool = new pg.Pool({ connectionString: url, max: 1 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    if (url) await dropTestDatabase(url).catch(() => {});
  });

  test("migrations that rewrite nothing vacuum nothing", async () => {
    expect((await migratePostgres(pool!, through("0009_console_indexes"))).at(-1)).toBe("0009_console_indexes");
    expect(await maintained("contact_search_terms")).toEqual({ vacuums: 0, analyzed: true });
    expect(await maintained("contacts")).toEqual({ vacuums: 0, analyzed: true });
  });

  test("four pending search migrations vacuum the term table once, with ANALYZE, and the typo keys 0010 made", async () => {
    expect((await migratePostgres(pool!, through("0014_rate_limit_take"))).length).toBe(5);
    expect(await maintained("contact_search_terms")).toEqual({ vacuums: 1, analyzed: true });
    expect(await maintained("search_typo_keys")).toEqual({ vacuums: 1, analyzed: true });
    expect(await maintained("contacts")).toEqual({ vacuums: 0, analyzed: true });
  });

  test("a later start that applies the pair terms vacuums the term table again; a start with nothing to apply does not", async () => {
    expect(await migratePostgres(pool!, through("0015_search_pair_terms"))).toEqual(["0015_search_pair_terms"]);
    expect(await maintained("contact_search_terms")).toEqual({ vacuums: 2, analyzed: true });
    expect(await migratePostgres(pool!)).toEqual(postgresMigrations.slice(through("0015_search_pair_terms").length).map((m) => m.name));
    expect(await migratePostgres(pool!)).toEqual([]);
    expect((await maintained("contact_search_terms"))!.vacuums).toBe(2);
  });
});
