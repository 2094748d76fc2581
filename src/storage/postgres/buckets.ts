import { sql, type Kysely } from "kysely";
import type { BucketSpec, BucketTake, SharedBuckets } from "../port.ts";
import type { Database } from "../schema.ts";

/**
 * A key's token buckets kept in the database, for several nodes on one PostgreSQL
 * (src/storage/port.ts, `SharedBuckets`; docs/scaling.md §6: a key's 120 a minute is the key's,
 * not each node's). The arithmetic of the in-memory buckets (src/auth/limiter.ts:
 * continuous refill, resize keeping the tokens spent) done by one statement for all of a
 * request's buckets, which takes its tokens (one, or a batch's item count, docs/api.md
 * §18.4) from every one or from none (docs/security.md §9):
 * the rows are locked in name order while it runs, so requests of one key (on any node)
 * take turns for microseconds and a refused request never holds a token another request
 * is refused for. The rate limiter (src/auth/rate-limiter.ts) makes the decision from the rows.
 *
 * The statement commits without waiting for its WAL to reach the disk (`synchronous_commit`
 * off for its own transaction only, docs/scaling.md §6): a token count is not data, and a
 * crash can lose at most the last fraction of a second of takes, which only refills a
 * bucket a little. Waiting for the flush cost every request on PostgreSQL about a
 * millisecond, and held the key's rows locked for it.
 */
export function postgresBuckets(db: Kysely<Database>): SharedBuckets {
  return {
    async take(keyId: string, specs: BucketSpec[], now: number): Promise<BucketTake[]> {
      const ordered = [...specs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const values = sql.join(ordered.map((s) => sql`(${s.name}::text, ${s.capacity}::integer, ${s.windowMs}::float8, ${s.cost ?? 1}::float8)`));
      const { rows } = await sql<BucketTake>`
        WITH relaxed AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true) AS setting),
        spec (name, capacity, window_ms, cost) AS (VALUES ${values}),
        old AS (
          SELECT b.name, b.capacity AS old_capacity, b.tokens, b.updated_ms, spec.capacity, spec.window_ms, spec.cost
          FROM rate_limit_buckets b JOIN spec ON spec.name = b.name
          WHERE b.key_id = ${keyId}
          ORDER BY b.name
          FOR UPDATE OF b
        ), lvl AS (
          SELECT name, capacity, cost,
            GREATEST(0, capacity::float8 - (old_capacity - LEAST(old_capacity, tokens + GREATEST(0, ${now}::float8 - updated_ms) * old_capacity / window_ms))) AS level
          FROM old
        ), verdict AS (
          SELECT count(*) = ${ordered.length} AND (SELECT setting FROM relaxed) = 'off' AS complete, bool_and(level >= cost) AS allowed FROM lvl
        )
        UPDATE rate_limit_buckets b
        SET capacity = lvl.capacity, tokens = lvl.level - CASE WHEN verdict.allowed THEN lvl.cost ELSE 0 END, updated_ms = GREATEST(b.updated_ms, ${now})
        FROM lvl, verdict
        WHERE b.key_id = ${keyId} AND b.name = lvl.name AND verdict.complete
        RETURNING b.name AS name, lvl.level AS level, b.tokens AS tokens, verdict.allowed AS allowed`.execute(db);
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
