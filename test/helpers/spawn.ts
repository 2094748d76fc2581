/**
 * The one way tests start a server process (Bun, the compiled binary or Deno) and run a
 * command. A server is ready when its own `/readyz` answers `{"status":"ready"}` with an
 * `X-Request-Id` (another listener that grabbed the port answers differently); a start that
 * loses its port to a race is retried on a new one; every process started is killed when the
 * test process ends, a failed start included. Nothing here blocks the event loop: no
 * spawnSync, so receivers and timers of the test keep running while a command runs.
 */
import { resolve } from "node:path";
import type { Subprocess } from "bun";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
export const BUN = `${REPO_ROOT}/node_modules/.bin/bun`;
export const DENO = `${REPO_ROOT}/node_modules/.bin/deno`;
/** `deno run` flags of `npm run serve:deno` (package.json); keep the two in step. */
export const DENO_RUN = [DENO, "run", "--allow-all", `--config=${REPO_ROOT}/deno.json`];
export const KEY_PATTERN = /crm_(live|test)_[A-Za-z0-9]{46}/;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const live = new Set<Subprocess>();
process.on("exit", () => {
  for (const proc of live) proc.kill("SIGKILL");
});

/** A port that was free a moment ago (the server start retries when it is taken meanwhile). */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

function collect(stream: ReadableStream<Uint8Array>, sink: { text: string }) {
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) sink.text += decoder.decode(chunk, { stream: true });
    } catch {
      /* process ended */
    }
  })();
}

export interface Tracked {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  stdout(): string;
  stderr(): string;
  exited: Promise<number>;
  /** SIGTERM (or `signal`), then SIGKILL after 5 s; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** Spawns a long-running process whose output is collected, killed when the test process ends. */
export function spawnTracked(cmd: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Tracked {
  const proc = Bun.spawn(cmd, { cwd: opts.cwd ?? REPO_ROOT, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const out = { text: "" };
  const err = { text: "" };
  collect(proc.stdout, out);
  collect(proc.stderr, err);
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
    const code = await proc.exited;
    clearTimeout(timer);
    return code;
  };
  return { proc, stdout: () => out.text, stderr: () => err.text, exited: proc.exited, stop };
}

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion without blocking the event loop; throws unless it exits 0 (or `allowFail`). */
export async function runCommand(
  cmd: string[],
  opts: { cwd?: string; env?: Record<string, string>; allowFail?: boolean; timeoutMs?: number; stdin?: string } = {},
): Promise<CommandResult> {
  const stdin = opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin);
  const proc = Bun.spawn(cmd, { cwd: opts.cwd ?? REPO_ROOT, env: opts.env, stdin, stdout: "pipe", stderr: "pipe" });
  live.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  live.delete(proc);
  const result = { exitCode, stdout, stderr };
  if (!opts.allowFail && exitCode !== 0) {
    throw new Error(`${cmd.join(" ")} exited ${exitCode}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
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

export interface SpawnedServer extends Tracked {
  port: number;
  origin: string;
  /** `${origin}/v1` */
  baseUrl: string;
  /** The bootstrap key this start printed ("" when none). */
  key: string;
  /** Milliseconds from spawn to the first ready answer. */
  readyMs: number;
  /** The whole environment the server runs with (a CLI run with it reaches the same database). */
  env: Record<string, string>;
}

export interface SpawnOptions {
  /** The command, ending in `serve` (default: `bun src/main.ts serve`). */
  cmd?: string[];
  cwd?: string;
  /** Added to the test process's environment; PORT and HOST are set here. */
  env?: Record<string, string>;
  /** Wait for a bootstrap key on stdout (default false). */
  expectKey?: boolean;
  timeoutMs?: number;
}

/** Whether `origin` is this server answering ready (not a stranger on a reused port). */
async function answersReady(origin: string): Promise<boolean> {
  try {
    const res = await fetch(`${origin}/readyz`);
    const text = await res.text();
    return res.status === 200 && res.headers.has("x-request-id") && text === '{"status":"ready"}';
  } catch {
    return false;
  }
}

const PORT_TAKEN = /EADDRINUSE|address already in use|Failed to start server/i;

/** Starts a server process and resolves once it answers ready; throws (process killed) otherwise. */
export async function spawnServer(opts: SpawnOptions = {}): Promise<SpawnedServer> {
  const cmd = opts.cmd ?? [BUN, "src/main.ts", "serve"];
  for (let tries = 1; ; tries++) {
    const port = freePort();
    const env = { ...(process.env as Record<string, string>), CRM_LOG_LEVEL: "warn", ...opts.env, PORT: String(port), HOST: "127.0.0.1" };
    const started = performance.now();
    const child = spawnTracked(cmd, { cwd: opts.cwd, env });
    const origin = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    let readyMs = -1;
    while (Date.now() < deadline && child.proc.exitCode === null && child.proc.signalCode === null) {
      if (await answersReady(origin)) {
        readyMs = performance.now() - started;
        break;
      }
      await sleep(20);
    }
    if (readyMs < 0) {
      await child.stop("SIGKILL");
      if (tries < 5 && PORT_TAKEN.test(child.stderr() + child.stdout())) continue;
      throw new Error(`${cmd.join(" ")}: did not become ready\nstdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`);
    }
    let key = "";
    for (let i = 0; opts.expectKey && i < 200; i++) {
      key = child.stdout().match(KEY_PATTERN)?.[0] ?? "";
      if (key) break;
      await sleep(10);
    }
    if (opts.expectKey && !key) {
      await child.stop("SIGKILL");
      throw new Error(`${cmd.join(" ")}: no bootstrap key on stdout\nstdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`);
    }
    return { ...child, port, origin, baseUrl: `${origin}/v1`, key, readyMs, env };
  }
}
