/**
 * bench/postgres.ts as a child of bench/run.ts: its progress lines are passed through as
 * they come, and the Markdown section it prints between BENCH_PG_SECTION lines is returned
 * for bench/RESULTS.md. It starts and removes its own PostgreSQL cluster and temp dir.
 */
import type { Subprocess } from "bun";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

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
