/**
 * The benches bench/run.ts runs as children, each with its own processes and temp dir, and
 * the figures each hands back on its stdout:
 * - bench/costs.ts (also a child of bench/postgres.ts): its COSTS_JSON report;
 * - bench/webhooks.ts: its BENCH_JSON line of webhook figures;
 * - bench/postgres.ts --print: the Markdown section between BENCH_PG_SECTION lines (its
 *   progress lines passed through as they come; it starts and removes its own cluster).
 */
import type { Subprocess } from "bun";
import { ROOT } from "./harness/process.ts";
import { jsonLine } from "./harness/report.ts";
import type { CostsReport } from "./report/costs.ts";

/**
 * bench/costs.ts as a child (`db`: a copy of the seeded file, or "-" with CRM_DATABASE_URL
 * in `env`); its COSTS_JSON report. Its stderr is passed through; killed after `timeoutMs`.
 */
export async function runCosts(o: { db: string; projectId: string; key: string; env?: Record<string, string>; children?: Set<Subprocess>; timeoutMs?: number }): Promise<CostsReport> {
  const proc = Bun.spawn([process.execPath, "bench/costs.ts", o.db, o.projectId, o.key], {
    cwd: ROOT,
    env: { ...process.env, ...o.env, COSTS_JSON: "1" },
    stdout: "pipe",
    stderr: "inherit",
  });
  o.children?.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), o.timeoutMs ?? 10 * 60_000);
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timer);
  o.children?.delete(proc);
  const report = jsonLine<CostsReport>(out, "COSTS_JSON");
  if (code !== 0 || !report) throw new Error(`bench/costs.ts exited with ${code}: ${out.slice(-2000)}`);
  return report;
}

/** The BENCH_JSON of bench/webhooks.ts (see its header for the three scenarios). */
export interface WebhookFigures {
  events: number;
  delivered: number;
  seconds: number;
  deliveriesPerSecond: number;
  createsPerSecondMeanwhile: number;
  latencySamples: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  fairnessSamples: number;
  fairnessP50Ms: number;
  fairnessMaxMs: number;
  maxRssKb: number;
}

const WEBHOOK_FIGURES = ["events", "delivered", "seconds", "deliveriesPerSecond", "createsPerSecondMeanwhile", "latencySamples", "latencyP50Ms",
  "latencyP95Ms", "fairnessSamples", "fairnessP50Ms", "fairnessMaxMs", "maxRssKb"] as const;

/** bench/webhooks.ts as a child (its own server, receiver and temp dir); its BENCH_JSON line. */
export async function webhookBench(children: Set<Subprocess>): Promise<WebhookFigures> {
  const proc = Bun.spawn([process.execPath, "bench/webhooks.ts"], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  children.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), 11 * 60_000);
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timer);
  children.delete(proc);
  for (const line of out.split("\n")) if (line.startsWith("[bench:webhooks]")) console.log(line);
  const figures = jsonLine<WebhookFigures>(out, "BENCH_JSON");
  if (code !== 0 || !figures) throw new Error(`bench/webhooks.ts exited with ${code}:\n${out}`);
  return figures;
}

/**
 * The webhook figures for the report: a failure of bench/webhooks.ts, or a figure it no
 * longer reports, leaves that figure empty (NaN) instead of losing the run.
 */
export async function webhookFigures(children: Set<Subprocess>): Promise<WebhookFigures> {
  const reported: Partial<WebhookFigures> = await webhookBench(children).catch((error) => {
    console.warn(`[bench] WARNING: the webhook bench failed; its figures are left out: ${error}`);
    return {};
  });
  const figure = (name: keyof WebhookFigures) => (typeof reported[name] === "number" ? reported[name] : Number.NaN);
  return Object.fromEntries(WEBHOOK_FIGURES.map((name) => [name, figure(name)])) as unknown as WebhookFigures;
}

export async function postgresSection(children: Set<Subprocess>, timeoutMs: number): Promise<string> {
  const proc = Bun.spawn([process.execPath, "bench/postgres.ts", "--print"], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  children.add(proc);
  const timer = setTimeout(() => proc.kill("SIGTERM"), timeoutMs);
  let text = "";
  let shown = 0;
  const decoder = new TextDecoder();
  const reader = proc.stdout.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += decoder.decode(r.value, { stream: true });
    const lines = text.split("\n");
    for (; shown < lines.length - 1; shown++) if (lines[shown]!.startsWith("[bench:pg]")) console.log(lines[shown]);
  }
  const code = await proc.exited;
  clearTimeout(timer);
  children.delete(proc);
  const begin = text.indexOf("BENCH_PG_SECTION_BEGIN\n");
  const end = text.indexOf("\nBENCH_PG_SECTION_END");
  if (code !== 0 || begin < 0 || end < 0) throw new Error(`bench/postgres.ts exited with ${code}`);
  return text.slice(begin + "BENCH_PG_SECTION_BEGIN\n".length, end);
}
