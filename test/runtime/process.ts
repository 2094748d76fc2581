/**
 * Runtime-test harness: starts the server as an arbitrary command (compiled binary, Deno,
 * Bun on a given database), waits for /healthz, reads the bootstrap key, and makes sure
 * every process it started is killed even when a test fails or the runner exits early.
 */
import { spawn, spawnSync, type Subprocess } from "bun";
import { KEY_PATTERN, REPO_ROOT, freePort, makeApi, sleep, type Api } from "../helpers/server.ts";

export { REPO_ROOT, freePort, sleep };
export const BUN = `${REPO_ROOT}/node_modules/.bin/bun`;
export const DENO = `${REPO_ROOT}/node_modules/.bin/deno`;
/** `deno run` flags of `npm run serve:deno` (package.json); keep the two in step. */
export const DENO_RUN = [DENO, "run", "--allow-all", `--config=${REPO_ROOT}/deno.json`];

const live = new Set<Subprocess>();

/** Kills whatever is still running when the test process ends (a failed `beforeAll` included). */
process.on("exit", () => {
  for (const proc of live) proc.kill("SIGKILL");
});

function collect(stream: ReadableStream<Uint8Array>, sink: { text: string }) {
  const decoder = new TextDecoder();
  (async () => {
    try {
      for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) sink.text += decoder.decode(chunk, { stream: true });
    } catch {
      /* process ended */
    }
  })();
}

export interface Started {
  proc: Subprocess;
  origin: string;
  baseUrl: string;
  port: number;
  /** The bootstrap key printed on first start ("" when none was expected). */
  key: string;
  /** Milliseconds from spawn to the first 200 from /healthz. */
  readyMs: number;
  api: Api;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Spawns a long-running process whose output is collected, tracked for cleanup. */
export function spawnTracked(cmd: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = spawn(cmd, { cwd: opts.cwd ?? REPO_ROOT, env: opts.env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const out = { text: "" };
  const err = { text: "" };
  collect(proc.stdout, out);
  collect(proc.stderr, err);
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
    const code = await proc.exited;
    clearTimeout(timer);
    return code;
  };
  return { proc, stdout: () => out.text, stderr: () => err.text, stop };
}

/**
 * Starts `cmd` (which must end in `serve`) with PORT/HOST set and waits until /healthz
 * answers 200; throws with the process output when it does not within `timeoutMs`.
 */
export async function startServerProcess(
  cmd: string[],
  opts: { cwd?: string; env: Record<string, string>; expectKey?: boolean; timeoutMs?: number },
): Promise<Started> {
  const port = freePort();
  const env = { ...(process.env as Record<string, string>), CRM_LOG_LEVEL: "warn", ...opts.env, PORT: String(port), HOST: "127.0.0.1" };
  const started = performance.now();
  const child = spawnTracked(cmd, { cwd: opts.cwd, env });
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let readyMs = -1;
  while (Date.now() < deadline && child.proc.exitCode === null) {
    try {
      const res = await fetch(`${origin}/healthz`);
      await res.arrayBuffer();
      if (res.status === 200) {
        readyMs = performance.now() - started;
        break;
      }
    } catch {
      /* not listening yet */
    }
    await sleep(10);
  }
  const fail = async (why: string) => {
    await child.stop();
    return new Error(`${cmd.join(" ")}: ${why}\nstdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`);
  };
  if (readyMs < 0) throw await fail("did not become healthy");
  let match = child.stdout().match(KEY_PATTERN);
  for (let i = 0; (opts.expectKey ?? true) && !match && i < 100; i++) {
    await sleep(20);
    match = child.stdout().match(KEY_PATTERN);
  }
  if (!match && (opts.expectKey ?? true)) throw await fail("no bootstrap key on stdout");
  const key = match?.[0] ?? "";
  const baseUrl = `${origin}/v1`;
  return { ...child, origin, baseUrl, port, key, readyMs, api: makeApi(baseUrl, async () => key) };
}

/** Runs a command to completion (CLI calls); throws with its output unless it exits 0. */
export function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string>; allowFail?: boolean } = {}) {
  const r = spawnSync(cmd, { cwd: opts.cwd ?? REPO_ROOT, env: opts.env, stdout: "pipe", stderr: "pipe" });
  const result = { exitCode: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  if (!opts.allowFail && result.exitCode !== 0) {
    throw new Error(`${cmd.join(" ")} exited ${result.exitCode}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
  return result;
}

/** The last line of `text` that parses as JSON (CLI commands may print text before it). */
export function lastJson(text: string): any {
  for (const line of text.trim().split("\n").reverse()) {
    try {
      return JSON.parse(line);
    } catch {
      /* keep looking */
    }
  }
  throw new Error(`no JSON in output:\n${text}`);
}
