/**
 * Preload for a profiling run of the real server (`bun --preload bench/stmt-probe.ts
 * src/main.ts serve`): counts, per SQL text, how often bun:sqlite really prepared a
 * statement, whichever cache the server puts in front (its own Map calling
 * Database.prototype.prepare, or Bun's Database.query, whose misses hand back a new
 * statement object). Cumulative counts go to $STMT_PROBE_OUT every 250 ms.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";

const out = process.env.STMT_PROBE_OUT;
if (!out) throw new Error("STMT_PROBE_OUT is not set");
const prepared: Record<string, number> = {};
const count = (sql: string) => void (prepared[sql] = (prepared[sql] ?? 0) + 1);

const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (this: Database, sql: string, ...rest: unknown[]) {
  count(sql);
  return (prepare as (...a: unknown[]) => unknown).call(this, sql, ...rest);
} as typeof prepare;

const query = Database.prototype.query;
const seen = new Map<string, unknown>();
Database.prototype.query = function (this: Database, sql: string) {
  const statement = query.call(this, sql);
  if (seen.get(sql) !== statement) {
    count(sql);
    seen.set(sql, statement);
  }
  return statement;
} as typeof query;

setInterval(() => writeFileSync(out, JSON.stringify(prepared)), 250).unref();
