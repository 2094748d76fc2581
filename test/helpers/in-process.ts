/**
 * The real service started in the test process (src/server.ts `startServices`: database,
 * group commit, routes, socket, dispatcher, jobs) with what a test may replace: the DNS
 * resolver (a lookup the test holds open), the clock (time the test moves) or the log.
 * Requests still go over HTTP; projects and keys come from the admin CLI, run async
 * (runCommand), so the service keeps answering while a command runs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import type { Logger } from "../../src/lib/log.ts";
import { startServices, type RunningService, type ServiceOverrides } from "../../src/server.ts";
import { databaseEnv, releaseDatabases } from "./postgres.ts";
import { ALL_SCOPES, makeApi, type Api, type ProjectOptions } from "./server.ts";
import { BUN, lastJson, runCommand } from "./spawn.ts";

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface InProcessProject {
  id: string;
  key: string;
  keyId: string;
  /** Requests with `key` (an explicit `key` option overrides it). */
  api: Api;
}

export interface InProcessServer {
  service: RunningService;
  origin: string;
  baseUrl: string;
  /** The environment the service and its CLI run with. */
  env: Record<string, string>;
  /** The service's PostgreSQL database (CRM_TEST_BACKEND=postgres); undefined on SQLite. */
  databaseUrl: string | undefined;
  /** Every line the service logged, parsed (kept even when `overrides.log` is not given). */
  logs: LogLine[];
  cli: (args: string[]) => Promise<any>;
  newProject: (opts?: ProjectOptions) => Promise<InProcessProject>;
  stop: () => Promise<void>;
}

let counter = 0;

/** A logger that keeps what it is given, at every level. */
function keepingLogger(lines: LogLine[]): Logger {
  const write = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    lines.push({ level, msg, ...fields });
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

export async function startInProcess(opts: { env?: Record<string, string>; overrides?: ServiceOverrides } = {}): Promise<InProcessServer> {
  const dir = mkdtempSync(join(tmpdir(), "crm-in-process-"));
  const removeDir = async () => {
    rmSync(dir, { recursive: true, force: true });
    await releaseDatabases(dir);
  };
  const logs: LogLine[] = [];
  let env: Record<string, string>;
  let service: RunningService;
  try {
    env = {
      ...(process.env as Record<string, string>),
      // SQLite: CRM_DB_PATH=dir/crm.db. PostgreSQL: also CRM_DATABASE_URL, a fresh database.
      ...(await databaseEnv(dir, opts.env)),
      CRM_ENV: "production",
      CRM_BOOTSTRAP: "false",
      CRM_LOG_LEVEL: "warn",
      ...opts.env,
      PORT: "0",
      HOST: "127.0.0.1",
    };
    service = await startServices(loadConfig(env), { log: keepingLogger(logs), ...opts.overrides });
  } catch (error) {
    await removeDir();
    throw error;
  }
  const origin = `http://127.0.0.1:${service.server.port}`;
  const baseUrl = `${origin}/v1`;
  const cli = async (args: string[]) => lastJson((await runCommand([BUN, "src/main.ts", ...args, "--json"], { env })).stdout);
  const newProject = async (o: ProjectOptions = {}): Promise<InProcessProject> => {
    const args = ["project", "create", "--name", o.name ?? `in-process-${process.pid}-${++counter}`];
    if (o.contactQuota !== undefined) args.push("--contact-quota", String(o.contactQuota));
    if (o.rateLimitPerMinute !== undefined) args.push("--rate-limit-per-minute", String(o.rateLimitPerMinute));
    if (o.contactCreatesPerHour !== undefined) args.push("--contact-creates-per-hour", String(o.contactCreatesPerHour));
    const project = await cli(args);
    const key = await cli(["key", "create", "--project", project.id, "--scopes", ALL_SCOPES.join(",")]);
    return { id: project.id, key: key.key, keyId: key.id, api: makeApi(baseUrl, async () => key.key) };
  };
  return {
    service,
    origin,
    baseUrl,
    env,
    databaseUrl: env.CRM_DATABASE_URL,
    logs,
    cli,
    newProject,
    stop: async () => {
      await service.stop();
      await removeDir();
    },
  };
}

/**
 * A DNS resolver that holds the first `holdFirst` lookups of `host` (default: every one)
 * until `release()`, answering a public address; `started` resolves when the first held
 * lookup begins. Other hosts answer at once.
 */
export function heldResolver(host: string, opts: { holdFirst?: number; address?: string } = {}) {
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let lookups = 0;
  const resolve = async (name: string) => {
    if (name === host && ++lookups <= (opts.holdFirst ?? Infinity)) {
      markStarted();
      await released;
    }
    return [opts.address ?? "93.184.216.34"];
  };
  return { resolve, started, release };
}
