/**
 * Server processes the test spawns and kills itself (crash tests): unlike
 * test/helpers/server.ts, nothing here deletes the database folder, so a second process
 * can start on the same CRM_DB_PATH after a kill -9.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeApi, type Api } from "./server.ts";
import { spawnServer as spawn, type SpawnedServer } from "./spawn.ts";

export interface ServerProcess extends SpawnedServer {
  /** The bootstrap key when this start printed one. */
  printedKey: string | null;
  /** A request function using `key`. */
  api: (key: string) => Api;
}

export function newDbDir(prefix = "crm-crash-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
}

/** Starts `bun src/main.ts serve` on `dir/crm.db` and waits for its ready answer. */
export async function spawnServer(dir: string, env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawn({ env: { CRM_DB_PATH: join(dir, "crm.db"), ...env } });
  // The bootstrap key, when printed, is written before the server listens.
  await Bun.sleep(50);
  const printedKey = server.stdout().match(/crm_(live|test)_[A-Za-z0-9]{46}/)?.[0] ?? null;
  return { ...server, printedKey, api: (k: string) => makeApi(server.baseUrl, async () => k) };
}
