/**
 * A clock the test moves by hand (issue 11): the service under test reads "now" from it
 * (src/lib/clock.ts), so a 24 h or 30-day window passes in one call instead of a wait.
 */
import type { Clock } from "../../src/lib/clock.ts";

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export class ManualClock implements Clock {
  constructor(private ms = Date.now()) {}

  now(): number {
    return this.ms;
  }

  /** Moves time forward by `ms` (never back: the service's windows only ever run forward). */
  advance(ms: number): void {
    if (ms < 0) throw new Error("a ManualClock only moves forward");
    this.ms += ms;
  }
}
