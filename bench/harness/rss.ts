/**
 * Memory and file-handle probes of a running process, from /proc (Linux only):
 * - readRssKb(pid): VmRSS from /proc/<pid>/status, in kB (null when the process is gone);
 * - openFds(pid): the entries of /proc/<pid>/fd;
 * - sampleRss(pid): samples VmRSS every `intervalMs` until stop(); max() is the peak since
 *   the last reset(), overall() the peak since start. Used by bench/run.ts (RSS under load),
 *   bench/webhooks.ts and stress/soak.ts.
 */
import { readdirSync, readFileSync } from "node:fs";

export function readRssKb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export function openFds(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

export interface RssSampler {
  /** Peak VmRSS (kB) since start or the last reset(); 0 before the first sample. */
  max(): number;
  /** Peak VmRSS (kB) since start, across resets. */
  overall(): number;
  /** The latest sample (kB). */
  last(): number;
  samples(): number;
  reset(): void;
  stop(): void;
}

export function sampleRss(pid: number, intervalMs = 100): RssSampler {
  let windowMax = 0;
  let overallMax = 0;
  let latest = 0;
  let count = 0;
  const take = () => {
    const kb = readRssKb(pid);
    if (kb === null) return;
    latest = kb;
    count++;
    if (kb > windowMax) windowMax = kb;
    if (kb > overallMax) overallMax = kb;
  };
  take();
  const timer = setInterval(take, intervalMs);
  timer.unref?.();
  return {
    max: () => (take(), windowMax),
    overall: () => (take(), overallMax),
    last: () => latest,
    samples: () => count,
    reset: () => {
      windowMax = 0;
      take();
    },
    stop: () => clearInterval(timer),
  };
}

export const mb = (kb: number) => kb / 1024;
