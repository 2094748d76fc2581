/**
 * Start checks (docs/api.md §16): a bad CRM_SECRET_KEY or a port in use stops `crm serve` with
 * one line on stderr (`crm: …`) and exit 2 before anything is created: no database file or
 * folder, no key file, no bootstrap key printed and, on PostgreSQL (CRM_TEST_BACKEND=postgres),
 * not one table in the server's empty database, so no bootstrap project or key either. The
 * key is checked with the other settings (src/config.ts); the port is bound before the
 * storage is opened (src/server.ts). A key file that holds no key stops the start in one
 * line too.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseEnvAt, releaseDatabases } from "../helpers/postgres.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { BUN, freePort, runCommand, spawnServer, type CommandResult } from "../helpers/spawn.ts";

const dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
    await releaseDatabases(dir);
  }
});

interface Refusal extends CommandResult {
  /** What exists under the database's folder afterwards (the folder itself: null when absent). */
  files: string[] | null;
  /** Tables in the server's PostgreSQL database afterwards; null on SQLite. */
  tables: number | null;
}

/** `crm serve` on a fresh database (folder `data/` not made yet; on PostgreSQL an empty database) with `extra`. */
async function serveOnFresh(extra: Record<string, string>, prepare?: (dataDir: string) => void): Promise<Refusal> {
  const dir = mkdtempSync(join(tmpdir(), "crm-start-checks-"));
  dirs.push(dir);
  const dataDir = join(dir, "data");
  prepare?.(dataDir);
  const dbEnv = await databaseEnvAt(join(dataDir, "crm.db"));
  const env = { ...(process.env as Record<string, string>), PORT: String(freePort()), HOST: "127.0.0.1", CRM_LOG_LEVEL: "info", ...dbEnv, ...extra };
  const r = await runCommand([BUN, "src/main.ts", "serve"], { env, allowFail: true, timeoutMs: 20_000 });
  let tables: number | null = null;
  if (dbEnv.CRM_DATABASE_URL) {
    const side = await openSideDatabase(dbEnv);
    try {
      tables = Number((await side.get("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'"))!.n);
    } finally {
      await side.close();
    }
  }
  return { ...r, files: existsSync(dataDir) ? readdirSync(dataDir) : null, tables };
}

/** One line on stderr, starting `crm: `, and nothing else said. */
function expectOneLine(r: CommandResult) {
  expect(r.stderr.endsWith("\n")).toBe(true);
  const lines = r.stderr.slice(0, -1).split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("crm: ");
  expect(r.stdout).toBe("");
}

const badKeys: [what: string, value: string][] = [
  ["not base64", "not a key"],
  ["the base64 of 16 bytes", randomBytes(16).toString("base64")],
  ["the base64 of 33 bytes", randomBytes(33).toString("base64")],
  ["base64url instead of base64", "-_" + randomBytes(30).toString("base64url")],
];

describe("a bad CRM_SECRET_KEY stops crm serve", () => {
  test.each(badKeys)("%s: exit 2, one stderr line naming CRM_SECRET_KEY, no database, no key file, no table, no key printed", async (_, value) => {
    const r = await serveOnFresh({ CRM_SECRET_KEY: value });
    expect(r.exitCode).toBe(2);
    expectOneLine(r);
    expect(r.stderr).toStartWith("crm: invalid CRM_SECRET_KEY=");
    expect(r.files).toBeNull();
    expect(r.tables ?? 0).toBe(0);
  });
});

describe("a port in use stops crm serve", () => {
  test("exit 2, one stderr line naming the port, before the storage is opened: no database, no key file, no table (so no bootstrap project or key), no key printed", async () => {
    const taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("taken") });
    try {
      const r = await serveOnFresh({ PORT: String(taken.port) });
      expect(r.exitCode).toBe(2);
      expectOneLine(r);
      expect(r.stderr).toContain(`127.0.0.1:${taken.port}`);
      expect(r.stderr).toContain("PORT");
      expect(r.files).toBeNull();
      expect(r.tables ?? 0).toBe(0);
    } finally {
      taken.stop(true);
    }
  });

  test("the same start on a free port creates the database and prints the bootstrap key (the refusal above is the port's doing)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-start-checks-"));
    dirs.push(dir);
    const dbEnv = await databaseEnvAt(join(dir, "data", "crm.db"));
    const server = await spawnServer({ env: dbEnv, expectKey: true });
    try {
      expect(server.key).not.toBe("");
      expect(existsSync(join(dir, "data", "secret.key"))).toBe(true);
      const side = await openSideDatabase(dbEnv);
      try {
        expect(Number((await side.get("SELECT count(*) AS n FROM projects"))!.n)).toBe(1);
      } finally {
        await side.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe("a key file that holds no key", () => {
  test("stops crm serve with exit 2 and one stderr line naming secret.key", async () => {
    const r = await serveOnFresh({}, (dataDir) => {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(join(dataDir, "secret.key"), "not a key\n", { mode: 0o600 });
    });
    expect(r.exitCode).toBe(2);
    expectOneLine(r);
    expect(r.stderr).toContain("secret.key");
  });
});
