import process from "node:process";

/** RSS above which a full collection runs (docs/performance.md: the 150 MB target under load, issue 15). */
export const MEMORY_TARGET_BYTES = 136 * 1024 * 1024;

/** A collection that gives back less than this while the process stays past the target: the memory is live. */
const USEFUL_BYTES = 4 * 1024 * 1024;

/**
 * A soft memory target, checked every second (like Go's GOMEMLIMIT): JavaScriptCore sizes
 * its heap for throughput and under write load grew it by ~45 MB that it kept; a full
 * collection when the process is past the target gives it back (measured at 1 M contacts:
 * POST /contacts peaked at 178 MB, 145 MB with the target, same throughput). When a
 * collection gives back little and the process stays past the target (the memory is live:
 * an import, a big page), the checks back off, doubling up to a minute, so it never
 * collects in a loop for nothing. No-op where the runtime cannot collect on demand (Deno).
 */
export function memoryKeeper(collect: (() => void) | undefined, rss: () => number = () => process.memoryUsage.rss()) {
  let skip = 0;
  let backoff = 0;
  return function keepMemory(): void {
    if (!collect) return;
    if (skip > 0) return void (skip -= 1);
    const before = rss();
    if (before <= MEMORY_TARGET_BYTES) return void (backoff = 0);
    collect();
    const after = rss();
    if (after > MEMORY_TARGET_BYTES && before - after < USEFUL_BYTES) {
      backoff = Math.min(Math.max(1, backoff * 2), 60);
      skip = backoff;
    } else backoff = 0;
  };
}
