/**
 * Kept for stress/crash-loop.ts only (no test imports it; tests use spawn.ts's
 * `spawnServer` directly, as webhooks-crash.test.ts does): to be removed once the stress
 * harness imports spawn.ts. Server processes spawned and killed by the caller: unlike
 * test/helpers/server.ts, nothing here deletes the database folder, so a second process
 * can start on the same CRM_DB_PATH after a kill -9 (on PostgreSQL, CRM_TEST_BACKEND=postgres:
 * on the same database, the folder's own).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseEnv, releaseDatabases } from "./postgres.ts";
import { makeApi, type Api } from "./server.ts";
import { spawnServer as spawn, type SpawnedServer } from "./spawn.ts";

export interface ServerProcess extends SpawnedServer {
  /** The bootstrap key when this start printed one. */
  printedKey: string | null;
  /** A request function using `key`. */
  api: (key: string) => Api;
  /** The folder's PostgreSQL database (CRM_TEST_BACKEND=postgres); undefined on SQLite. */
  databaseUrl: string | undefined;
}

export function newDbDir(prefix = "crm-crash-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Removes the folder now; its PostgreSQL database (if any) is dropped in the background (awaitable, never rejects). */
export function removeDir(dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  return releaseDatabases(dir);
}

/**
 * Starts `bun src/main.ts serve` on `dir/crm.db` (PostgreSQL: the folder's database, the same
 * one on every start) and waits for its ready answer. `env` wins, its CRM_DB_PATH and
 * CRM_DATABASE_URL included.
 */
export async function spawnServer(dir: string, env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawn({ env: { ...(await databaseEnv(dir, env)), ...env } });
  // The bootstrap key, when printed, is written before the server listens.
  await Bun.sleep(50);
  const printedKey = server.stdout().match(/crm_(live|test)_[A-Za-z0-9]{46}/)?.[0] ?? null;
  return { ...server, printedKey, api: (k: string) => makeApi(server.baseUrl, async () => k), databaseUrl: server.env.CRM_DATABASE_URL };
}
