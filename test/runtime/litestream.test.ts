/**
 * Litestream (docs/operations.md §5): the shipped litestream.yml, driven by the environment,
 * replicates a running server's database to a file replica; `litestream restore` gives a
 * database a second server answers the same contacts from, with the same key. Then the
 * Docker entry point (scripts/docker-entrypoint.sh) is run as the image runs it: restore on
 * a missing database, serve under `litestream replicate -exec`, stop on SIGTERM. Litestream
 * replicates SQLite files: skipped under CRM_TEST_BACKEND=postgres.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteOnly } from "../helpers/postgres.ts";
import { until } from "../helpers/until.ts";
import { BUN, REPO_ROOT, run, spawnTracked, startServerProcess, type Started } from "./process.ts";

const LITESTREAM = join(REPO_ROOT, `node_modules/@flydotio/litestream-${process.platform}-${process.arch}/litestream`);
const CONFIG = join(REPO_ROOT, "litestream.yml");
// Restored databases need the same webhook-secret key as the original (it is not in the file).
const SECRET = Buffer.alloc(32, 7).toString("base64");

let dir: string;
let replicaUrl: string;
let key: string;
let originals: any[] = [];
const stops: Array<() => Promise<unknown>> = [];

function envFor(dbPath: string): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    CRM_DB_PATH: dbPath,
    CRM_SECRET_KEY: SECRET,
    LITESTREAM_REPLICA_URL: replicaUrl,
    CRM_LOG_LEVEL: "warn",
  };
}

function contactCount(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM contacts").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Runs `check`; a failure carries the process's stdout and stderr, so a rare one can be read from CI's log. */
async function withOutput(proc: Started, check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    const words = `\n--- stdout:\n${proc.stdout().slice(-4000)}\n--- stderr:\n${proc.stderr().slice(-4000)}`;
    if (error instanceof Error) error.message += words;
    throw error;
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "crm-litestream-test-"));
  replicaUrl = `file://${join(dir, "replica")}`;
  expect(existsSync(LITESTREAM)).toBe(true);
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe.skipIf(sqliteOnly)("replicate, restore, serve the restored file", () => {
  test("litestream replicates the live database while the server writes", async () => {
    const dbPath = join(dir, "live/crm.db");
    const env = envFor(dbPath);
    const server = await startServerProcess([BUN, "src/main.ts", "serve"], { env });
    stops.push(server.stop);
    key = server.key;
    const litestream = spawnTracked([LITESTREAM, "replicate", "-config", CONFIG], { env });
    stops.push(litestream.stop);

    for (let i = 0; i < 5; i++) {
      const res = await server.api("POST", "/contacts", { body: { firstName: `Replica${i}`, email: `r${i}@example.com`, tags: ["dr"] } });
      expect(res.status).toBe(201);
    }
    const first = (await server.api("GET", "/contacts", { query: { search: "replica0" } })).json.data[0];
    expect((await server.api("PATCH", `/contacts/${first.contactId}`, { body: { notes: "patched before the disaster" } })).status).toBe(200);
    expect((await server.api("POST", `/contacts/${first.contactId}/interactions`, { body: { type: "note", note: "kept" } })).status).toBe(201);
    originals = (await server.api("GET", "/contacts")).json.data;
    expect(originals).toHaveLength(5);

    // Wait until a restore shows every write (sync-interval 1s).
    let probes = 0;
    let restored = 0;
    await until(
      async () => {
        const probe = join(dir, `probe-${probes++}.db`);
        const r = await run([LITESTREAM, "restore", "-config", CONFIG, "-o", probe, dbPath], { env, allowFail: true });
        if (r.exitCode !== 0) return false;
        const db = new Database(probe, { readonly: true });
        const patched = db.query("SELECT count(*) AS n FROM contacts WHERE notes IS NOT NULL").get() as { n: number };
        restored = contactCount(probe) + patched.n;
        db.close();
        return restored === 6;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: () => `a restore with every write (last had ${restored} of 6)` },
    );

    // The server keeps answering with Litestream's own tables in its database (docs/operations.md §3.1).
    const live = new Database(dbPath, { readonly: true });
    const tables = live.query("SELECT name FROM sqlite_master WHERE name LIKE '\\_litestream%' ESCAPE '\\'").all();
    live.close();
    expect(tables.length).toBeGreaterThan(0);
    expect((await fetch(`${server.origin}/readyz`)).status).toBe(200);
    expect((await server.api("GET", "/contacts")).json.data).toEqual(originals);
    expect(await server.stop()).toBe(0);
    await litestream.stop();
    expect(litestream.stdout() + litestream.stderr()).not.toContain("level=ERROR");
  }, 60_000);

  test("`litestream restore -o` gives a database a second server answers the same contacts from", async () => {
    const restoredPath = join(dir, "restored/crm.db");
    mkdirSync(join(dir, "restored"));
    const env = envFor(restoredPath);
    // On another machine the config's path may differ: restore straight from the replica URL.
    await run([LITESTREAM, "restore", "-o", restoredPath, replicaUrl], { env });
    const server = await startServerProcess([BUN, "src/main.ts", "serve"], { env, expectKey: false });
    stops.push(server.stop);
    const list = await server.api("GET", "/contacts", { key });
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual(originals);
    for (const contact of originals) {
      const got = await server.api("GET", `/contacts/${contact.contactId}`, { key });
      expect(got.status).toBe(200);
      expect({ ...got.json, duplicateSignal: undefined }).toEqual({ ...contact, duplicateSignal: undefined });
    }
    const patched = originals.find((c) => c.firstName === "Replica0");
    expect(patched.notes).toBe("patched before the disaster");
    const logs = await server.api("GET", `/contacts/${patched.contactId}/interactions`, { key });
    expect(logs.json.data.map((l: { note: string }) => l.note)).toEqual(["kept"]);
    // The restored database takes writes, and the ids continue where they stopped.
    const next = await server.api("POST", "/contacts", { key, body: { firstName: "After" } });
    expect(next.status).toBe(201);
    expect(next.json.contactId).toBe("CR-6");
    await server.stop();
  }, 60_000);
});

describe.skipIf(sqliteOnly)("the Docker entry point (scripts/docker-entrypoint.sh)", () => {
  let bin: string;
  let server: Started | undefined;

  beforeAll(() => {
    // What the image has on PATH: `crm` (here Bun on the sources) and `litestream`.
    bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "crm"), `#!/bin/sh\nexec "${BUN}" "${join(REPO_ROOT, "src/main.ts")}" "$@"\n`);
    chmodSync(join(bin, "crm"), 0o755);
    symlinkSync(LITESTREAM, join(bin, "litestream"));
  });

  test("a missing database is restored from the replica, served under litestream -exec, stopped by SIGTERM", async () => {
    const dbPath = join(dir, "volume/data/crm.db");
    const env = { ...envFor(dbPath), PATH: `${bin}:${process.env.PATH}`, LITESTREAM_CONFIG: CONFIG };
    const started = await startServerProcess(["sh", join(REPO_ROOT, "scripts/docker-entrypoint.sh")], { env, expectKey: false });
    server = started;
    stops.push(started.stop);
    // A failure here names the processes' own words (litestream and the server share the pipes).
    await withOutput(started, async () => {
      const list = await started.api("GET", "/contacts", { key });
      expect(list.status).toBe(200);
      expect(list.json.data).toEqual(originals);
      expect((await started.api("POST", "/contacts", { key, body: { firstName: "Entrypoint" } })).status).toBe(201);

      // SIGTERM to the entry point's process (litestream after exec) reaches the server, which drains.
      expect(await started.stop()).toBe(0);
      expect(started.stdout() + started.stderr()).toContain("signal received");
      const down = await fetch(`${started.origin}/healthz`).then(
        () => "up",
        () => "down",
      );
      expect(down).toBe("down");
    });
  }, 60_000);

  test("without LITESTREAM_REPLICA_URL it runs `crm serve` alone; other arguments are admin commands", async () => {
    const dbPath = join(dir, "plain/crm.db");
    const env = { ...envFor(dbPath), PATH: `${bin}:${process.env.PATH}`, LITESTREAM_REPLICA_URL: "" };
    const projects = await run(["sh", join(REPO_ROOT, "scripts/docker-entrypoint.sh"), "project", "list", "--json"], { env });
    expect(JSON.parse(projects.stdout).data).toEqual([]);
    server = await startServerProcess(["sh", join(REPO_ROOT, "scripts/docker-entrypoint.sh"), "serve"], { env });
    stops.push(server.stop);
    expect((await server.api("GET", "/contacts")).status).toBe(200);
    expect(await server.stop()).toBe(0);
  }, 60_000);
});
