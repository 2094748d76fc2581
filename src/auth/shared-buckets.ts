import { sql, type Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import { TokenBucket, type LimitDecision } from "./limiter.ts";

export interface BucketSpec {
  name: string;
  capacity: number;
  windowMs: number;
}

/** A bucket's row after one request, as the statement returns it. */
interface Row {
  name: string;
  /** Tokens before this request's take (refilled to now, resized to the spec). */
  level: number;
  /** Tokens stored: `level` less this request's token when every bucket allowed it. */
  tokens: number;
  allowed: boolean;
}

/**
 * A key's token buckets kept in the database, for several nodes on one PostgreSQL
 * (decisions §13: a key's 120 a minute is the key's, not each node's). The arithmetic of
 * the in-memory buckets (src/auth/limiter.ts: continuous refill, resize keeping the
 * tokens spent) done by one statement for all of a request's buckets, which takes a token
 * from every one or from none (docs/security.md §9): the rows are locked in name order
 * while it runs, so requests of one key (on any node) take turns for microseconds and a
 * refused request never holds a token another request is refused for. PostgreSQL-only
 * SQL, used only there.
 */
export class SharedBuckets {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Takes one token from every bucket of `specs`, or from none (decisions §9: a refused
   * request consumes nothing). The decision and its headers as `consume` makes them in
   * memory. A key's first request (or its first after the sweep) finds rows missing: they
   * are made full, and the take runs again.
   */
  async consume(keyId: string, specs: BucketSpec[], now: number): Promise<LimitDecision> {
    const ordered = [...specs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (;;) {
      const rows = await this.takeAll(keyId, ordered, now);
      if (rows.length === specs.length) return decision(specs, rows, now);
      await this.db
        .insertInto("rate_limit_buckets")
        .values(ordered.map((spec) => ({ key_id: keyId, name: spec.name, capacity: spec.capacity, tokens: spec.capacity, updated_ms: now })))
        .onConflict((oc) => oc.columns(["key_id", "name"]).doNothing())
        .execute();
    }
  }

  /** One statement: refill every bucket to `now`, resize it to its spec, and take a token from each when each has one. No row changes unless all of them exist. */
  private async takeAll(keyId: string, specs: BucketSpec[], now: number): Promise<Row[]> {
    const values = sql.join(specs.map((s) => sql`(${s.name}::text, ${s.capacity}::integer, ${s.windowMs}::float8)`));
    const { rows } = await sql<Row>`
      WITH spec (name, capacity, window_ms) AS (VALUES ${values}),
      old AS (
        SELECT b.name, b.capacity AS old_capacity, b.tokens, b.updated_ms, spec.capacity, spec.window_ms
        FROM rate_limit_buckets b JOIN spec ON spec.name = b.name
        WHERE b.key_id = ${keyId}
        ORDER BY b.name
        FOR UPDATE OF b
      ), lvl AS (
        SELECT name, capacity,
          GREATEST(0, capacity::float8 - (old_capacity - LEAST(old_capacity, tokens + GREATEST(0, ${now}::float8 - updated_ms) * old_capacity / window_ms))) AS level
        FROM old
      ), verdict AS (
        SELECT count(*) = ${specs.length} AS complete, bool_and(level >= 1) AS allowed FROM lvl
      )
      UPDATE rate_limit_buckets b
      SET capacity = lvl.capacity, tokens = lvl.level - CASE WHEN verdict.allowed THEN 1 ELSE 0 END, updated_ms = GREATEST(b.updated_ms, ${now})
      FROM lvl, verdict
      WHERE b.key_id = ${keyId} AND b.name = lvl.name AND verdict.complete
      RETURNING b.name AS name, lvl.level AS level, b.tokens AS tokens, verdict.allowed AS allowed`.execute(this.db);
    return rows;
  }

  /** Drops buckets untouched for longer than the longest window: full again, like a missing row (jobs). */
  async sweep(now: number, longestWindowMs: number): Promise<void> {
    await this.db.deleteFrom("rate_limit_buckets").where("updated_ms", "<", now - longestWindowMs).execute();
  }
}

/** The headers' bucket: the first in `specs` that refused, or the one with fewer tokens left. */
function decision(specs: BucketSpec[], rows: Row[], now: number): LimitDecision {
  const buckets = specs.map((spec) => {
    const row = rows.find((r) => r.name === spec.name)!;
    return { spec, row, bucket: TokenBucket.restore(spec.capacity, spec.windowMs, row.allowed ? row.tokens : row.level, now) };
  });
  const refusing = buckets.find((b) => !b.row.allowed && b.row.level < 1);
  if (refusing) {
    const { spec, bucket } = refusing;
    return {
      allowed: false,
      name: spec.name,
      limit: bucket.capacity,
      remaining: 0,
      resetSeconds: bucket.secondsUntilFull(now),
      retryAfterSeconds: Math.max(1, bucket.secondsUntilToken(now)),
    };
  }
  const tightest = buckets.reduce((a, b) => (b.bucket.level(now) < a.bucket.level(now) ? b : a));
  return {
    allowed: true,
    name: tightest.spec.name,
    limit: tightest.bucket.capacity,
    remaining: Math.floor(tightest.bucket.level(now)),
    resetSeconds: tightest.bucket.secondsUntilFull(now),
    retryAfterSeconds: 0,
  };
}
