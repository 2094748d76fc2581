/**
 * Runtime-test harness: the one spawner of test/helpers/spawn.ts, started with an arbitrary
 * command (compiled binary, Deno, Bun on a given database), plus a request function on the
 * printed key.
 */
import { makeApi, type Api } from "../helpers/server.ts";
import { runCommand, spawnServer, type SpawnedServer } from "../helpers/spawn.ts";

export { BUN, DENO, DENO_RUN, REPO_ROOT, freePort, lastJson, sleep, spawnTracked } from "../helpers/spawn.ts";

export interface Started extends SpawnedServer {
  api: Api;
}

/** Starts `cmd` (ending in `serve`) and waits for its ready answer; see spawnServer. */
export async function startServerProcess(
  cmd: string[],
  opts: { cwd?: string; env: Record<string, string>; expectKey?: boolean; timeoutMs?: number },
): Promise<Started> {
  const server = await spawnServer({ cmd, cwd: opts.cwd, env: opts.env, expectKey: opts.expectKey ?? true, timeoutMs: opts.timeoutMs });
  return { ...server, api: makeApi(server.baseUrl, async () => server.key) };
}

/** Runs a command to completion (CLI calls) without blocking the event loop; throws unless it exits 0. */
export const run = runCommand;
