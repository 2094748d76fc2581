/**
 * A search's walk in list order on PostgreSQL (docs/scaling.md §4, docs/performance.md):
 * bitmap scans off, so the planner walks the index in order to the LIMIT rather than read a
 * whole head group through a bitmap and sort it. From a pool of 4 up, a fifth of the node's
 * connections are list-order connections with bitmap scans off for their session: a walk is
 * its own statement. A smaller pool turns them off and on around each walk. Either way the
 * node keeps to CRM_DB_POOL_SIZE connections, and its other statements plan with bitmap scans
 * on. PostgreSQL run only (CRM_TEST_BACKEND=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "kysely";
import pg from "pg";
import { inListOrder } from "../../src/storage/query.ts";
import { listOrderPoolSize, openPostgres, type OpenPostgres } from "../../src/storage/postgres/open.ts";
import type { Db } from "../../src/storage/schema.ts";
import { createTestDatabase, dropTestDatabase, testBackend } from "../helpers/postgres.ts";

const bitmapScans = async (db: Db) => (await sql<{ enable_bitmapscan: string }>`SHOW enable_bitmapscan`.execute(db)).rows[0]!.enable_bitmapscan;

test("a fifth of the pool walks in list order, from a pool of 4 up; none below, and the main pool keeps the rest", () => {
  expect([1, 2, 3, 4, 5, 10, 12, 1000].map(listOrderPoolSize)).toEqual([0, 0, 0, 1, 1, 2, 2, 200]);
  for (let size = 1; size <= 1000; size++) expect(size - listOrderPoolSize(size)).toBeGreaterThanOrEqual(Math.ceil(size * 0.75));
});

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: walks in list order", () => {
  let url: string | undefined;
  const opened: OpenPostgres[] = [];
  const open = async (size: number) => {
    const db = await openPostgres(url!, size);
    opened.push(db);
    return db;
  };
  beforeAll(async () => {
    url = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    for (const db of opened) await db.close().catch(() => {});
    if (url) await dropTestDatabase(url).catch(() => {});
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

  test("a node of 3 connections turns bitmap scans off around each walk and back on after", async () => {
    const { db } = await open(3);
    expect(await inListOrder(db, bitmapScans)).toBe("off");
    expect(await bitmapScans(db)).toBe("on");
    await expect(inListOrder(db, async () => { throw new Error("walk failed"); })).rejects.toThrow("walk failed");
    expect(await bitmapScans(db)).toBe("on");
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

  test("the node keeps to its pool size: walks and other reads at once open at most CRM_DB_POOL_SIZE connections", async () => {
    for (const earlier of opened.splice(0)) await earlier.close(); // only this node's connections are counted
    const { db } = await open(5);
    const watcher = new pg.Client({ connectionString: url, application_name: "crm-test-watch" });
    await watcher.connect();
    try {
      let most = 0;
      let busy = true;
      const watching = (async () => {
        while (busy) {
          const { rows } = await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'crm'");
          most = Math.max(most, rows[0].n);
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
