import { consume, TokenBucket, type LimitDecision } from "../auth/limiter.ts";

const MINUTE = 60_000;

/**
 * Submissions come without a key, so they are limited per client address (decisions §9),
 * with the API's token buckets: 10 a minute per address and form, and 60 a minute per
 * address across all forms, so one address can neither flood a form nor sweep many. A
 * refused submission consumes nothing. Full buckets are dropped once a minute.
 */
export class SubmissionLimiter {
  private readonly perForm = new Map<string, TokenBucket>();
  private readonly perAddress = new Map<string, TokenBucket>();
  private sweptAt: number;

  constructor(
    private readonly clock: () => number = Date.now,
    readonly perFormPerMinute = 10,
    readonly perAddressPerMinute = 60,
  ) {
    this.sweptAt = clock();
  }

  check(address: string, formId: string): LimitDecision {
    const now = this.clock();
    if (now - this.sweptAt >= MINUTE) this.sweep(now);
    const form = bucket(this.perForm, `${address}\n${formId}`, this.perFormPerMinute, now);
    const all = bucket(this.perAddress, address, this.perAddressPerMinute, now);
    return consume(
      [
        { name: "form", bucket: form },
        { name: "address", bucket: all },
      ],
      now,
    );
  }

  private sweep(now: number): void {
    this.sweptAt = now;
    for (const buckets of [this.perForm, this.perAddress]) {
      for (const [key, b] of buckets) if (b.level(now) >= b.capacity) buckets.delete(key);
    }
  }
}

function bucket(map: Map<string, TokenBucket>, key: string, capacity: number, now: number): TokenBucket {
  let b = map.get(key);
  if (!b) {
    b = new TokenBucket(capacity, MINUTE, now);
    map.set(key, b);
  }
  return b;
}
