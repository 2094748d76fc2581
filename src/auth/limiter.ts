import type { BucketSpec, BucketTake } from "../storage/port.ts";

/**
 * In-memory token buckets (docs/api.md §6). A bucket holds `capacity` tokens and refills
 * `capacity` per `windowMs`, continuously. Time is passed in, so tests drive it.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    public capacity: number,
    public windowMs: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.updatedAt = now;
  }

  /** A bucket as stored (src/storage/postgres/buckets.ts): `tokens` at `updatedAt`. */
  static restore(capacity: number, windowMs: number, tokens: number, updatedAt: number): TokenBucket {
    const bucket = new TokenBucket(capacity, windowMs, updatedAt);
    bucket.tokens = tokens;
    return bucket;
  }

  /** What to store: the tokens at the last update, and its time. */
  state(): { tokens: number; updatedAt: number } {
    return { tokens: this.tokens, updatedAt: this.updatedAt };
  }

  /** Tokens now, refilled up to the capacity. */
  level(now: number): number {
    const refill = ((now - this.updatedAt) * this.capacity) / this.windowMs;
    this.tokens = Math.min(this.capacity, this.tokens + Math.max(0, refill));
    this.updatedAt = now;
    return this.tokens;
  }

  /** Takes `count` tokens (a batch's items, docs/api.md §18.4; one for a request). */
  take(now: number, count = 1): void {
    this.level(now);
    this.tokens -= count;
  }

  /** Seconds until one whole token is back (Retry-After of a 429). */
  secondsUntilToken(now: number): number {
    return this.secondsUntilTokens(now, 1);
  }

  /** Seconds until `count` whole tokens are in the bucket (a batch's Retry-After). */
  secondsUntilTokens(now: number, count: number): number {
    const missing = count - this.level(now);
    return missing <= 0 ? 0 : Math.ceil((missing * this.windowMs) / this.capacity / 1000);
  }

  /** Seconds until the bucket is full (RateLimit-Reset). */
  secondsUntilFull(now: number): number {
    const missing = this.capacity - this.level(now);
    return Math.ceil((missing * this.windowMs) / this.capacity / 1000);
  }

  /** Changes the capacity when the project's setting changes, keeping the tokens spent. */
  resize(capacity: number, now: number): void {
    if (capacity === this.capacity) return;
    const spent = this.capacity - this.level(now);
    this.capacity = capacity;
    this.tokens = Math.max(0, capacity - spent);
  }
}

export interface LimitDecision {
  allowed: boolean;
  /** The bucket the headers describe: the refusing one, or the one with fewer tokens left. */
  name: string;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
}

/**
 * The refusal of `bucket` for a request that needs `cost` tokens. Retry-After is the time
 * until `cost` tokens are back; a cost above the bucket's size can never be met, so it is
 * the time until the bucket is full (docs/api.md §6: such a batch must be split).
 */
function refusal(name: string, bucket: TokenBucket, cost: number, now: number): LimitDecision {
  const wait = cost > bucket.capacity ? bucket.secondsUntilFull(now) : bucket.secondsUntilTokens(now, cost);
  return {
    allowed: false,
    name,
    limit: bucket.capacity,
    remaining: Math.floor(bucket.level(now)),
    resetSeconds: bucket.secondsUntilFull(now),
    retryAfterSeconds: Math.max(1, wait),
  };
}

/** The allowed decision: the headers describe the bucket with fewer tokens left. */
function allowance(buckets: Array<{ name: string; bucket: TokenBucket }>, now: number): LimitDecision {
  const tightest = buckets.reduce((a, b) => (b.bucket.level(now) < a.bucket.level(now) ? b : a));
  return {
    allowed: true,
    name: tightest.name,
    limit: tightest.bucket.capacity,
    remaining: Math.floor(tightest.bucket.level(now)),
    resetSeconds: tightest.bucket.secondsUntilFull(now),
    retryAfterSeconds: 0,
  };
}

/**
 * Checks every bucket first and consumes from all only when all allow, so a rejected
 * request consumes nothing (docs/api.md §6). `cost`: the tokens each bucket gives (one for
 * a request; a batch's item count from the items bucket, docs/api.md §18.4).
 */
export function consume(buckets: Array<{ name: string; bucket: TokenBucket }>, now: number, cost = 1): LimitDecision {
  const refusing = buckets.find(({ bucket }) => bucket.level(now) < cost);
  if (refusing) return refusal(refusing.name, refusing.bucket, cost, now);
  for (const { bucket } of buckets) bucket.take(now, cost);
  return allowance(buckets, now);
}

/** Fixed one-minute windows per client address for failed authentications (docs/api.md §2.3). */
/** Entries a per-address limiter keeps at most (docs/operations.md §8): a few MB whatever is sent. */
/**
 * The decision from the shared buckets' rows after one take (src/storage/port.ts,
 * `SharedBuckets`), as `consume` makes it in memory: the headers' bucket is the first in
 * `specs` that refused, or the one with fewer tokens left.
 */
export function storedDecision(specs: BucketSpec[], rows: BucketTake[], now: number): LimitDecision {
  const buckets = specs.map((spec) => {
    const row = rows.find((r) => r.name === spec.name)!;
    const bucket = TokenBucket.restore(spec.capacity, spec.windowMs, row.allowed ? row.tokens : row.level, now);
    return { name: spec.name, cost: spec.cost ?? 1, row, bucket };
  });
  const refusing = buckets.find((b) => !b.row.allowed && b.row.level < b.cost);
  if (refusing) return refusal(refusing.name, refusing.bucket, refusing.cost, now);
  return allowance(buckets, now);
}

export const MAX_LIMITER_ENTRIES = 10_000;

export class FailureWindow {
  private readonly windows = new Map<string, { start: number; count: number }>();
  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly maxEntries = MAX_LIMITER_ENTRIES,
  ) {}

  /**
   * Records a failure; false when the address is past its limit for this window. At most
   * `maxEntries` addresses are remembered (docs/operations.md §8: bounded whatever is sent); past
   * that the address that failed least recently is forgotten first, so one that keeps
   * failing keeps its count.
   */
  fail(address: string, now: number): boolean {
    const w = this.windows.get(address);
    // Re-inserted on every failure: the Map iterates least recent first.
    this.windows.delete(address);
    if (!w || now - w.start >= this.windowMs) {
      if (this.windows.size >= this.maxEntries) this.windows.delete(this.windows.keys().next().value!);
      this.windows.set(address, { start: now, count: 1 });
      return true;
    }
    this.windows.set(address, w);
    w.count += 1;
    return w.count <= this.limit;
  }

  blocked(address: string, now: number): boolean {
    const w = this.windows.get(address);
    return !!w && now - w.start < this.windowMs && w.count >= this.limit;
  }

  secondsLeft(address: string, now: number): number {
    const w = this.windows.get(address);
    return w ? Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000)) : 0;
  }

  sweep(now: number): void {
    for (const [address, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(address);
  }

  /** Addresses remembered now. */
  get size(): number {
    return this.windows.size;
  }
}
