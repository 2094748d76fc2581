/**
 * Files (docs/api.md §7): the database, its -wal and -shm files and the key file are
 * created with mode 0600, their folder 0700 when the service creates it; `crm backup`
 * writes its copy 0600 too. Under Bun always; under Deno (node:sqlite) as well when
 * CRM_TEST_DENO=1, as `npm run test:deno` sets. The files are SQLite's: skipped under
 * CRM_TEST_BACKEND=postgres.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStatus } from "../helpers/expect.ts";
import { sqliteOnly } from "../helpers/postgres.ts";
import { BUN, DENO_RUN, run, startServerProcess, type Started } from "../runtime/process.ts";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

const RUNTIMES: Array<{ name: string; command: string[]; enabled: boolean }> = [
  { name: "Bun", command: [BUN], enabled: true },
  { name: "Deno", command: DENO_RUN, enabled: process.env.CRM_TEST_DENO === "1" },
];

for (const runtime of RUNTIMES) {
  describe.skipIf(!runtime.enabled || sqliteOnly)(`files the service creates are owner-only (${runtime.name})`, () => {
    let base: string;
    let dbDir: string;
    let env: Record<string, string>;
    let server: Started;

    beforeAll(async () => {
      base = mkdtempSync(join(tmpdir(), "crm-file-modes-"));
      dbDir = join(base, "state", "crm");
      env = { ...(process.env as Record<string, string>), CRM_DB_PATH: join(dbDir, "crm.db"), CRM_ENV: "sandbox" };
      server = await startServerProcess([...runtime.command, "src/main.ts", "serve"], { env, timeoutMs: 60_000 });
      // A write, so the WAL has frames (and both -wal and -shm exist).
      expectStatus(await server.api("POST", "/contacts", { body: { firstName: "Mode" } }), 201);
    }, 90_000);

    afterAll(async () => {
      await server?.stop();
      rmSync(base, { recursive: true, force: true });
    }, 30_000);

    test("the database, its -wal and -shm files and the key file are 0600", () => {
      for (const name of ["crm.db", "crm.db-wal", "crm.db-shm", "secret.key"]) expect([name, mode(join(dbDir, name))]).toEqual([name, "600"]);
    });

    test("the folders created for the database are 0700", () => {
      expect(mode(join(base, "state"))).toBe("700");
      expect(mode(dbDir)).toBe("700");
    });

    test("crm backup writes its copy 0600, in a folder it creates 0700", async () => {
      const copy = join(base, "backups", "daily", "copy.db");
      await run([...runtime.command, "src/main.ts", "backup", copy, "--json"], { env });
      expect(mode(copy)).toBe("600");
      expect(mode(join(base, "backups"))).toBe("700");
      expect(mode(join(base, "backups", "daily"))).toBe("700");
    });

    test("crm backup into a folder that exists leaves the folder's mode as it is", async () => {
      const shared = join(base, "shared");
      mkdirSync(shared);
      chmodSync(shared, 0o755);
      const copy = join(shared, "copy.db");
      await run([...runtime.command, "src/main.ts", "backup", copy, "--json"], { env });
      expect(mode(shared)).toBe("755");
      expect(mode(copy)).toBe("600");
    });
  });
}
