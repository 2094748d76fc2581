import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { TokenBucket, type LimitDecision } from "./limiter.ts";

export interface BucketSpec {
  name: string;
  capacity: number;
  windowMs: number;
}

interface Taken {
  spec: BucketSpec;
  allowed: boolean;
  /** The bucket after this request: tokens left (after the take, when allowed). */
  bucket: TokenBucket;
}

/**
 * A key's token buckets kept in the database, for several nodes on one PostgreSQL
 * (decisions §13: a key's 120 a minute is the key's, not each node's). The arithmetic of
 * the in-memory buckets (src/auth/limiter.ts: continuous refill, resize keeping the
 * tokens spent) done by one statement per bucket, so the row is locked only while that
 * statement runs: two nodes taking from one bucket queue on it for microseconds, and the
 * count stays exact. PostgreSQL-only SQL, used only there.
 */
export class SharedBuckets {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Takes one token from every bucket of `specs`, or from none: a bucket that refuses
   * gives back the token an earlier one took (decisions §9: a refused request consumes
   * nothing). The decision and its headers as `consume` makes them in memory.
   */
  async consume(keyId: string, specs: BucketSpec[], now: number): Promise<LimitDecision> {
    const taken: Taken[] = [];
    for (const spec of specs) {
      const result = await this.take(keyId, spec, now);
      if (!result.allowed) {
        for (const earlier of taken) await this.giveBack(keyId, earlier.spec.name);
        const { bucket } = result;
        return {
          allowed: false,
          name: spec.name,
          limit: bucket.capacity,
          remaining: 0,
          resetSeconds: bucket.secondsUntilFull(now),
          retryAfterSeconds: Math.max(1, bucket.secondsUntilToken(now)),
        };
      }
      taken.push(result);
    }
    const tightest = taken.reduce((a, b) => (b.bucket.level(now) < a.bucket.level(now) ? b : a));
    return {
      allowed: true,
      name: tightest.spec.name,
      limit: tightest.bucket.capacity,
      remaining: Math.floor(tightest.bucket.level(now)),
      resetSeconds: tightest.bucket.secondsUntilFull(now),
      retryAfterSeconds: 0,
    };
  }

  /** One statement: refill to `now`, resize to the spec's capacity, take a token when there is one. */
  private async take(keyId: string, spec: BucketSpec, now: number): Promise<Taken> {
    const { name, capacity, windowMs } = spec;
    for (;;) {
      const { rows } = await sql<{ level: number; tokens: number }>`
        WITH old AS (
          SELECT capacity, tokens, updated_ms FROM rate_limit_buckets
          WHERE key_id = ${keyId} AND name = ${name} FOR UPDATE
        ), lvl AS (
          SELECT GREATEST(0, ${capacity}::float8 - (capacity - LEAST(capacity, tokens + GREATEST(0, ${now}::float8 - updated_ms) * capacity / ${windowMs}::float8))) AS level
          FROM old
        )
        UPDATE rate_limit_buckets b
        SET capacity = ${capacity}, tokens = lvl.level - CASE WHEN lvl.level >= 1 THEN 1 ELSE 0 END, updated_ms = GREATEST(b.updated_ms, ${now})
        FROM lvl WHERE b.key_id = ${keyId} AND b.name = ${name}
        RETURNING lvl.level AS level, b.tokens AS tokens`.execute(this.db);
      const row = rows[0];
      if (row) {
        const allowed = row.level >= 1;
        return { spec, allowed, bucket: TokenBucket.restore(capacity, windowMs, allowed ? row.tokens : row.level, now) };
      }
      // The key's first request: a full bucket less this request's token. Another node may
      // create it first; then the update above takes from that one.
      const inserted = await this.db
        .insertInto("rate_limit_buckets")
        .values({ key_id: keyId, name, capacity, tokens: capacity - 1, updated_ms: now })
        .onConflict((oc) => oc.columns(["key_id", "name"]).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
        return { spec, allowed: true, bucket: TokenBucket.restore(capacity, windowMs, capacity - 1, now) };
      }
    }
  }

  private async giveBack(keyId: string, name: string): Promise<void> {
    await this.db
      .updateTable("rate_limit_buckets")
      .set({ tokens: sql`LEAST(capacity, tokens + 1)` })
      .where("key_id", "=", keyId)
      .where("name", "=", name)
      .execute();
  }

  /** Drops buckets untouched for longer than the longest window: full again, like a missing row (jobs). */
  async sweep(now: number, longestWindowMs: number): Promise<void> {
    await this.db.deleteFrom("rate_limit_buckets").where("updated_ms", "<", now - longestWindowMs).execute();
  }
}
