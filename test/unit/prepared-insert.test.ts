import { afterEach, beforeEach, expect, test } from "bun:test";
import { openDatabase, type OpenDatabase } from "../../src/storage/sqlite/open.ts";
import { preparedInsert } from "../../src/storage/prepared.ts";

let open: OpenDatabase;
beforeEach(async () => {
  open = await openDatabase(":memory:", "NORMAL");
});
afterEach(() => open.close());

const insertSettings = preparedInsert("settings", ["name", "value"]);
const rows = (n: number) => Array.from({ length: n }, (_, i) => [`name-${String(i).padStart(3, "0")}`, `value-${i}`]);
const stored = () => open.db.selectFrom("settings").selectAll().where("name", "like", "name-%").orderBy("name").execute();

test("a multi-row insert writes every row, each value in its own column", async () => {
  await insertSettings(open.db, rows(5));
  expect(await stored()).toEqual(rows(5).map(([name, value]) => ({ name, value })));
});

test("no rows is no statement", async () => {
  await insertSettings(open.db, []);
  expect(await stored()).toEqual([]);
});

test("more rows than one statement takes (32) go in several, none lost or repeated", async () => {
  await insertSettings(open.db, rows(70));
  const names = (await stored()).map((r) => r.name);
  expect(names).toEqual(rows(70).map(([name]) => name));
});

test("a failing row fails the insert (the request's transaction rolls it all back)", async () => {
  await insertSettings(open.db, rows(2));
  await expect(insertSettings(open.db, [["name-new", "x"], ["name-000", "duplicate"]])).rejects.toThrow(/UNIQUE/);
});

test("with maxRows, a large count goes in power-of-two chunks of at most maxRows, and returning gives every row's columns", async () => {
  const returning = preparedInsert<"settings", { name: string }>("settings", ["name", "value"], { maxRows: 256, returning: ["name"] });
  const statements: number[] = [];
  const original = open.db.executeQuery.bind(open.db);
  // Counted through Kysely (outside a group commit nothing runs directly).
  (open.db as any).executeQuery = (q: any) => (statements.push(q.parameters.length / 2), original(q));
  const back = await returning(open.db, rows(700));
  expect(statements).toEqual([256, 256, 128, 32, 28]);
  expect(back.map((r) => r.name).sort()).toEqual(rows(700).map(([name]) => name));
  expect((await stored()).length).toBe(700);
});
