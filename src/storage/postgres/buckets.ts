import { sql, type Kysely } from "kysely";
import type { BucketSpec, BucketTake, SharedBuckets } from "../port.ts";
import type { Database } from "../schema.ts";

/**
 * A key's token buckets kept in the database, for several nodes on one PostgreSQL
 * (src/storage/port.ts, `SharedBuckets`; docs/scaling.md §6: a key's 120 a minute is the key's,
 * not each node's). The arithmetic of the in-memory buckets (src/auth/limiter.ts:
 * continuous refill, resize keeping the tokens spent) done by one call for all of a
 * request's buckets, which takes its tokens (one, or a batch's item count, docs/api.md
 * §18.4) from every one or from none (docs/security.md §9):
 * the rows are locked in name order while it runs, so requests of one key (on any node)
 * take turns for microseconds and a refused request never holds a token another request
 * is refused for. The rate limiter (src/auth/rate-limiter.ts) makes the decision from the rows.
 *
 * The take is the function `crm_take_tokens` (db/postgres/0014_rate_limit_take.sql), whose
 * statements each connection plans once: as one statement of CTEs it was parsed and planned
 * for every request (0.8 → 0.34 ms a take, docs/performance.md). It commits without waiting
 * for its WAL to reach the disk (`synchronous_commit` off for its own transaction only,
 * docs/scaling.md §6): a token count is not data, and a crash can lose at most the last
 * fraction of a second of takes, which only refills a bucket a little. Waiting for the
 * flush cost every request on PostgreSQL about a millisecond, and held the key's rows
 * locked for it.
 */
export function postgresBuckets(db: Kysely<Database>): SharedBuckets {
  return {
    async take(keyId: string, specs: BucketSpec[], now: number): Promise<BucketTake[]> {
      const ordered = [...specs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const { rows } = await sql<BucketTake>`
        SELECT bucket AS name, bucket_level AS level, bucket_tokens AS tokens, bucket_allowed AS allowed
        FROM crm_take_tokens(${keyId}, ${ordered.map((s) => s.name)}::text[], ${ordered.map((s) => s.capacity)}::integer[],
          ${ordered.map((s) => s.windowMs)}::float8[], ${ordered.map((s) => s.cost ?? 1)}::float8[], ${now}::float8)`.execute(db);
      return rows;
    },

    async fill(keyId: string, specs: BucketSpec[], now: number): Promise<void> {
      const ordered = [...specs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      await db
        .insertInto("rate_limit_buckets")
        .values(ordered.map((spec) => ({ key_id: keyId, name: spec.name, capacity: spec.capacity, tokens: spec.capacity, updated_ms: now })))
        .onConflict((oc) => oc.columns(["key_id", "name"]).doNothing())
        .execute();
    },

    async sweep(before: number): Promise<void> {
      await db.deleteFrom("rate_limit_buckets").where("updated_ms", "<", before).execute();
    },
  };
}
