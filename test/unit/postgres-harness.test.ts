/**
 * The PostgreSQL harness itself (test/helpers/postgres.ts), on either backend: one embedded
 * cluster per test process, a fresh empty database per server, the same database for a
 * restart on the same folder, and nothing left once the process that started the cluster
 * is gone, kill -9 included.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  createTestDatabase,
  databaseEnv,
  databaseEnvAt,
  dropTestDatabase,
  pgClient,
  postgresCluster,
  releaseDatabases,
  testBackend,
} from "../helpers/postgres.ts";
import { BUN, REPO_ROOT, spawnTracked } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";

const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-pg-harness-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of dirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
    await releaseDatabases(dir);
  }
});

/** `select` on `url`, then the connection ends. */
async function query<T = any>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = await pgClient(url);
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const adminUrl = async () => (await postgresCluster()).url("postgres");
const exists = async (url: string) =>
  (await query(await adminUrl(), "SELECT count(*) AS n FROM pg_database WHERE datname = $1", [new URL(url).pathname.slice(1)]))[0].n === 1;
const userTables = (url: string) => query(url, "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')");

/** Runs `work` with CRM_TEST_BACKEND set to `backend`, then puts it back. */
async function onBackend<T>(backend: "sqlite" | "postgres", work: () => Promise<T>): Promise<T> {
  const before = process.env.CRM_TEST_BACKEND;
  process.env.CRM_TEST_BACKEND = backend;
  try {
    return await work();
  } finally {
    if (before === undefined) delete process.env.CRM_TEST_BACKEND;
    else process.env.CRM_TEST_BACKEND = before;
  }
}

/** Whether `pid` is a live process (a zombie is not). */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    try {
      process.kill(pid, 0);
      return process.platform !== "linux";
    } catch {
      return false;
    }
  }
}

describe("the embedded cluster", () => {
  test("one cluster per test process, concurrent callers share it, its folder directly under the temporary folder", async () => {
    const [a, b] = await Promise.all([postgresCluster(), postgresCluster()]);
    expect(a).toBe(b);
    expect(dirname(a.dataDir)).toBe(tmpdir());
    expect(a.dataDir).toMatch(new RegExp(`/crm-pg-${process.pid}-[0-9a-f]{8}$`));
    expect(await postgresCluster()).toBe(a);
  }, 60_000);

  test("two new databases are distinct and empty, on PostgreSQL 18 in UTF-8, and answer select 1", async () => {
    const [first, second] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    const { port } = await postgresCluster();
    expect(first).toMatch(new RegExp(`^postgres://crm:crm@127\\.0\\.0\\.1:${port}/crm_t_${process.pid}_\\d+$`));
    expect(second).not.toBe(first);
    for (const url of [first, second]) {
      expect(await userTables(url)).toEqual([]);
      expect(await query(url, "SELECT 1 AS one, current_database() AS name, current_setting('server_encoding') AS encoding, current_setting('server_version_num')::int / 10000 AS major")).toEqual([
        { one: 1, name: new URL(url).pathname.slice(1), encoding: "UTF8", major: 18 },
      ]);
    }
    // What one holds the other does not.
    await query(first, "CREATE TABLE only_here (id int)");
    expect((await userTables(first)).map((t) => t.table_name)).toEqual(["only_here"]);
    expect(await userTables(second)).toEqual([]);
    await Promise.all([dropTestDatabase(first), dropTestDatabase(second)]);
    expect([await exists(first), await exists(second)]).toEqual([false, false]);
  }, 60_000);

  test("tuned for tests: no fsync, no synchronous commit, no full-page writes, 500 connections, TCP on loopback only", async () => {
    const url = await createTestDatabase();
    const settings = await query(url, "SELECT name, setting FROM pg_settings WHERE name = ANY($1) ORDER BY name", [
      ["fsync", "synchronous_commit", "full_page_writes", "max_connections", "listen_addresses", "unix_socket_directories"],
    ]);
    expect(settings).toEqual([
      { name: "fsync", setting: "off" },
      { name: "full_page_writes", setting: "off" },
      { name: "listen_addresses", setting: "127.0.0.1" },
      { name: "max_connections", setting: "500" },
      { name: "synchronous_commit", setting: "off" },
      { name: "unix_socket_directories", setting: "" },
    ]);
    await dropTestDatabase(url);
  }, 60_000);
});

describe("a database per server folder", () => {
  test("on SQLite the folder's file, and no database", async () => {
    const dir = newDir();
    expect(await onBackend("sqlite", () => databaseEnv(dir))).toEqual({ CRM_DB_PATH: join(dir, "crm.db") });
  });

  test("on PostgreSQL a fresh database per folder, the same one again for the same folder (a restart), CRM_DB_PATH still in the folder", async () => {
    const [dir, other] = [newDir(), newDir()];
    const [first, again, third] = await onBackend("postgres", () => Promise.all([databaseEnv(dir), databaseEnv(dir), databaseEnv(other)]));
    expect(first).toEqual({ CRM_DB_PATH: join(dir, "crm.db"), CRM_DATABASE_URL: expect.stringMatching(/^postgres:\/\/crm:crm@127\.0\.0\.1:\d+\/crm_t_\d+_\d+$/) });
    expect(again).toEqual(first);
    expect(third.CRM_DATABASE_URL).not.toBe(first.CRM_DATABASE_URL);
    expect(await userTables(first.CRM_DATABASE_URL!)).toEqual([]);
    // Another file in the same folder (a test keeping two databases side by side): its own database.
    const side = await onBackend("postgres", () => databaseEnvAt(join(dir, "side.db")));
    expect(side.CRM_DATABASE_URL).not.toBe(first.CRM_DATABASE_URL);
  }, 60_000);

  test("what the test passes wins: its CRM_DATABASE_URL as is, and a CRM_DB_PATH alone means that SQLite file", async () => {
    const dir = newDir();
    const url = "postgres://someone:secret@db.example:5433/theirs";
    expect(await onBackend("postgres", () => databaseEnv(dir, { CRM_DATABASE_URL: url }))).toEqual({ CRM_DB_PATH: join(dir, "crm.db"), CRM_DATABASE_URL: url });
    expect(await onBackend("sqlite", () => databaseEnv(dir, { CRM_DATABASE_URL: url }))).toEqual({ CRM_DB_PATH: join(dir, "crm.db"), CRM_DATABASE_URL: url });
    expect(await onBackend("postgres", () => databaseEnv(dir, { CRM_DB_PATH: "/elsewhere/x.db" }))).toEqual({ CRM_DB_PATH: "/elsewhere/x.db" });
  });

  test("removing the folder drops its databases; a new start on it gets a fresh one", async () => {
    const dir = newDir();
    const before = await onBackend("postgres", () => databaseEnv(dir));
    const side = await onBackend("postgres", () => databaseEnvAt(join(dir, "side.db")));
    await query(before.CRM_DATABASE_URL!, "CREATE TABLE left_behind (id int)");
    await releaseDatabases(dir);
    expect([await exists(before.CRM_DATABASE_URL!), await exists(side.CRM_DATABASE_URL!)]).toEqual([false, false]);
    const after = await onBackend("postgres", () => databaseEnv(dir));
    expect(after.CRM_DATABASE_URL).not.toBe(before.CRM_DATABASE_URL);
    expect(await userTables(after.CRM_DATABASE_URL!)).toEqual([]);
  }, 60_000);
});

describe("nothing is left behind", () => {
  test("when the process that started a cluster is killed with kill -9, the cluster's processes and folder are gone", async () => {
    const script = [
      `import { postgresCluster, clusterPid } from ${JSON.stringify(join(REPO_ROOT, "test/helpers/postgres.ts"))};`,
      "const cluster = await postgresCluster();",
      "console.log(JSON.stringify({ dataDir: cluster.dataDir, pid: await clusterPid() }));",
      "setInterval(() => {}, 1000);",
    ].join("\n");
    const child = spawnTracked([BUN, "-e", script]);
    try {
      const started = await until(
        () => {
          const line = child.stdout().split("\n").find((l) => l.startsWith("{"));
          return line ? (JSON.parse(line) as { dataDir: string; pid: number }) : undefined;
        },
        { timeoutMs: 60_000, what: () => `the child's cluster; stderr: ${child.stderr()}` },
      );
      expect(isRunning(started.pid)).toBe(true);
      expect(readFileSync(join(started.dataDir, "PG_VERSION"), "utf8").trim()).toBe("18");

      child.proc.kill("SIGKILL");
      await child.exited;
      await until(() => !isRunning(started.pid), { timeoutMs: 15_000, what: "the postmaster to stop" });
      await until(
        () => {
          try {
            readFileSync(join(started.dataDir, "PG_VERSION"));
            return false;
          } catch {
            return true;
          }
        },
        { timeoutMs: 15_000, what: "the cluster's folder to be removed" },
      );
    } finally {
      await child.stop("SIGKILL");
    }
  }, 90_000);

  test("the backend the suite runs on is CRM_TEST_BACKEND's (postgres), SQLite otherwise", () => {
    expect(testBackend()).toBe(process.env.CRM_TEST_BACKEND === "postgres" ? "postgres" : "sqlite");
  });
});
