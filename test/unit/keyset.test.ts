/**
 * The keyset condition of every paginated list (docs/api.md §11, §3): rows strictly after a
 * position in a list ordered by two columns, the second unique, so pages walked one after the
 * other give every row exactly once, in order. Checked against brute force on an in-memory
 * SQLite table with many ties in the first column, for both directions, with columns given
 * by name and as expressions (filterOnly).
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kysely } from "kysely";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { keysetAfter } from "../../src/storage/keyset.ts";
import { filterOnly } from "../../src/storage/sqlite/statistics.ts";

interface Row {
  at: string;
  n: number;
}
let db: Kysely<{ items: Row }>;
// Deterministic rows: 60 numbers over 7 timestamps, so most timestamps are shared.
const ROWS: Row[] = Array.from({ length: 60 }, (_, i) => ({ at: `2026-01-0${1 + ((i * 5) % 7)}T00:00:00.000Z`, n: i + 1 }));

beforeAll(async () => {
  db = new Kysely({ dialect: new BunSqliteDialect({ database: new Database(":memory:") }) });
  await db.schema.createTable("items").addColumn("at", "text").addColumn("n", "integer").execute();
  await db.insertInto("items").values(ROWS).execute();
});
afterAll(() => db.destroy());

const compare = (a: Row, b: Row) => (a.at === b.at ? a.n - b.n : a.at < b.at ? -1 : 1);
const inOrder = (direction: "asc" | "desc") => [...ROWS].sort((a, b) => (direction === "asc" ? compare(a, b) : compare(b, a)));

type Columns = Parameters<typeof keysetAfter>[1];
const byName: Columns = ["at", "n"];
const byExpression: Columns = [filterOnly("at"), filterOnly("n")];

async function after(columns: Columns, position: [string, number], direction: "asc" | "desc") {
  return db
    .selectFrom("items")
    .select(["at", "n"])
    .where((eb) => keysetAfter(eb as never, columns, position, direction))
    .orderBy("at", direction)
    .orderBy("n", direction)
    .execute();
}

async function walk(columns: Columns, direction: "asc" | "desc", limit: number) {
  const out: Row[] = [];
  let page = await db.selectFrom("items").select(["at", "n"]).orderBy("at", direction).orderBy("n", direction).limit(limit).execute();
  while (page.length > 0) {
    out.push(...page);
    const last = page[page.length - 1]!;
    page = (await after(columns, [last.at, last.n], direction)).slice(0, limit);
  }
  return out;
}

describe("keysetAfter", () => {
  for (const direction of ["asc", "desc"] as const)
    for (const [label, columns] of [["names", byName], ["expressions", byExpression]] as const) {
      test(`${direction}, columns as ${label}: from every row, exactly the rows after it, in list order`, async () => {
        const list = inOrder(direction);
        for (let i = 0; i < list.length; i++) {
          const { at, n } = list[i]!;
          expect(await after(columns, [at, n], direction)).toEqual(list.slice(i + 1));
        }
      });

      test(`${direction}, columns as ${label}: pages of 7 walk every row once, in order`, async () => {
        expect(await walk(columns, direction, 7)).toEqual(inOrder(direction));
      });
    }

  test("a position between rows (a number not in the table) continues right after it", async () => {
    // Row 61 does not exist; on its timestamp, desc continues with smaller numbers, asc with larger.
    const at = ROWS[0]!.at;
    const asc = inOrder("asc");
    expect(await after(byName, [at, 0], "asc")).toEqual(asc.filter((r) => compare(r, { at, n: 0 }) > 0));
    expect(await after(byName, [at, 61], "desc")).toEqual(inOrder("desc").filter((r) => compare(r, { at, n: 61 }) < 0));
  });

  test("after the last row nothing is left", async () => {
    const last = inOrder("desc").at(-1)!;
    expect(await after(byName, [last.at, last.n], "desc")).toEqual([]);
    const top = inOrder("asc").at(-1)!;
    expect(await after(byName, [top.at, top.n], "asc")).toEqual([]);
  });

  test("the first column bounds the search by itself (its own condition, usable by an index)", () => {
    const compiled = db
      .selectFrom("items")
      .selectAll()
      .where((eb) => keysetAfter(eb as never, byName, ["2026-01-03T00:00:00.000Z", 5], "desc"))
      .compile();
    expect(compiled.sql).toMatch(/^select \* from "items" where \("at" <= \? and /);
  });
});
