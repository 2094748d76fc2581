/**
 * The compiled binary's time to ready: `npm run build` → dist/crm, then `dist/crm serve` is
 * spawned `runs` times on a database and timed from spawn to the first 200 of /healthz
 * (polled every millisecond or so; a refused connection fails at once). Reports the median.
 */
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT, startServer, type Children } from "./harness/process.ts";

export const BINARY = join(ROOT, "dist", "crm");

export interface BuildResult {
  seconds: number;
  sizeMb: number;
}

export function buildBinary(): BuildResult {
  const started = performance.now();
  const r = Bun.spawnSync(["npm", "run", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe", timeout: 300_000 });
  if (r.exitCode !== 0) throw new Error(`npm run build failed (${r.exitCode}):\n${r.stdout.toString()}\n${r.stderr.toString()}`);
  return { seconds: (performance.now() - started) / 1000, sizeMb: statSync(BINARY).size / 1024 / 1024 };
}

/** One start: spawn → first 200 of /healthz, in ms (bench/harness/process.ts, polling every millisecond or so). */
async function startOnce(dbPath: string, env: Record<string, string>, children: Children): Promise<number> {
  const server = await startServer({
    cmd: [BINARY, "serve"], env: { CRM_DB_PATH: dbPath, CRM_LOG_LEVEL: "warn", ...env }, stdout: "ignore", stderr: "capture",
    pollMs: 1, timeoutMs: 20_000, name: "dist/crm serve", children,
  });
  await server.stop();
  return server.readyMs;
}

export interface ReadyResult {
  medianMs: number;
  runsMs: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** `runs` starts on the same (seeded) database file. */
export async function readyOnDatabase(dbPath: string, runs: number, children: Children): Promise<ReadyResult> {
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) runsMs.push(await startOnce(dbPath, {}, children));
  return { medianMs: median(runsMs), runsMs };
}

/** `runs` first starts, each on a new empty file (migrations + bootstrap project and key). */
export async function readyOnEmpty(tmp: string, runs: number, children: Children): Promise<ReadyResult> {
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const path = join(tmp, `empty-${i}.db`);
    runsMs.push(await startOnce(path, {}, children));
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  }
  return { medianMs: median(runsMs), runsMs };
}
