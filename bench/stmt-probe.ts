/**
 * Preload for a profiling run of the real server (`bun --preload bench/stmt-probe.ts
 * src/main.ts serve`): wraps bun:sqlite's Database.prototype.query, which the server's
 * driver calls for every statement (src/runtime/bun.ts), and counts per SQL text how often
 * it was asked for and how often the answer was a newly prepared statement, i.e. a miss of
 * Bun's statement cache. Cumulative counts go to $STMT_PROBE_OUT every 250 ms.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";

const out = process.env.STMT_PROBE_OUT;
if (!out) throw new Error("STMT_PROBE_OUT is not set");
const original = Database.prototype.query;
const last = new Map<string, unknown>();
const counts: Record<string, [calls: number, prepared: number]> = {};

Database.prototype.query = function (this: Database, sql: string) {
  const statement = original.call(this, sql);
  const c = (counts[sql] ??= [0, 0]);
  c[0]++;
  if (last.get(sql) !== statement) {
    c[1]++;
    last.set(sql, statement);
  }
  return statement;
} as typeof original;

setInterval(() => writeFileSync(out, JSON.stringify(counts)), 250).unref();
