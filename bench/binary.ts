/**
 * The compiled binary's time to ready: `npm run build` → dist/crm, then `dist/crm serve` is
 * spawned `runs` times on a database and timed from spawn to the first 200 of /healthz
 * (polled every millisecond or so; a refused connection fails at once). Reports the median.
 */
import type { Subprocess } from "bun";
import { rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
export const BINARY = join(ROOT, "dist", "crm");

export function buildBinary(): { seconds: number; sizeMb: number } {
  const started = performance.now();
  const r = Bun.spawnSync(["npm", "run", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe", timeout: 300_000 });
  if (r.exitCode !== 0) throw new Error(`npm run build failed (${r.exitCode}):\n${r.stdout.toString()}\n${r.stderr.toString()}`);
  return { seconds: (performance.now() - started) / 1000, sizeMb: statSync(BINARY).size / 1024 / 1024 };
}

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function stop(proc: Subprocess, children: Set<Subprocess>) {
  if (proc.exitCode === null) proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
  if (!exited) proc.kill("SIGKILL");
  await proc.exited;
  children.delete(proc);
}

/** One start: spawn → first 200 of /healthz, in ms. */
async function startOnce(dbPath: string, env: Record<string, string>, children: Set<Subprocess>): Promise<number> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}/healthz`;
  const t0 = performance.now();
  const proc = Bun.spawn([BINARY, "serve"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", CRM_DB_PATH: dbPath, CRM_LOG_LEVEL: "warn", ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  children.add(proc);
  try {
    while (performance.now() - t0 < 20_000) {
      if (proc.exitCode !== null) throw new Error(`dist/crm serve exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
      const ok = await fetch(url).then((r) => r.status === 200, () => false);
      if (ok) return performance.now() - t0;
      await Bun.sleep(1);
    }
    throw new Error("dist/crm serve did not answer /healthz within 20 s");
  } finally {
    await stop(proc, children);
  }
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
export async function readyOnDatabase(dbPath: string, runs: number, children: Set<Subprocess>): Promise<ReadyResult> {
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) runsMs.push(await startOnce(dbPath, {}, children));
  return { medianMs: median(runsMs), runsMs };
}

/** `runs` first starts, each on a new empty file (migrations + bootstrap project and key). */
export async function readyOnEmpty(tmp: string, runs: number, children: Set<Subprocess>): Promise<ReadyResult> {
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const path = join(tmp, `empty-${i}.db`);
    runsMs.push(await startOnce(path, {}, children));
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  }
  return { medianMs: median(runsMs), runsMs };
}
