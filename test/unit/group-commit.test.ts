/**
 * Group commit (src/storage/sqlite/group-commit.ts, docs/decisions.md): write requests that arrive
 * together share one transaction, one savepoint each; each stays all-or-nothing, and none
 * settles before the COMMIT that makes it durable.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database as SqliteFile } from "bun:sqlite";
import { sql, type Kysely } from "kysely";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GroupCommit, WriteQueueFull } from "../../src/storage/sqlite/group-commit.ts";
import { preparedQuery } from "../../src/storage/prepared.ts";
import { openDatabase, type OpenDatabase } from "../../src/storage/sqlite/open.ts";
import type { Database } from "../../src/storage/schema.ts";

let open: OpenDatabase;
let db: Kysely<Database>;

beforeEach(async () => {
  open = await openDatabase(":memory:", "NORMAL");
  db = open.db;
  await sql`create table t (id integer primary key, v text not null)`.execute(db);
  await sql`create table child (parent integer not null references t(id) deferrable initially deferred)`.execute(db);
});
afterEach(() => open.close());

/**
 * The batch's time bound (maxMs, 20 ms by default) is not what most tests here check: a slow or
 * busy machine (a cold query compile, a GC pause) must not split their batch in two.
 */
const unhurried = { maxMs: 60_000 };

const rows = async () => (await sql<{ v: string }>`select v from t order by id`.execute(db)).rows.map((r) => r.v);
const insert = (v: string) => async (trx: Kysely<Database>) => {
  await sql`insert into t (v) values (${v})`.execute(trx);
  return v;
};

describe("group commit", () => {
  test("requests submitted together share one transaction and all commit", async () => {
    const writes = new GroupCommit(db, unhurried);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => writes.run(insert(`r${i}`))));
    expect(results).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`));
    expect(await rows()).toEqual(results);
    expect(writes.stats).toEqual({ batches: 1, jobs: 10 });
  });

  test("a failing request rolls back only its own writes; the others in its batch commit", async () => {
    const writes = new GroupCommit(db, unhurried);
    const outcomes = await Promise.allSettled([
      writes.run(insert("a")),
      writes.run(async (trx) => {
        await sql`insert into t (v) values ('half-written')`.execute(trx);
        throw new Error("refused");
      }),
      writes.run(insert("c")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe("refused");
    expect(await rows()).toEqual(["a", "c"]);
    expect(writes.stats.batches).toBe(1);
  });

  test("no request settles before its batch has committed", async () => {
    const writes = new GroupCommit(db, unhurried);
    let firstSettled = false;
    let firstSettledWhileSecondRan: boolean | null = null;
    const first = writes.run(insert("x")).then(() => {
      firstSettled = true;
    });
    const second = writes.run(async (trx) => {
      await new Promise((r) => setImmediate(r)); // give a settled promise every chance to run its callbacks
      firstSettledWhileSecondRan = firstSettled;
      return insert("y")(trx);
    });
    await Promise.all([first, second]);
    expect(writes.stats.batches).toBe(1);
    expect(firstSettledWhileSecondRan!).toBe(false);
    expect(firstSettled).toBe(true);
  });

  test("when the COMMIT fails, every request of the batch fails and nothing is written", async () => {
    const writes = new GroupCommit(db, unhurried);
    const outcomes = await Promise.allSettled([
      writes.run(insert("a")),
      // A deferred foreign key is checked only at COMMIT: this one fails the whole batch there.
      writes.run(async (trx) => {
        await sql`insert into child (parent) values (999)`.execute(trx);
      }),
      writes.run(insert("c")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(await rows()).toEqual([]);
    // The next batch starts clean.
    await writes.run(insert("after"));
    expect(await rows()).toEqual(["after"]);
  });

  test("a unit that asks to be alone has a transaction of its own, without a savepoint around it; the others wait for the next", async () => {
    const writes = new GroupCommit(db, unhurried);
    const savepointsSeen: number[] = [];
    const alone = async (trx: Kysely<Database>) => {
      // SQLite refuses RELEASE of a savepoint that is not open: none is, in its own transaction.
      const open = await sql`release request_1`.execute(trx).then(() => 1, () => 0);
      savepointsSeen.push(open);
      await sql`insert into t (v) values ('alone')`.execute(trx);
      return "alone";
    };
    const results = await Promise.all([writes.run(insert("a")), writes.run(alone, "", { alone: true }), writes.run(insert("b"))]);
    expect(results).toEqual(["a", "alone", "b"]);
    expect(savepointsSeen).toEqual([0]);
    expect(await rows()).toEqual(["a", "alone", "b"]);
    expect(writes.stats).toEqual({ batches: 3, jobs: 3 });
  });

  test("a failing unit that is alone rolls back its transaction only; the units around it commit", async () => {
    const writes = new GroupCommit(db);
    const failing = async (trx: Kysely<Database>) => {
      await sql`insert into t (v) values ('half-written')`.execute(trx);
      throw new Error("refused");
    };
    const outcomes = await Promise.allSettled([writes.run(insert("a")), writes.run(failing, "", { alone: true }), writes.run(insert("c"))]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe("refused");
    expect(await rows()).toEqual(["a", "c"]);
  });

  test("a batch takes at most maxJobs requests; the rest go in the next", async () => {
    const writes = new GroupCommit(db, { ...unhurried, maxJobs: 4 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => writes.run(insert(`r${i}`))));
    expect(writes.stats).toEqual({ batches: 3, jobs: 10 });
    expect((await rows()).length).toBe(10);
  });

  test("a batch takes no new request once it has run for maxMs; those wait for the next", async () => {
    const writes = new GroupCommit(db, { maxMs: 5 });
    const slow = async (trx: Kysely<Database>) => {
      await Bun.sleep(20); // past the batch's time bound before the next request is taken
      return insert("slow")(trx);
    };
    const results = await Promise.all([writes.run(slow), writes.run(insert("next"))]);
    expect(results).toEqual(["slow", "next"]);
    expect(writes.stats).toEqual({ batches: 2, jobs: 2 });
  });

  test("a batch always takes its first request, however long its BEGIN took (never an empty batch)", async () => {
    // maxMs 0: every batch is past its time bound as soon as its transaction has begun.
    const writes = new GroupCommit(db, { maxMs: 0 });
    const results = await Promise.all(["a", "b", "c"].map((v) => writes.run(insert(v))));
    expect(results).toEqual(["a", "b", "c"]);
    expect(writes.stats).toEqual({ batches: 3, jobs: 3 });
  });

  test("requests arriving while a batch runs join it or the next; none is lost or run twice", async () => {
    const writes = new GroupCommit(db);
    const pending: Promise<string>[] = [];
    for (let i = 0; i < 50; i++) {
      pending.push(writes.run(insert(`r${i}`)));
      if (i % 7 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(pending);
    const written = await rows();
    expect(written.length).toBe(50);
    expect(new Set(written).size).toBe(50);
    expect(writes.stats.jobs).toBe(50);
  });

  test("when no transaction can begin (another process holds the write lock), waiting requests fail instead of hanging", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-group-commit-"));
    const file = await openDatabase(join(dir, "crm.db"), "NORMAL");
    try {
      await sql`create table t (id integer primary key, v text not null)`.execute(file.db);
      file.raw.exec("PRAGMA busy_timeout = 50");
      const other = new SqliteFile(join(dir, "crm.db"));
      other.exec("BEGIN IMMEDIATE");
      const writes = new GroupCommit(file.db);
      const outcomes = await Promise.allSettled([1, 2, 3].map((i) => writes.run(insert(`r${i}`))));
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
      other.exec("ROLLBACK");
      other.close();
      expect(await writes.run(insert("after"))).toBe("after");
    } finally {
      await file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a read outside the batch never sees its uncommitted rows: it waits for the COMMIT (or the rollback)", async () => {
    // preparedQuery reads run at once on the connection only when no transaction is open.
    const byValue = preparedQuery<[string], { v: string }>(1, (k, v) =>
      (k as Kysely<any>).selectFrom("t").select("v").where("v", "=", v) as never,
    );
    expect(await byValue(db, "x")).toEqual([]); // direct path, nothing open
    const writes = new GroupCommit(db);
    let duringCommitted: Promise<{ v: string }[]> | null = null;
    let duringRolledBack: Promise<{ v: string }[]> | null = null;
    const outcomes = await Promise.allSettled([
      writes.run(async (trx) => {
        await sql`insert into t (v) values ('x')`.execute(trx);
        duringCommitted = byValue(db, "x");
        return "ok";
      }),
      writes.run(async (trx) => {
        await sql`insert into t (v) values ('gone')`.execute(trx);
        duringRolledBack = byValue(db, "gone");
        throw new Error("refused");
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected"]);
    expect(await duringCommitted!).toEqual([{ v: "x" }]); // answered after the COMMIT, so it sees the row
    expect(await duringRolledBack!).toEqual([]); // never the rolled-back row
  });
});

describe("compiled statements run directly on the connection inside a batch (src/storage/sqlite/direct.ts)", () => {
  const insertValue = preparedQuery<[string], never>(1, (k, v) => (k as Kysely<any>).insertInto("t").values({ v }) as never);
  const insertReturning = preparedQuery<[string], { v: string }>(1, (k, v) =>
    (k as Kysely<any>).insertInto("t").values({ v }).returning("v") as never,
  );
  const byValue = preparedQuery<[string], { v: string }>(1, (k, v) => (k as Kysely<any>).selectFrom("t").select("v").where("v", "=", v) as never);

  test("a request's compiled writes are rolled back with its savepoint; its neighbours' are committed", async () => {
    const writes = new GroupCommit(db, unhurried);
    const outcomes = await Promise.allSettled([
      writes.run(async (trx) => (await insertValue(trx, "kept"), "ok")),
      writes.run(async (trx) => {
        await insertValue(trx, "undone");
        expect(await byValue(trx, "undone")).toEqual([{ v: "undone" }]); // the batch sees its own row
        throw new Error("refused");
      }),
      writes.run(async (trx) => (await insertReturning(trx, "returned"))[0]!.v),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[2] as PromiseFulfilledResult<string>).value).toBe("returned"); // RETURNING answers its row
    expect(await byValue(db, "kept")).toEqual([{ v: "kept" }]);
    expect(await byValue(db, "undone")).toEqual([]);
    expect(writes.stats.batches).toBe(1);
  });

  test("a compiled write outside a batch's transaction still goes through Kysely and commits", async () => {
    await db.transaction().execute(async (trx) => insertValue(trx, "plain"));
    expect(await byValue(db, "plain")).toEqual([{ v: "plain" }]);
  });
});

describe("the write queue is bounded (docs/api.md §7)", () => {
  /** A request that holds the writer until the test lets it go. */
  function holdWriter(writes: GroupCommit) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = writes.run(async (trx) => {
      await gate;
      return insert("held")(trx);
    });
    return { held, release };
  }

  test("past its per-owner bound an owner's request is refused at once, while another owner still queues", async () => {
    const writes = new GroupCommit(db, { maxQueued: 10, maxQueuedPerOwner: 2, maxJobs: 1 });
    const { held, release } = holdWriter(writes);
    await Bun.sleep(5);
    const a1 = writes.run(insert("a1"), "A");
    const a2 = writes.run(insert("a2"), "A");
    await expect(writes.run(insert("a3"), "A")).rejects.toBeInstanceOf(WriteQueueFull);
    const b1 = writes.run(insert("b1"), "B");
    release();
    await Promise.all([held, a1, a2, b1]);
    expect((await rows()).sort()).toEqual(["a1", "a2", "b1", "held"]);
    // Taken from the queue, an owner's requests count no more: A may queue again.
    await writes.run(insert("a4"), "A");
  });

  test("past its total bound every request is refused at once", async () => {
    const writes = new GroupCommit(db, { maxQueued: 3, maxQueuedPerOwner: 3, maxJobs: 1 });
    const { held, release } = holdWriter(writes);
    await Bun.sleep(5);
    const queued = [writes.run(insert("x"), "X"), writes.run(insert("y"), "Y"), writes.run(insert("z"), "Z")];
    await expect(writes.run(insert("w"), "W")).rejects.toBeInstanceOf(WriteQueueFull);
    release();
    await Promise.all([held, ...queued]);
    expect(await rows()).toHaveLength(4);
  });
});
