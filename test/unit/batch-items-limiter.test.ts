/**
 * The per-key bucket of batch items (docs/api.md §18.4, §6), driven by an injected clock:
 * a batch takes one token per item, all or none; a refused batch takes nothing and its
 * Retry-After is the time until enough tokens for its count are back (for a batch larger
 * than the bucket, the time until the bucket is full); the bucket is apart from the minute
 * and create buckets; its capacity follows the project's setting. The same rules hold for
 * the buckets shared through PostgreSQL (src/storage/postgres/buckets.ts), on the
 * PostgreSQL run (CRM_TEST_BACKEND=postgres).
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Caller } from "../../src/auth/keys.ts";
import { RateLimiter, rateLimitHeaders } from "../../src/auth/rate-limiter.ts";
import { openPostgres, type OpenPostgres } from "../../src/storage/postgres/open.ts";
import { postgresBuckets } from "../../src/storage/postgres/buckets.ts";
import { createTestDatabase, dropTestDatabase, testBackend } from "../helpers/postgres.ts";

const T0 = 1_767_225_600_000;
const HOUR = 3_600_000;

function clock() {
  let now = T0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const caller = (over: Partial<Caller> = {}): Caller => ({
  keyId: "key_a",
  projectId: "prj_a",
  scopes: [],
  rateLimitPerMinute: 120,
  contactCreatesPerHour: 600,
  batchItemsPerHour: 1000,
  ...over,
});

/** Both kinds of limiter: in memory (SQLite), and shared through PostgreSQL on that run. */
const opened: OpenPostgres[] = [];
const databases: string[] = [];
afterAll(async () => {
  for (const o of opened.splice(0)) await o.close();
  for (const url of databases.splice(0)) await dropTestDatabase(url).catch(() => {});
});

async function limiterOn(kind: "memory" | "postgres", now: () => number): Promise<RateLimiter> {
  if (kind === "memory") return new RateLimiter(now);
  const url = await createTestDatabase();
  databases.push(url);
  const pg = await openPostgres(url, 4);
  opened.push(pg);
  return new RateLimiter(now, postgresBuckets(pg.db));
}

const kinds: Array<"memory" | "postgres"> = testBackend() === "postgres" ? ["memory", "postgres"] : ["memory"];

describe.each(kinds)("RateLimiter.takeItems (%s)", (kind) => {
  test("a batch takes one token per item; the decision describes the items bucket", async () => {
    const limiter = await limiterOn(kind, clock().now);
    expect(await limiter.takeItems(caller(), 300)).toEqual({
      allowed: true,
      name: "batch-items",
      limit: 1000,
      remaining: 700,
      resetSeconds: 1080,
      retryAfterSeconds: 0,
    });
    expect(await limiter.takeItems(caller(), 700)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 3600 });
  });

  test("not enough tokens for the whole batch: refused, nothing taken, Retry-After = until the batch's count is back", async () => {
    const c = clock();
    const limiter = await limiterOn(kind, c.now);
    await limiter.takeItems(caller(), 900);
    // 100 left; 250 needed: 150 more, at 1000 an hour = 540 s.
    expect(await limiter.takeItems(caller(), 250)).toEqual({
      allowed: false,
      name: "batch-items",
      limit: 1000,
      remaining: 100,
      resetSeconds: 3240,
      retryAfterSeconds: 540,
    });
    expect(limiter.rejected).toBe(1);
    // Nothing was taken: the 100 are still there, for a batch that fits.
    expect(await limiter.takeItems(caller(), 100)).toMatchObject({ allowed: true, remaining: 0 });
    // Time gives the tokens back, continuously.
    c.advance(540_000);
    expect(await limiter.takeItems(caller(), 150)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test("a batch larger than the bucket can never pass: refused with Retry-After = until the bucket is full (at least 1 s)", async () => {
    const c = clock();
    const limiter = await limiterOn(kind, c.now);
    expect(await limiter.takeItems(caller({ batchItemsPerHour: 500 }), 501)).toMatchObject({
      allowed: false,
      limit: 500,
      remaining: 500,
      resetSeconds: 0,
      retryAfterSeconds: 1,
    });
    await limiter.takeItems(caller({ batchItemsPerHour: 500 }), 250);
    expect(await limiter.takeItems(caller({ batchItemsPerHour: 500 }), 600)).toMatchObject({ allowed: false, remaining: 250, retryAfterSeconds: 1800 });
  });

  test("the items bucket is apart from the minute bucket and the create bucket, and each key has its own", async () => {
    const limiter = await limiterOn(kind, clock().now);
    const small = caller({ rateLimitPerMinute: 2, contactCreatesPerHour: 1, batchItemsPerHour: 10 });
    expect(await limiter.takeItems(small, 10)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.decide(small, true)).toMatchObject({ allowed: true, name: "contact-creates", remaining: 0 });
    expect(await limiter.decide(small, false)).toMatchObject({ allowed: true, name: "minute", remaining: 0 });
    expect(await limiter.takeItems(small, 1)).toMatchObject({ allowed: false });
    expect(await limiter.takeItems({ ...small, keyId: "key_b" }, 10)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test("the capacity follows the project's setting, keeping the tokens spent", async () => {
    const limiter = await limiterOn(kind, clock().now);
    await limiter.takeItems(caller(), 400);
    expect(await limiter.takeItems(caller({ batchItemsPerHour: 2000 }), 100)).toMatchObject({ allowed: true, limit: 2000, remaining: 1500 });
    expect(await limiter.takeItems(caller({ batchItemsPerHour: 600 }), 100)).toMatchObject({ allowed: true, limit: 600, remaining: 0 });
  });

  test("concurrent batches never take more than the bucket holds", async () => {
    const limiter = await limiterOn(kind, clock().now);
    const decisions = await Promise.all(Array.from({ length: 12 }, () => limiter.takeItems(caller(), 100)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.filter((d) => !d.allowed)).toHaveLength(2);
  });
});

describe("RateLimiter.sweep keeps a key whose items bucket is refilling", () => {
  test("dropped only once the items bucket is full again", async () => {
    const c = clock();
    const limiter = new RateLimiter(c.now);
    await limiter.takeItems(caller(), 1000);
    c.advance(HOUR / 2);
    await limiter.sweep();
    // Kept: half the tokens are back, not all.
    expect(await limiter.takeItems(caller(), 501)).toMatchObject({ allowed: false, remaining: 500 });
    c.advance(HOUR);
    await limiter.sweep();
    expect(await limiter.takeItems(caller(), 1000)).toMatchObject({ allowed: true, remaining: 0 });
  });
});

describe("rateLimitHeaders of the items bucket", () => {
  test("an hourly window named batch-items", () => {
    const headers = rateLimitHeaders({ allowed: true, name: "batch-items", limit: 60000, remaining: 59000, resetSeconds: 60, retryAfterSeconds: 0 });
    expect(headers).toEqual({
      "RateLimit-Limit": "60000",
      "RateLimit-Remaining": "59000",
      "RateLimit-Reset": "60",
      "RateLimit-Policy": '"batch-items";q=60000;w=3600',
      RateLimit: '"batch-items";r=59000;t=60',
    });
  });
});

describe.skipIf(testBackend() !== "postgres")("shared buckets on PostgreSQL (docs/scaling.md §6)", () => {
  test("a take turns synchronous_commit off for its own transaction only: the pooled connection keeps its setting, and the tokens are taken", async () => {
    const url = await createTestDatabase();
    databases.push(url);
    const pg = await openPostgres(url, 1);
    opened.push(pg);
    const buckets = postgresBuckets(pg.db);
    const spec = { name: "minute", capacity: 120, windowMs: 60_000 };
    await buckets.fill("key_a", [spec], T0);
    await pg.pool.query("SET synchronous_commit TO on");
    const rows = await buckets.take("key_a", [spec], T0);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: "minute", allowed: true });
    // One connection in the pool: the take ran on it, and its setting was the transaction's alone.
    const after = await pg.pool.query("SHOW synchronous_commit");
    expect(after.rows[0].synchronous_commit).toBe("on");
    const stored = await pg.pool.query("SELECT tokens FROM rate_limit_buckets WHERE key_id = 'key_a'");
    expect(Number(stored.rows[0].tokens)).toBe(119);
  });
});
