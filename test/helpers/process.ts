/**
 * Server processes the test spawns and kills itself (crash tests): unlike
 * test/helpers/server.ts, nothing here deletes the database folder, so a second process
 * can start on the same CRM_DB_PATH after a kill -9.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort, KEY_PATTERN, makeApi, REPO_ROOT, sleep, type Api } from "./server.ts";

const BUN = join(REPO_ROOT, "node_modules/.bin/bun");

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  origin: string;
  baseUrl: string;
  /** The bootstrap key when this start printed one. */
  printedKey: string | null;
  /** A request function using `key`. */
  api: (key: string) => Api;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number>;
}

export function newDbDir(prefix = "crm-crash-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
}

function collect(stream: ReadableStream<Uint8Array>, sink: { text: string }) {
  const decoder = new TextDecoder();
  (async () => {
    try {
      for await (const chunk of stream as any) sink.text += decoder.decode(chunk, { stream: true });
    } catch {
      /* process ended */
    }
  })();
}

/** Starts `bun src/main.ts serve` on `dir/crm.db` and waits for /healthz. */
export async function spawnServer(dir: string, env: Record<string, string>): Promise<ServerProcess> {
  const port = freePort();
  const fullEnv: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: "127.0.0.1",
    CRM_DB_PATH: join(dir, "crm.db"),
    CRM_LOG_LEVEL: "warn",
    ...env,
  };
  const proc = Bun.spawn([BUN, "src/main.ts", "serve"], { cwd: REPO_ROOT, env: fullEnv, stdout: "pipe", stderr: "pipe" });
  const out = { text: "" };
  const err = { text: "" };
  collect(proc.stdout, out);
  collect(proc.stderr, err);
  let exited = false;
  proc.exited.then(() => (exited = true));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (exited || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server did not become healthy (exited=${exited})\nstdout:\n${out.text}\nstderr:\n${err.text}`);
    }
    try {
      const res = await fetch(`${origin}/healthz`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      /* not yet listening */
    }
    await sleep(50);
  }
  let key: string | null = null;
  for (let i = 0; i < 20 && !key; i++) {
    key = out.text.match(KEY_PATTERN)?.[0] ?? null;
    if (!key) await sleep(50);
  }
  const baseUrl = `${origin}/v1`;
  return {
    proc,
    origin,
    baseUrl,
    printedKey: key,
    api: (k: string) => makeApi(baseUrl, async () => k),
    stdout: () => out.text,
    stderr: () => err.text,
    exited: proc.exited,
  };
}
