/**
 * Configuration (docs/operations.md §1, docs/api.md §16): the environment is parsed and validated at start, and a
 * bad value stops the start with one line naming the variable (`crm: invalid NAME="value":
 * …`, exit 2, src/main.ts) before anything is created: no database, not even its folder.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { startServer } from "../helpers/server.ts";
import { BUN, freePort, runCommand } from "../helpers/spawn.ts";

const cases: [name: string, value: string][] = [
  ["PORT", "abc"],
  ["PORT", "70000"],
  ["CRM_ENV", "staging"],
  ["CRM_SYNCHRONOUS", "OFF"],
  ["CRM_WEBHOOK_RETRY_SCHEDULE", "soon"],
  ["CRM_BOOTSTRAP", "maybe"],
  ["CRM_LOG_LEVEL", "verbose"],
  ["CRM_WEBHOOK_TIMEOUT_MS", "0"],
  ["CRM_OUTBOX_POLL_MS", "fast"],
  ["CRM_DATABASE_URL", "mysql://user@localhost/crm"],
  ["CRM_DATABASE_URL", "postgres://"],
  ["CRM_DB_POOL_SIZE", "0"],
];

describe("a bad environment value stops the start", () => {
  test.each(cases)("%s=%s: exit 2, one stderr line naming the variable and the value, nothing on stdout, no database and no folder created", async (name, value) => {
    const dir = mkdtempSync(join(tmpdir(), "crm-config-test-"));
    try {
      const dataDir = join(dir, "data");
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        PORT: String(freePort()),
        HOST: "127.0.0.1",
        CRM_DB_PATH: join(dataDir, "crm.db"),
        CRM_LOG_LEVEL: "info",
        [name]: value,
      };
      const r = await runCommand([BUN, "src/main.ts", "serve"], { env, allowFail: true, timeoutMs: 20_000 });
      expect(r.exitCode).toBe(2);
      expect(r.stderr.endsWith("\n")).toBe(true);
      const lines = r.stderr.slice(0, -1).split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`crm: invalid ${name}=${JSON.stringify(value)}: `);
      expect(r.stdout).toBe("");
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the admin CLI refuses a bad value the same way, before opening the database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-config-test-"));
    try {
      const dataDir = join(dir, "data");
      const env = { ...(process.env as Record<string, string>), CRM_DB_PATH: join(dataDir, "crm.db"), CRM_SYNCHRONOUS: "OFF" };
      const r = await runCommand([BUN, "src/main.ts", "project", "list", "--json"], { env, allowFail: true, timeoutMs: 20_000 });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toStartWith('crm: invalid CRM_SYNCHRONOUS="OFF": ');
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stdout).toBe("");
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The key is checked with the other settings and the port is taken before the database
  // is opened, so neither start creates anything (src/config.ts, src/server.ts).
  async function startRefused(extra: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), "crm-config-test-"));
    try {
      const dataDir = join(dir, "data");
      const env = { ...(process.env as Record<string, string>), PORT: String(freePort()), HOST: "127.0.0.1", CRM_DB_PATH: join(dataDir, "crm.db"), ...extra };
      const r = await runCommand([BUN, "src/main.ts", "serve"], { env, allowFail: true, timeoutMs: 20_000 });
      return { ...r, created: existsSync(dataDir) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("a CRM_SECRET_KEY that is not the base64 of 32 bytes: exit 2, one line naming it, nothing created (docs/cli.md §2)", async () => {
    const r = await startRefused({ CRM_SECRET_KEY: "bad" });
    expect({ exitCode: r.exitCode, lines: r.stderr.trimEnd().split("\n").length, stdout: r.stdout, created: r.created }).toEqual({
      exitCode: 2,
      lines: 1,
      stdout: "",
      created: false,
    });
    expect(r.stderr).toContain("CRM_SECRET_KEY");
  });

  test("a port in use: exit 2, one line naming the port, nothing created (docs/cli.md §2)", async () => {
    const taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("taken") });
    try {
      const r = await startRefused({ PORT: String(taken.port) });
      expect({ exitCode: r.exitCode, lines: r.stderr.trimEnd().split("\n").length, stdout: r.stdout, created: r.created }).toEqual({
        exitCode: 2,
        lines: 1,
        stdout: "",
        created: false,
      });
      expect(r.stderr).toContain(String(taken.port));
    } finally {
      taken.stop(true);
    }
  });

  test("a start with another CRM_SECRET_KEY than the one that sealed the database's secrets: exit 2, one line naming it (docs/scaling.md §6)", async () => {
    const first = await startServer({ extraEnv: { CRM_SECRET_KEY: randomBytes(32).toString("base64") } });
    await first.stop(true);
    try {
      const env = { ...first.env, PORT: String(freePort()), CRM_SECRET_KEY: randomBytes(32).toString("base64") };
      const r = await runCommand([BUN, "src/main.ts", "serve"], { env, allowFail: true, timeoutMs: 20_000 });
      expect({ exitCode: r.exitCode, lines: r.stderr.trimEnd().split("\n").length, stdout: r.stdout }).toEqual({ exitCode: 2, lines: 1, stdout: "" });
      expect(r.stderr).toContain("CRM_SECRET_KEY");
      // The right key still starts it.
      const again = await startServer({ dir: first.dir, expectBootstrapKey: false, extraEnv: { CRM_SECRET_KEY: first.env.CRM_SECRET_KEY! } });
      await again.stop();
    } finally {
      rmSync(first.dir, { recursive: true, force: true });
    }
  }, 60_000);
});
