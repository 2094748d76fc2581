/**
 * The "Before" section of bench/RESULTS.md for bench/run.ts: the figures of the commit the
 * new run is compared with, and the rows and webhook rate read back from it.
 *
 * Before: when bench/RESULTS.md has no "## Before (commit …)" section yet, its whole current
 * content becomes that section, titled with the short sha of HEAD (or BENCH_BEFORE_SHA),
 * headings demoted two levels. When it has one, that section is kept as it is, so repeated runs compare with the
 * same baseline; delete the section to re-base on the current figures.
 */
import { existsSync, readFileSync } from "node:fs";

const BEFORE_HEADING = "## Before (commit ";

export function beforeSection(resultsPath: string, root: string): string {
  const current = existsSync(resultsPath) ? readFileSync(resultsPath, "utf8") : "";
  const at = current.indexOf(`\n${BEFORE_HEADING}`);
  if (at >= 0) return current.slice(at + 1).trimEnd();
  const git = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: root });
  const sha = process.env.BENCH_BEFORE_SHA ?? (git.exitCode === 0 ? git.stdout.toString().trim() : "unknown");
  const body = current.trim() ? current.trim().replace(/^(#+) /gm, "$1## ") : "(bench/RESULTS.md was empty)";
  return `${BEFORE_HEADING}${sha})\n\nbench/RESULTS.md as it was at commit ${sha}, before this run (headings demoted):\n\n${body}`;
}

export interface BeforeRow {
  p50: number;
  p95: number;
  p99: number;
  rps: number;
}

/** The first table row per scenario name in the Before text: `| name | p50 | p95 | p99 | req/s | …`. */
export function beforeRows(before: string): Map<string, BeforeRow> {
  const rows = new Map<string, BeforeRow>();
  for (const line of before.split("\n")) {
    if (!line.startsWith("|")) continue;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    const [name, p50, p95, p99, rps] = cells;
    if (!name || rows.has(name) || [p50, p95, p99, rps].some((v) => v === undefined || !/^\d+(\.\d+)?$/.test(v))) continue;
    rows.set(name, { p50: Number(p50), p95: Number(p95), p99: Number(p99), rps: Number(rps) });
  }
  return rows;
}

/** "**1704 deliveries/s**" in the Before text. */
export function beforeDeliveries(before: string): number | null {
  const m = /\*\*(\d+) deliveries\/s\*\*/.exec(before);
  return m ? Number(m[1]) : null;
}
