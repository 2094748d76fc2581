/**
 * One load run against a running server, shared by bench/run.ts (SQLite), bench/postgres.ts
 * and stress/soak.ts: wrk with a script of bench/wrk/, or bench/loadgen.ts when wrk is not
 * installed. Both print one BENCH_JSON line (bench/wrk/report.lua), parsed here. Also the
 * CPU a process used (/proc/<pid>/stat), read around the measured seconds.
 *
 * `ports` spreads wrk's threads over several servers on the host of `url` (bench/wrk/split.lua:
 * thread i talks to the i-th of url's port and `ports`, round robin), for several nodes on
 * one database; bench/loadgen.ts has no such mode, so it needs wrk.
 */
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { ROOT } from "./process.ts";
import { jsonLine } from "./report.ts";

export interface LoadResult {
  requests: number;
  durationUs: number;
  p50Us: number;
  p95Us: number;
  p99Us: number;
  meanUs: number;
  errors: Record<string, number>;
  rps: number;
}

export interface LoadOptions {
  url: string;
  key: string | null;
  /** A file of GET paths, "POST" (new contacts) or "INTERACTIONS" (logs on random contacts). */
  source: string;
  /** Instead of `source`: a script of bench/wrk/ and its arguments (wrk only; stress/soak.ts's mixed.lua). */
  script?: { file: string; args: string[] };
  seconds: number;
  threads: number;
  connections: number;
  /** The wrk binary, or null for bench/loadgen.ts. */
  wrk: string | null;
  /** INTERACTIONS: contacts CR-1…CR-n to pick from, and a file of interaction-type ids. */
  contacts?: number;
  typesFile?: string;
  /** More servers on url's host (their ports), sharing the load with url's (wrk only). */
  ports?: number[];
  /** Children to kill on the caller's cleanup. */
  children?: Set<Subprocess>;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const auth = `Bearer ${o.key ?? "none"}`;
  const [script, args] =
    o.script ? [o.script.file, o.script.args]
    : o.source === "POST" ? ["post.lua", []]
    : o.source === "INTERACTIONS" ? ["interaction.lua", [String(o.contacts ?? 1), o.typesFile ?? ""]]
    : ["get.lua", [o.source]];
  const split = (o.ports?.length ?? 0) > 0;
  if (split && !o.wrk) throw new Error("load over several servers needs wrk (bench/wrk/split.lua)");
  if (o.script && !o.wrk) throw new Error(`bench/wrk/${o.script.file} needs wrk`);
  const cmd = o.wrk
    ? [o.wrk, "-t", String(o.threads), "-c", String(o.connections), "-d", `${o.seconds}s`, "--timeout", "5s",
       "-s", `bench/wrk/${split ? "split.lua" : script}`, "-H", `Authorization: ${auth}`, o.url, ...(args.length ? ["--", ...args] : [])]
    : [process.execPath, "bench/loadgen.ts", o.url, String(o.seconds), String(o.connections), auth,
       o.source === "INTERACTIONS" ? `INTERACTIONS:${o.contacts ?? 1}` : o.source];
  const env = split
    ? { ...process.env, WRK_SCRIPT: script, WRK_HOST: new URL(o.url).hostname, WRK_PORTS: [new URL(o.url).port, ...o.ports!].join(",") }
    : process.env;
  const proc = Bun.spawn(cmd, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  o.children?.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), (o.seconds + 20) * 1000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  o.children?.delete(proc);
  const r = jsonLine(out, "BENCH_JSON");
  if (!r) throw new Error(`load generator gave no result:\n${out}\n${err}`);
  return { ...r, rps: r.requests / (r.durationUs / 1e6) };
}

// ---------- CPU of a process (server CPU per request under load) ----------

export const CLK_TCK = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** Fields of /proc/<pid>/stat after the command name: [state, ppid, …, utime (11), stime (12), cutime (13), cstime (14)]. */
export function statFields(pid: number | string): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** utime + stime of one process, all threads (0 when it is gone). */
export function procTicks(pid: number): number {
  const f = statFields(pid);
  return f ? Number(f[11]) + Number(f[12]) : 0;
}

/** Ticks → microseconds. */
export const ticksToUs = (ticks: number) => (ticks * 1e6) / CLK_TCK;
