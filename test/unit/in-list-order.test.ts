/**
 * `inListOrder` (src/storage/query.ts, Dialect.inListOrder; docs/performance.md "Search that
 * finds people"): on PostgreSQL a walk in list order runs with bitmap scans off on its
 * connection, and the setting is back on afterwards, after a failure too, in or out of a
 * transaction, so no other statement of the pool plans without them. On either backend of
 * the suite: the PostgreSQL side runs on a database of the test cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { Database, Db } from "../../src/storage/schema.ts";
import { inListOrder } from "../../src/storage/query.ts";
import { createTestDatabase, dropTestDatabase } from "../helpers/postgres.ts";

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
