/**
 * Planner statistics right after a bulk load (docs/performance.md, "Plans right after a bulk
 * load"): contacts loaded fast through the API are analyzed within seconds, not at the next
 * 10-minute statistics job; and statistics taken while the table was tiny are not kept, so
 * they cannot plan the load that follows (SQLite). Black box: the API, then the database's
 * own catalog (sqlite_stat1; pg_stat_user_tables).
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { pgClient } from "../helpers/postgres.ts";
import { startServer, sleep, type ServerHandle } from "../helpers/server.ts";
import { expectStatus } from "../helpers/expect.ts";

let srv: ServerHandle | undefined;
afterAll(async () => {
  await srv?.stop();
}, 60_000);

/** What the database says of the contacts' statistics: the rows they were taken at (null: none). */
async function analyzedContacts(handle: ServerHandle): Promise<number | null> {
  if (handle.databaseUrl) {
    const client = await pgClient(handle.databaseUrl);
    try {
      const { rows } = await client.query(
        "select n_live_tup - n_mod_since_analyze as n, coalesce(last_analyze, last_autoanalyze) as at from pg_stat_user_tables where relname = 'contacts'",
      );
      return rows[0]?.at ? Number(rows[0].n) : null;
    } finally {
      await client.end();
    }
  }
  const db = new Database(join(handle.dir, "crm.db"), { readonly: true });
  try {
    const table = db.query("select 1 from sqlite_schema where name = 'sqlite_stat1'").get();
    if (!table) return null;
    const row = db.query("select max(cast(stat as integer)) as n from sqlite_stat1 where tbl = 'contacts'").get() as { n: number | null };
    return row.n;
  } finally {
    db.close();
  }
}

test("3,000 contacts loaded in batches are analyzed within seconds; statistics of a one-row table are not kept", async () => {
  srv = await startServer();
  const api = srv.api;
  expectStatus(await api("POST", "/contacts", { body: { firstName: "First", email: "first@example.com" } }), 201);
  // A restart takes statistics at open (SQLite's PRAGMA optimize): the table holds one row.
  const dir = srv.dir;
  await srv.stop(true);
  srv = await startServer({ dir, expectBootstrapKey: false });
  expect(await analyzedContacts(srv)).toBeNull();

  for (let b = 0; b < 3; b++) {
    const items = Array.from({ length: 1000 }, (_, i) => ({ firstName: `Bulk${i}`, lastName: `Load${b}`, email: `bulk-${b}-${i}@example.com` }));
    const res = await srv.api("POST", "/contacts/batch", { body: { operation: "create", items } });
    expectStatus(res, 200);
    expect(res.json.summary.created).toBe(1000);
  }
  const loaded = performance.now();
  let analyzed: number | null = null;
  while (performance.now() - loaded < 25_000) {
    analyzed = await analyzedContacts(srv);
    if (analyzed !== null && analyzed >= 1500) break;
    await sleep(250);
  }
  // Within 2× of the 3,001 rows: taken during or after the load, not at one row.
  expect(analyzed).toBeGreaterThanOrEqual(1500);
  const search = await srv.api("GET", "/contacts", { query: { search: "bulk" } });
  expectStatus(search, 200);
}, 120_000);
