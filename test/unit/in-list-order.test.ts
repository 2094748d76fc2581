/**
 * `inListOrder` (src/storage/query.ts, Dialect.inListOrder; docs/performance.md "Search that
 * finds people"): on PostgreSQL a walk in list order runs with bitmap scans off on its
 * connection, and the setting is back on afterwards, after a failure too, in or out of a
 * transaction, so no other statement of the pool plans without them. A node opened with a
 * pool of 4 or more (openPostgres) walks on its own list-order connections instead, bitmap
 * scans off for their session: no SET or RESET around a walk, and still no more than
 * CRM_DB_POOL_SIZE connections (docs/scaling.md §4). On either backend of the suite: the
 * PostgreSQL side runs on a database of the test cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { Database, Db } from "../../src/storage/schema.ts";
import { inListOrder } from "../../src/storage/query.ts";
import { listOrderPoolSize, openPostgres, type OpenPostgres } from "../../src/storage/postgres/open.ts";
import { createTestDatabase, dropTestDatabase } from "../helpers/postgres.ts";
import { until } from "../helpers/until.ts";

let url: string;
let db: Kysely<Database>;

beforeAll(async () => {
  url = await createTestDatabase();
  // One connection: what a read leaves on it is what the next statement of the pool finds.
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
});

afterAll(async () => {
  await db.destroy();
  await dropTestDatabase(url);
});

const bitmapScans = async (d: Db) => (await sql<{ enable_bitmapscan: string }>`show enable_bitmapscan`.execute(d)).rows[0]!.enable_bitmapscan;

describe("a walk in list order on PostgreSQL", () => {
  test("runs with bitmap scans off, and they are on again for the pool's next statement", async () => {
    expect(await inListOrder(db, bitmapScans)).toBe("off");
    expect(await bitmapScans(db)).toBe("on");
  });

  test("a failed walk turns them back on too", async () => {
    const failed = inListOrder(db, async (d) => {
      await sql`select 1 / 0`.execute(d);
    });
    expect(failed).rejects.toThrow();
    await failed.catch(() => undefined);
    expect(await bitmapScans(db)).toBe("on");
  });

  test("inside a transaction: off for the walk, on again for the rest of the transaction", async () => {
    const seen = await db.transaction().execute(async (trx) => [await inListOrder(trx, bitmapScans), await bitmapScans(trx)]);
    expect(seen).toEqual(["off", "on"]);
    expect(await bitmapScans(db)).toBe("on");
  });
});

test("a fifth of the pool walks in list order, from a pool of 4 up; none below, and the main pool keeps the rest", () => {
  expect([1, 2, 3, 4, 5, 10, 12, 1000].map(listOrderPoolSize)).toEqual([0, 0, 0, 1, 1, 2, 2, 200]);
  for (let size = 1; size <= 1000; size++) expect(size - listOrderPoolSize(size)).toBeGreaterThanOrEqual(Math.ceil(size * 0.75));
});

describe("a node's list-order connections", () => {
  const opened: OpenPostgres[] = [];
  const open = async (size: number) => {
    const db = await openPostgres(url, size);
    opened.push(db);
    return db;
  };
  afterAll(async () => {
    for (const db of opened) await db.close().catch(() => {});
  });

  test("a node of 10 connections walks on its own connections with bitmap scans off, sending no SET or RESET; its other statements plan with them on", async () => {
    const { db } = await open(10);
    expect(await inListOrder(db, bitmapScans)).toBe("off"); // opens a list-order connection (its SET is its first statement)
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      sent.push(typeof args[0] === "string" ? args[0] : String((args[0] as { text?: string })?.text));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as never;
    try {
      for (let i = 0; i < 5; i++) {
        expect(await inListOrder(db, bitmapScans)).toBe("off");
        expect(await bitmapScans(db)).toBe("on");
      }
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(sent.length).toBe(10);
    expect(sent.filter((s) => /^\s*(set|reset)\b/i.test(s))).toEqual([]);
    // The walks' connections are their own: a statement outside a walk never lands on one.
    const outside = await Promise.all(Array.from({ length: 20 }, () => bitmapScans(db)));
    expect(new Set(outside)).toEqual(new Set(["on"]));
  });

  test("in a transaction the walk stays on the transaction's connection (its snapshot), bitmap scans off for it alone", async () => {
    const { db } = await open(10);
    await db.transaction().execute(async (trx) => {
      await sql`CREATE TEMP TABLE seen_here (n int) ON COMMIT DROP`.execute(trx);
      const walked = await inListOrder(trx, async (d) => [await bitmapScans(d), (await sql<{ n: number }>`SELECT count(*)::int AS n FROM seen_here`.execute(d)).rows[0]!.n]);
      expect(walked).toEqual(["off", 0]);
      expect(await bitmapScans(trx)).toBe("on");
    });
  });

  test("with its list-order connection taken, walks started at once run at once on main-pool connections (SET and RESET around each), none waits", async () => {
    const { db } = await open(5); // one list-order connection, four in the main pool
    const holder = new pg.Client({ connectionString: url, application_name: "crm-test-hold" });
    await holder.connect();
    const blocked = async () =>
      (
        await holder.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'select pg_advisory_xact_lock_shared(4242)' AND wait_event_type = 'Lock'",
        )
      ).rows[0].n;
    try {
      await holder.query("SELECT pg_advisory_lock(4242)");
      // Three walks started in one tick block on the lock: one on the list-order connection, two on the main pool.
      let released = false;
      const waiting = Promise.all(Array.from({ length: 3 }, () => inListOrder(db, (d) => sql`select pg_advisory_xact_lock_shared(4242)`.execute(d)))).then(() => released);
      await until(async () => (await blocked()) === 3, { what: "three walks waiting on the lock at once" });
      // Another walk runs now, beside them.
      expect(await inListOrder(db, bitmapScans)).toBe("off");
      released = true; // before the unlock is sent: no walk can end before it
      await holder.query("SELECT pg_advisory_unlock(4242)");
      expect(await waiting).toBe(true);
      // Every main-pool connection has bitmap scans on again.
      const outside = await Promise.all(Array.from({ length: 8 }, () => bitmapScans(db)));
      expect(new Set(outside)).toEqual(new Set(["on"]));
    } finally {
      await holder.end();
    }
  });

  test("the node keeps to its pool size: walks and other reads at once open at most CRM_DB_POOL_SIZE connections", async () => {
    for (const earlier of opened.splice(0)) await earlier.close();
    const watcher = new pg.Client({ connectionString: url, application_name: "crm-test-watch" });
    await watcher.connect();
    const crmConnections = async () => (await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'crm'")).rows[0].n as number;
    // Only this node's connections are counted: a closed pool's sockets may still be closing.
    await until(async () => (await crmConnections()) === 0, { what: "the earlier nodes' connections to close" });
    const { db } = await open(5);
    try {
      let most = 0;
      let busy = true;
      const watching = (async () => {
        while (busy) {
          most = Math.max(most, await crmConnections());
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const sleep = (d: Db) => sql`SELECT pg_sleep(0.05)`.execute(d);
      await Promise.all([
        ...Array.from({ length: 12 }, () => inListOrder(db, sleep)),
        ...Array.from({ length: 12 }, () => sleep(db)),
      ]);
      busy = false;
      await watching;
      expect(most).toBeGreaterThanOrEqual(2);
      expect(most).toBeLessThanOrEqual(5);
    } finally {
      await watcher.end();
    }
  });
});
