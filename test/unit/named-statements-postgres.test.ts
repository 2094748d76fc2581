/**
 * On PostgreSQL the statements built once (src/storage/prepared.ts) run as named prepared
 * statements (src/storage/postgres/named-statements.ts, docs/scaling.md §4): each connection
 * parses one once and PostgreSQL may keep a generic plan for it instead of planning every run.
 * A statement whose result columns changed under it (a newer node's migration added a column
 * to a `select *`) is prepared again: at once when no transaction was open, on the next run
 * inside one. PostgreSQL run only (CRM_TEST_BACKEND=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "kysely";
import { preparedQuery } from "../../src/storage/prepared.ts";
import { openPostgres, type OpenPostgres } from "../../src/storage/postgres/open.ts";
import { createTestDatabase, dropTestDatabase, pgClient, testBackend } from "../helpers/postgres.ts";

type Row = { id: number; a: string; b?: number | null; c?: number | null };
const readOne = preparedQuery<[number], Row>(1, (db, id) =>
  (db as never as { selectFrom(t: string): { selectAll(): { where(c: string, op: string, v: unknown): never } } }).selectFrom("named_probe").selectAll().where("id", "=", id),
);
const probeText = 'select * from "named_probe" where "id" = $1';

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: statements built once run as named prepared statements", () => {
  let pg: OpenPostgres | undefined;
  let url: string | undefined;
  const prepared = async () =>
    (await sql<{ name: string; generic_plans: number }>`select name, generic_plans::int from pg_prepared_statements where statement = ${probeText}`.execute(pg!.db)).rows;
  const alter = async (statement: string) => {
    const other = await pgClient(url!);
    try {
      await other.query(statement);
    } finally {
      await other.end();
    }
  };

  beforeAll(async () => {
    url = await createTestDatabase();
    pg = await openPostgres(url, 1); // one connection: every statement below shares its session
    await sql`create table named_probe (id int primary key, a text not null)`.execute(pg.db);
    await sql`insert into named_probe values (1, 'one'), (2, 'two')`.execute(pg.db);
  });
  afterAll(async () => {
    await pg?.close();
    if (url) await dropTestDatabase(url).catch(() => {});
  });

  test("a statement built once is parsed once per connection and then kept on a generic plan", async () => {
    for (let i = 0; i < 8; i++) expect(await readOne(pg!.db, 1 + (i % 2))).toEqual([{ id: 1 + (i % 2), a: i % 2 ? "two" : "one" }]);
    const rows = await prepared();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.name).toMatch(/^crm_\d+_0$/);
    expect(rows[0]!.generic_plans).toBeGreaterThan(0);
  });

  test("statements built per request stay unnamed", async () => {
    await sql`select ${1}::int as x`.execute(pg!.db);
    const named = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(pg!.db)).rows.map((r) => r.statement);
    expect(named).toEqual([probeText]);
  });

  test("a statement whose columns changed under it is prepared again and run at once outside a transaction", async () => {
    await alter("alter table named_probe add column b int");
    expect(await readOne(pg!.db, 1)).toEqual([{ id: 1, a: "one", b: null }]);
    expect((await prepared()).map((r) => r.name).sort()).toEqual([expect.stringMatching(/_0$/), expect.stringMatching(/_1$/)]);
  });

  test("inside a transaction the stale statement fails that transaction only; the next run prepares it again", async () => {
    await alter("alter table named_probe add column c int");
    const inTransaction = pg!.db.transaction().execute((trx) => readOne(trx, 2));
    await expect(inTransaction).rejects.toMatchObject({ code: "0A000" });
    expect(await readOne(pg!.db, 2)).toEqual([{ id: 2, a: "two", b: null, c: null }]);
    expect(await pg!.db.transaction().execute((trx) => readOne(trx, 1))).toEqual([{ id: 1, a: "one", b: null, c: null }]);
  });
});
