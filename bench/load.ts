/**
 * One load run against a running server, shared by bench/run.ts (SQLite) and
 * bench/postgres.ts: wrk with a script of bench/wrk/, or bench/loadgen.ts when wrk is not
 * installed. Both print one BENCH_JSON line (bench/wrk/report.lua), parsed here.
 *
 * `ports` spreads wrk's threads over several servers on the host of `url` (bench/wrk/split.lua:
 * thread i talks to the i-th of url's port and `ports`, round robin), for several nodes on
 * one database; bench/loadgen.ts has no such mode, so it needs wrk.
 */
import type { Subprocess } from "bun";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

export interface LoadResult {
  requests: number;
  durationUs: number;
  p50Us: number;
  p95Us: number;
  p99Us: number;
  errors: Record<string, number>;
  rps: number;
}

export interface LoadOptions {
  url: string;
  key: string | null;
  /** A file of GET paths, "POST" (new contacts) or "INTERACTIONS" (logs on random contacts). */
  source: string;
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
    o.source === "POST" ? ["post.lua", []]
    : o.source === "INTERACTIONS" ? ["interaction.lua", [String(o.contacts ?? 1), o.typesFile ?? ""]]
    : ["get.lua", [o.source]];
  const split = (o.ports?.length ?? 0) > 0;
  if (split && !o.wrk) throw new Error("load over several servers needs wrk (bench/wrk/split.lua)");
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
  const line = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (!line) throw new Error(`load generator gave no result:\n${out}\n${err}`);
  const r = JSON.parse(line.slice("BENCH_JSON ".length));
  return { ...r, rps: r.requests / (r.durationUs / 1e6) };
}
