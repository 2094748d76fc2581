/**
 * The one way bench/ and stress/ start processes: a server (`bun src/main.ts serve` by
 * default, or any command that serves HTTP: bench/bare-hono.ts, dist/crm), the admin CLI,
 * and the guard that kills every child at the end, on Ctrl-C and at a hard time limit.
 *
 * A server's output goes where the caller says: ignored, to a file (a log read back after
 * the run), inherited, or captured into memory (for a bootstrap key). Under load, a log is
 * written to a file, never read by the bench process, so it costs the bench no CPU.
 */
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = process.execPath;
export const HOST = "127.0.0.1";

/** A port that was free a moment ago. */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: HOST, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** Every child a run started, so that its cleanup can kill them all (and the exit of this process does). */
export class Children extends Set<Subprocess> {
  constructor() {
    super();
    process.on("exit", () => this.killAll());
  }

  /** SIGTERM, then SIGKILL after 5 s; forgets the process. */
  async stop(proc: Subprocess) {
    if (proc.exitCode === null && !proc.killed) proc.kill("SIGTERM");
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
    if (!exited) proc.kill("SIGKILL");
    await proc.exited;
    this.delete(proc);
  }

  async stopAll() {
    for (const proc of [...this]) await this.stop(proc);
  }

  killAll() {
    for (const proc of this) proc.kill("SIGKILL");
    this.clear();
  }

  /** SIGKILL to every child, resolving once all have exited. */
  async killAllAndWait() {
    const procs = [...this];
    this.killAll();
    await Promise.all(procs.map((proc) => proc.exited));
  }
}

/** Where a stream goes: "ignore", "inherit", "capture" (kept in memory) or a file path. */
export type Output = "ignore" | "inherit" | "capture" | (string & {});

export interface ServerOptions {
  /** The command (default `bun src/main.ts serve`); it gets PORT and HOST. */
  cmd?: string[];
  /** Added to this process's environment (CRM_LOG_LEVEL is warn unless given). */
  env?: Record<string, string>;
  stdout?: Output;
  stderr?: Output;
  /** The path polled until it answers 2xx (default /healthz). */
  ready?: string;
  /** Ready only on the service's own answer to /readyz (X-Request-Id, {"status":"ready"}). */
  strict?: boolean;
  /** Poll interval and limit (default 100 ms, 30 s). */
  pollMs?: number;
  timeoutMs?: number;
  /** A name for error messages. */
  name?: string;
  children: Children;
}

export interface Server {
  proc: Subprocess;
  url: string;
  port: number;
  /** The environment it runs with (a CLI run with it reaches the same database). */
  env: Record<string, string>;
  /** Milliseconds from spawn to the first 2xx of the ready path. */
  readyMs: number;
  /** What it wrote to the captured streams so far. */
  output(): string;
  stop(): Promise<void>;
}

function sink(output: Output | undefined): "ignore" | "inherit" | "pipe" | ReturnType<typeof Bun.file> {
  if (output === undefined || output === "ignore") return "ignore";
  if (output === "inherit") return "inherit";
  if (output === "capture") return "pipe";
  return Bun.file(output);
}

function collect(stream: unknown, into: { text: string }) {
  if (!(stream instanceof ReadableStream)) return;
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) into.text += decoder.decode(chunk, { stream: true });
    } catch {
      /* the process ended */
    }
  })();
}

const PORT_TAKEN = /EADDRINUSE|address already in use|Failed to start server/i;

/** Whether `url` + `path` answers 2xx; `strict`: the service's own ready answer, not a stranger's on a reused port. */
async function answers(url: string, path: string, strict: boolean): Promise<boolean> {
  try {
    const res = await fetch(`${url}${path}`);
    const text = await res.text();
    return res.ok && (!strict || (res.headers.has("x-request-id") && text === '{"status":"ready"}'));
  } catch {
    return false;
  }
}

/**
 * Starts a server on a free port and resolves once its ready path answers; throws (process
 * stopped) otherwise. A start that lost its port to another process (seen in captured or
 * file output) is retried on a new one.
 */
export async function startServer(o: ServerOptions): Promise<Server> {
  const name = o.name ?? "server";
  const path = o.ready ?? "/healthz";
  const limitMs = o.timeoutMs ?? 30_000;
  for (let tries = 1; ; tries++) {
    const port = freePort();
    const env = { ...(process.env as Record<string, string>), CRM_LOG_LEVEL: "warn", ...o.env, PORT: String(port), HOST };
    const started = performance.now();
    const proc = Bun.spawn(o.cmd ?? [BUN, "src/main.ts", "serve"], { cwd: ROOT, env, stdout: sink(o.stdout), stderr: sink(o.stderr ?? "inherit") });
    o.children.add(proc);
    const captured = { text: "" };
    if (o.stdout === "capture") collect(proc.stdout, captured);
    if (o.stderr === "capture") collect(proc.stderr, captured);
    const url = `http://${HOST}:${port}`;
    const written = () => {
      const files = [o.stdout, o.stderr].filter((x): x is string => !!x && !["ignore", "inherit", "capture"].includes(x));
      return captured.text + files.map((f) => { try { return readFileSync(f, "utf8"); } catch { return ""; } }).join("");
    };
    const server: Server = { proc, url, port, env, readyMs: -1, output: () => captured.text, stop: () => o.children.stop(proc) };
    const deadline = performance.now() + limitMs;
    while (performance.now() < deadline && proc.exitCode === null) {
      if (await answers(url, path, o.strict ?? false)) {
        server.readyMs = performance.now() - started;
        return server;
      }
      await Bun.sleep(o.pollMs ?? 100);
    }
    const exited = proc.exitCode !== null;
    await o.children.stop(proc);
    await Bun.sleep(20); // the last of its output
    if (exited && tries < 5 && PORT_TAKEN.test(written())) continue;
    if (exited) throw new Error(`${name} exited with ${proc.exitCode}: ${written().slice(-2000)}`);
    throw new Error(`${name} did not answer ${path} within ${limitMs / 1000} s: ${written().slice(-2000)}`);
  }
}

/** `crm ARGS --json` on the database of `env` (added to this process's); the last line of its output, parsed. */
export function crmCli(env: Record<string, string | undefined>, timeoutMs = 60_000) {
  return (args: string[]): any => {
    const r = Bun.spawnSync([BUN, "src/main.ts", ...args, "--json"], { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs });
    if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")} failed: ${r.stderr.toString()}`);
    return JSON.parse(r.stdout.toString().trim().split("\n").pop()!);
  };
}

/**
 * Kills the run at a hard time limit and on SIGINT/SIGTERM (exit 1 and 130), calling
 * `cleanup` first. `release()` lifts both (a step of stress/run.ts that finished).
 */
export function guard(o: { label: string; limitMs: number; cleanup: () => unknown }) {
  const timer = setTimeout(async () => {
    console.error(`[${o.label}] hard time limit of ${(o.limitMs / 60_000).toFixed(0)} min reached; stopping.`);
    await o.cleanup();
    process.exit(1);
  }, o.limitMs);
  timer.unref?.();
  const onSignal = async () => (await o.cleanup(), process.exit(130));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    release() {
      clearTimeout(timer);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
