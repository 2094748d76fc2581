import type { Caller } from "./keys.ts";
import type { BucketSpec, SharedBuckets } from "../storage/port.ts";
import { consume, FailureWindow, storedDecision, TokenBucket, type LimitDecision } from "./limiter.ts";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const FAILED_AUTH_PER_MINUTE = 30;

/** The bucket a batch's items take from (docs/api.md §18.4), as the headers name it. */
export const BATCH_ITEMS_BUCKET = "batch-items";

/** A key's buckets in memory; the items bucket is made by the key's first batch. */
interface KeyBuckets {
  minute: TokenBucket;
  creates: TokenBucket;
  items?: TokenBucket;
}

/**
 * Per-key buckets (docs/api.md §6): every request takes from the minute bucket; POST
 * /contacts also from the hourly create bucket; a batch's items from the hourly items
 * bucket (docs/api.md §18.4). Capacities follow the project's settings.
 */
export class RateLimiter {
  private readonly perKey = new Map<string, KeyBuckets>();
  readonly failures = new FailureWindow(FAILED_AUTH_PER_MINUTE);
  rejected = 0;

  /**
   * `shared`: the buckets live in the database, for several nodes (the storage's
   * `sharedBuckets`: PostgreSQL, docs/scaling.md §6); without it they live in this process
   * (SQLite: one process serves the file).
   * Failed authentications are counted per node either way (docs/scaling.md §6 allows it).
   */
  constructor(
    private readonly clock: () => number,
    private readonly shared?: SharedBuckets,
  ) {}

  /** Takes a token for a request of `caller` from wherever the buckets live. */
  async decide(caller: Caller, isContactCreate: boolean): Promise<LimitDecision> {
    if (!this.shared) return this.check(caller, isContactCreate);
    const specs: BucketSpec[] = [{ name: "minute", capacity: caller.rateLimitPerMinute, windowMs: MINUTE }];
    if (isContactCreate) specs.push({ name: "contact-creates", capacity: caller.contactCreatesPerHour, windowMs: HOUR });
    const decision = await this.consumeShared(caller.keyId, specs, this.clock());
    if (!decision.allowed) this.rejected += 1;
    return decision;
  }

  /**
   * Takes one token from every bucket of `specs`, or from none (docs/api.md §6: a refused
   * request consumes nothing). The decision and its headers as `consume` makes them in
   * memory. A key's first request (or its first after the sweep) finds rows missing: they
   * are made full, and the take runs again.
   */
  private async consumeShared(keyId: string, specs: BucketSpec[], now: number): Promise<LimitDecision> {
    for (;;) {
      const rows = await this.shared!.take(keyId, specs, now);
      if (rows.length === specs.length) return storedDecision(specs, rows, now);
      await this.shared!.fill(keyId, specs, now);
    }
  }

  /**
   * Takes `count` tokens from the key's batch-items bucket (docs/api.md §18.4), all or
   * none: a batch that finds fewer is refused and takes nothing. The decision describes
   * that bucket, for the batch route's RateLimit headers.
   */
  async takeItems(caller: Caller, count: number): Promise<LimitDecision> {
    const now = this.clock();
    let decision: LimitDecision;
    if (this.shared) {
      const spec: BucketSpec = { name: BATCH_ITEMS_BUCKET, capacity: caller.batchItemsPerHour, windowMs: HOUR, cost: count };
      decision = await this.consumeShared(caller.keyId, [spec], now);
    } else {
      const b = this.bucketsOf(caller, now);
      b.items ??= new TokenBucket(caller.batchItemsPerHour, HOUR, now);
      b.items.resize(caller.batchItemsPerHour, now);
      decision = consume([{ name: BATCH_ITEMS_BUCKET, bucket: b.items }], now, count);
    }
    if (!decision.allowed) this.rejected += 1;
    return decision;
  }

  /**
   * Takes one token of the key's hourly create bucket alone: for PUT /contacts, which
   * counts as a create only when it creates (docs/api.md §18.2); its minute token was
   * taken by `decide` as for any request.
   */
  async takeCreate(caller: Caller): Promise<LimitDecision> {
    const now = this.clock();
    let decision: LimitDecision;
    if (this.shared) {
      decision = await this.consumeShared(caller.keyId, [{ name: "contact-creates", capacity: caller.contactCreatesPerHour, windowMs: HOUR }], now);
    } else {
      const b = this.bucketsOf(caller, now);
      b.creates.resize(caller.contactCreatesPerHour, now);
      decision = consume([{ name: "contact-creates", bucket: b.creates }], now);
    }
    if (!decision.allowed) this.rejected += 1;
    return decision;
  }

  private bucketsOf(caller: Caller, now: number): KeyBuckets {
    let b = this.perKey.get(caller.keyId);
    if (!b) {
      b = {
        minute: new TokenBucket(caller.rateLimitPerMinute, MINUTE, now),
        creates: new TokenBucket(caller.contactCreatesPerHour, HOUR, now),
      };
      this.perKey.set(caller.keyId, b);
    }
    return b;
  }

  /** In-process buckets (SQLite). */
  check(caller: Caller, isContactCreate: boolean): LimitDecision {
    const now = this.clock();
    const b = this.bucketsOf(caller, now);
    b.minute.resize(caller.rateLimitPerMinute, now);
    b.creates.resize(caller.contactCreatesPerHour, now);
    const buckets = [{ name: "minute", bucket: b.minute }];
    if (isContactCreate) buckets.push({ name: "contact-creates", bucket: b.creates });
    const decision = consume(buckets, now);
    if (!decision.allowed) this.rejected += 1;
    return decision;
  }

  /** Records a failed authentication; false once the address is past 30 this minute. */
  failedAuth(address: string): boolean {
    return this.failures.fail(address, this.clock());
  }

  failedAuthRetryAfter(address: string): number {
    return this.failures.secondsLeft(address, this.clock());
  }

  /** Drops buckets that are full again and expired failure windows (jobs). */
  async sweep(): Promise<void> {
    const now = this.clock();
    await this.shared?.sweep(now - HOUR);
    const full = (bucket: TokenBucket | undefined) => !bucket || bucket.level(now) >= bucket.capacity;
    for (const [id, b] of this.perKey) {
      if (full(b.minute) && full(b.creates) && full(b.items)) this.perKey.delete(id);
    }
    this.failures.sweep(now);
  }
}

/** The interface's headers and the IETF pair (docs/api.md §6). */
export function rateLimitHeaders(d: LimitDecision): Record<string, string> {
  const windowSeconds = d.name === "minute" ? 60 : 3600;
  return {
    "RateLimit-Limit": String(d.limit),
    "RateLimit-Remaining": String(d.remaining),
    "RateLimit-Reset": String(d.resetSeconds),
    "RateLimit-Policy": `"${d.name}";q=${d.limit};w=${windowSeconds}`,
    RateLimit: `"${d.name}";r=${d.remaining};t=${d.resetSeconds}`,
  };
}
