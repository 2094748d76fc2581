/**
 * In-process profile of the service code behind each read scenario, without HTTP: calls the
 * real src functions on the seeded database through a Kysely that logs every statement, and
 * reports per scenario the call time (p50/p95), the slowest statement with its share and its
 * EXPLAIN QUERY PLAN. Also times preparing each of those statements against taking it from
 * Bun's statement cache (what src/runtime/bun.ts relies on).
 */
import { Database } from "bun:sqlite";
import { Kysely } from "kysely";
import { listContacts } from "../src/contacts/list.ts";
import { ListContactsQuery } from "../src/contacts/schemas.ts";
import { getContactWithSignal } from "../src/contacts/service.ts";
import type { Database as Schema } from "../src/storage/schema.ts";
import { openDatabase } from "../src/storage/sqlite/open.ts";
import { CursorCodec } from "../src/lib/cursor.ts";

export interface ProfileCase {
  name: string;
  /** Query strings (?…) for a list, or contact numbers for GET one. */
  inputs: Array<string | number>;
}

export interface QueryProfile {
  name: string;
  p50Ms: number;
  p95Ms: number;
  topSql: string;
  topShare: number;
  topAvgUs: number;
  plan: string[];
  statements: number;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

export async function profileQueries(dbPath: string, projectId: string, cases: ProfileCase[], runs = 300) {
  const { raw, close } = await openDatabase(dbPath, "NORMAL");
  let logged: Array<{ sql: string; params: readonly unknown[]; ms: number }> = [];
  const db = new Kysely<Schema>({
    dialect: raw.dialect,
    log: (e) => void logged.push({ sql: e.query.sql, params: e.query.parameters, ms: e.queryDurationMillis }),
  });
  const cursors = new CursorCodec("bench");
  const explain = new Database(dbPath, { readonly: true });
  const results: QueryProfile[] = [];
  const allSql = new Set<string>();

  for (const c of cases) {
    const times: number[] = [];
    const bySql = new Map<string, { ms: number; n: number; params: readonly unknown[] }>();
    for (let i = 0; i < runs; i++) {
      const input = c.inputs[i % c.inputs.length]!;
      logged = [];
      const t = performance.now();
      if (typeof input === "number") await getContactWithSignal(db, projectId, input);
      else {
        // Parsed as the route parses it (limit "50" → 50), so the service sees what it sees over HTTP.
        const query = ListContactsQuery.parse(Object.fromEntries(new URLSearchParams(input)));
        await listContacts(db, cursors, projectId, query);
      }
      times.push(performance.now() - t);
      for (const q of logged) {
        allSql.add(q.sql);
        const s = bySql.get(q.sql) ?? { ms: 0, n: 0, params: q.params };
        s.ms += q.ms;
        s.n++;
        bySql.set(q.sql, s);
      }
    }
    times.sort((a, b) => a - b);
    const total = [...bySql.values()].reduce((a, s) => a + s.ms, 0);
    const [topSql, top] = [...bySql].sort((a, b) => b[1].ms - a[1].ms)[0]!;
    const plan = explain.query(`EXPLAIN QUERY PLAN ${topSql}`).all(...(top.params as never[])) as Array<{ detail: string }>;
    results.push({
      name: c.name,
      p50Ms: round(pct(times, 50)),
      p95Ms: round(pct(times, 95)),
      topSql,
      topShare: round(top.ms / total, 2),
      topAvgUs: round((top.ms * 1000) / top.n, 1),
      plan: plan.map((p) => p.detail),
      statements: bySql.size,
    });
  }

  // Statement cost: prepare every time (what a driver without a cache does) vs cached lookup.
  const stmt = { prepareUs: 0, cachedUs: 0, statements: allSql.size };
  const N = 200;
  for (const sql of allSql) {
    let t = performance.now();
    for (let i = 0; i < N; i++) explain.prepare(sql).finalize();
    stmt.prepareUs += ((performance.now() - t) * 1000) / N;
    explain.query(sql);
    t = performance.now();
    for (let i = 0; i < N; i++) explain.query(sql);
    stmt.cachedUs += ((performance.now() - t) * 1000) / N;
  }
  stmt.prepareUs = round(stmt.prepareUs / allSql.size, 1);
  stmt.cachedUs = round(stmt.cachedUs / allSql.size, 2);
  explain.close();
  await db.destroy();
  await close().catch(() => {});
  return { queries: results, statementCost: stmt, bunQueryCacheSize: (Database as unknown as { MAX_QUERY_CACHE_SIZE: number }).MAX_QUERY_CACHE_SIZE };
}
