import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { consume, TokenBucket, type LimitDecision } from "./limiter.ts";

export interface BucketSpec {
  name: string;
  capacity: number;
  windowMs: number;
}

/**
 * A key's token buckets kept in the database, for several nodes on one PostgreSQL
 * (decisions §13: a key's 120 a minute is the key's, not each node's). The same
 * arithmetic as the in-memory buckets (src/auth/limiter.ts), applied to rows locked for
 * the length of one short transaction, so two nodes taking from one bucket at once
 * queue on its row and the count stays exact.
 */
export class SharedBuckets {
  constructor(private readonly db: Kysely<Database>) {}

  async consume(keyId: string, specs: BucketSpec[], now: number): Promise<LimitDecision> {
    return this.db.transaction().execute(async (trx) => {
      // Creates missing buckets full, and locks every one of the key's buckets asked for:
      // ON CONFLICT DO UPDATE takes the row lock and RETURNING gives the stored state.
      const rows = await trx
        .insertInto("rate_limit_buckets")
        .values(specs.map((s) => ({ key_id: keyId, name: s.name, capacity: s.capacity, tokens: s.capacity, updated_ms: now })))
        .onConflict((oc) => oc.columns(["key_id", "name"]).doUpdateSet({ key_id: sql`excluded.key_id` }))
        .returning(["name", "capacity", "tokens", "updated_ms"])
        .execute();
      const buckets = specs.map((spec) => {
        const row = rows.find((r) => r.name === spec.name)!;
        const bucket = TokenBucket.restore(row.capacity, spec.windowMs, row.tokens, Number(row.updated_ms));
        bucket.resize(spec.capacity, now);
        return { name: spec.name, bucket };
      });
      const decision = consume(buckets, now);
      for (const { name, bucket } of buckets) {
        const { tokens, updatedAt } = bucket.state();
        await trx
          .updateTable("rate_limit_buckets")
          .set({ capacity: bucket.capacity, tokens, updated_ms: updatedAt })
          .where("key_id", "=", keyId)
          .where("name", "=", name)
          .execute();
      }
      return decision;
    });
  }

  /** Drops buckets untouched for longer than the longest window: full again, like a missing row (jobs). */
  async sweep(now: number, longestWindowMs: number): Promise<void> {
    await this.db.deleteFrom("rate_limit_buckets").where("updated_ms", "<", now - longestWindowMs).execute();
  }
}
