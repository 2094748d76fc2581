/**
 * The unit of work (src/storage/unit-of-work.ts): `run(owner, work)` over group commit;
 * afterCommit hooks run once after the COMMIT and never when the unit's savepoint, or the
 * whole batch, rolls back; a savepoint inside a unit keeps or drops its hooks with it.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { sql, type Kysely } from "kysely";
import { GroupCommit } from "../../src/storage/sqlite/group-commit.ts";
import { openDatabase, type OpenDatabase } from "../../src/storage/sqlite/open.ts";
import type { Database, Db } from "../../src/storage/schema.ts";
import { afterCommit, inSavepoint, UnitOfWork, unitsFor } from "../../src/storage/unit-of-work.ts";

let open: OpenDatabase;
let db: Kysely<Database>;
let queue: GroupCommit;
let units: UnitOfWork;
let calls: string[];

beforeEach(async () => {
  open = await openDatabase(":memory:", "NORMAL");
  db = open.db;
  await sql`create table t (id integer primary key, v text not null)`.execute(db);
  // A batch window no busy machine runs out of: the tests count the batches (the default 20 ms is a production figure).
  queue = new GroupCommit(db, { maxMs: 10_000 });
  calls = [];
  units = new UnitOfWork(queue).on("deliveries-due", () => calls.push(`signal after ${queue.stats.batches} commit(s)`));
});
afterEach(() => open.close());

const rows = async () => (await sql<{ v: string }>`select v from t order by id`.execute(db)).rows.map((r) => r.v);
const insert = (trx: Db, v: string) => sql`insert into t (v) values (${v})`.execute(trx);

describe("unit of work", () => {
  test("hooks run once, after the COMMIT, before run settles; a signal reaches its listeners once", async () => {
    const value = await units.run("p", async (trx, unit) => {
      await insert(trx, "a");
      unit.afterCommit(() => calls.push(`hook after ${queue.stats.batches} commit(s)`));
      afterCommit("deliveries-due");
      afterCommit("deliveries-due");
      return "done";
    });
    expect(value).toBe("done");
    expect(calls).toEqual(["hook after 1 commit(s)", "signal after 1 commit(s)"]);
    expect(await rows()).toEqual(["a"]);
  });

  test("a unit that throws runs no hook and writes nothing; the others of its batch commit theirs", async () => {
    const results = await Promise.allSettled([
      units.run("p", async (trx) => {
        await insert(trx, "a");
        afterCommit(() => calls.push("a"));
      }),
      units.run("p", async (trx) => {
        await insert(trx, "b");
        afterCommit(() => calls.push("b"));
        afterCommit("deliveries-due");
        throw new Error("refused");
      }),
      units.run("q", async (trx, unit) => {
        await insert(trx, "c");
        unit.afterCommit(() => calls.push("c"));
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(queue.stats.batches).toBe(1);
    expect(calls.sort()).toEqual(["a", "c"]);
    expect(await rows()).toEqual(["a", "c"]);
  });

  test("when the batch itself fails, no unit of it runs a hook, not even one whose work succeeded", async () => {
    const results = await Promise.allSettled([
      units.run("p", async (trx) => {
        await insert(trx, "a");
        afterCommit(() => calls.push("a"));
      }),
      units.run("p", async (trx) => {
        // Ends the shared transaction under the batch: its ROLLBACK TO fails, so the batch does.
        await sql`rollback`.execute(trx);
        throw new Error("broke the batch");
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(calls).toEqual([]);
    expect(await rows()).toEqual([]);
  });

  test("a savepoint inside a unit keeps the hooks of work it releases and drops those of work it rolls back", async () => {
    await units.run("p", async (trx) => {
      const kept = await inSavepoint(trx, "row", async () => {
        await insert(trx, "kept");
        afterCommit(() => calls.push("kept"));
      });
      const undone = await inSavepoint(trx, "row", async () => {
        await insert(trx, "undone");
        afterCommit(() => calls.push("undone"));
        throw new Error("bad row");
      });
      expect([kept.ok, undone.ok]).toEqual([true, false]);
      expect(calls).toEqual([]);
    });
    expect(calls).toEqual(["kept"]);
    expect(await rows()).toEqual(["kept"]);
  });

  test("outside a unit afterCommit registers nothing; over a bare database each unit is its own transaction", async () => {
    afterCommit(() => calls.push("nowhere"));
    const own = unitsFor(db);
    await own.run(null, async (trx) => {
      await insert(trx, "x");
      afterCommit(() => calls.push("x"));
    });
    await expect(own.run(null, async (trx) => {
      await insert(trx, "y");
      afterCommit(() => calls.push("y"));
      throw new Error("no");
    })).rejects.toThrow("no");
    expect(calls).toEqual(["x"]);
    expect(await rows()).toEqual(["x"]);
    expect(own.stats).toEqual({ batches: 1, jobs: 1 });
  });

  test("a hook that throws does not undo the answer of its committed unit", async () => {
    const value = await units.run("p", async (trx) => {
      await insert(trx, "a");
      afterCommit(() => {
        throw new Error("hook failed");
      });
      afterCommit(() => calls.push("next hook"));
      return 1;
    });
    expect(value).toBe(1);
    expect(calls).toEqual(["next hook"]);
  });
});
