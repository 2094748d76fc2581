import { consume, MAX_LIMITER_ENTRIES, TokenBucket, type LimitDecision } from "../auth/limiter.ts";

const MINUTE = 60_000;

export { MAX_LIMITER_ENTRIES };

/**
 * Submissions come without a key, so they are limited per client address (docs/api.md §6),
 * with the API's token buckets: 10 a minute per address and form, and 60 a minute per
 * address across all forms, so one address can neither flood a form nor sweep many. A
 * refused submission consumes nothing. Full buckets are dropped once a minute.
 *
 * Memory is bounded (docs/api.md §7): the caller asks only for forms that exist (a form id
 * is looked up before any bucket is made), and each map holds at most `maxEntries`
 * buckets. When a map is full, the bucket used least recently goes; only a client that
 * has been quiet the longest can lose its count, and a sender of many addresses gains
 * nothing by it, since each new address starts with a full bucket anyway.
 */
export class SubmissionLimiter {
  private readonly perForm = new Map<string, TokenBucket>();
  private readonly perAddress = new Map<string, TokenBucket>();
  private sweptAt: number;

  constructor(
    private readonly clock: () => number,
    readonly perFormPerMinute = 10,
    readonly perAddressPerMinute = 60,
    readonly maxEntries = MAX_LIMITER_ENTRIES,
  ) {
    this.sweptAt = clock();
  }

  /** Call only with the id of a form that exists. */
  check(address: string, formId: string): LimitDecision {
    const now = this.clock();
    if (now - this.sweptAt >= MINUTE) this.sweep(now);
    const form = this.bucket(this.perForm, `${address}\n${formId}`, this.perFormPerMinute, now);
    const all = this.bucket(this.perAddress, address, this.perAddressPerMinute, now);
    return consume(
      [
        { name: "form", bucket: form },
        { name: "address", bucket: all },
      ],
      now,
    );
  }

  /** Buckets held now, per map (tests, and a bound anyone can check). */
  get size(): { perForm: number; perAddress: number } {
    return { perForm: this.perForm.size, perAddress: this.perAddress.size };
  }

  private sweep(now: number): void {
    this.sweptAt = now;
    for (const buckets of [this.perForm, this.perAddress]) {
      for (const [key, b] of buckets) if (b.level(now) >= b.capacity) buckets.delete(key);
    }
  }

  /** The key's bucket, moved to the map's end (a Map iterates in insertion order: oldest use first). */
  private bucket(map: Map<string, TokenBucket>, key: string, capacity: number, now: number): TokenBucket {
    let b = map.get(key);
    if (b) map.delete(key);
    else {
      b = new TokenBucket(capacity, MINUTE, now);
      if (map.size >= this.maxEntries) map.delete(map.keys().next().value!);
    }
    map.set(key, b);
    return b;
  }
}
