/**
 * The reporting helpers of bench/ and stress/: number formats, percentiles, Markdown
 * tables, and the one-line JSON results children print (`BENCH_JSON {…}` from wrk's
 * bench/wrk/report.lua and bench/loadgen.ts, `COSTS_JSON {…}` from bench/costs.ts).
 */

/** Microseconds as milliseconds with two decimals. */
export const ms = (us: number) => (us / 1000).toFixed(2);
export const f0 = (n: number) => n.toFixed(0);
/** A ratio: 1.23×, or 0.045× below 0.1. */
export const times = (n: number) => `${n.toFixed(n < 0.1 ? 3 : 2)}×`;
export const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
/** The change from a to b in percent, signed: +12%, -3%. */
export const pct = (a: number, b: number) => `${b >= a ? "+" : ""}${(((b - a) / a) * 100).toFixed(0)}%`;

/** The value at quantile q (0…1) of an ascending array; `empty` when it has none. */
export function quantile(sorted: ArrayLike<number>, q: number, empty = 0): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? empty;
}

/** The p-th percentile (0…100) of unsorted values; NaN when there are none. */
export const percentile = (values: number[], p: number) => quantile([...values].sort((a, b) => a - b), p / 100, Number.NaN);

/** Requests that failed or were not 2xx/3xx, all kinds together. */
export const errorsOf = (r: { errors: Record<string, number> }) => Object.values(r.errors).reduce((a, b) => a + b, 0);

/** A Markdown table with its columns padded to one width. */
export function mdTable(head: string[], rows: string[][]): string {
  const all = [head, ...rows];
  const width = head.map((_, i) => Math.max(...all.map((l) => (l[i] ?? "").length)));
  const fmt = (l: string[]) => `| ${head.map((_, i) => (l[i] ?? "").padEnd(width[i]!)).join(" | ")} |`;
  return [fmt(head), `|${width.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(fmt)].join("\n");
}

/** The first `PREFIX {json}` line of a child's output, parsed; undefined when there is none. */
export function jsonLine<T = any>(output: string, prefix: string): T | undefined {
  const line = output.split("\n").find((l) => l.startsWith(`${prefix} `));
  return line === undefined ? undefined : JSON.parse(line.slice(prefix.length + 1));
}
