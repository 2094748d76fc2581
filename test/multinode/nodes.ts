/**
 * Several `crm serve` processes (nodes) on one PostgreSQL database (docs/scaling.md §6), for the
 * black-box tests of test/multinode/. Each test gets a fresh database on the harness's
 * embedded cluster (test/helpers/postgres.ts), whatever CRM_TEST_BACKEND says: these rules
 * only exist on PostgreSQL. Every node of a cluster shares the database URL and the
 * CRM_SECRET_KEY, and has a CRM_DB_PATH folder of its own (unused on PostgreSQL). The admin
 * CLI runs as a real process on the same database.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "pg";
import { createTestDatabase, dropTestDatabase, pgClient } from "../helpers/postgres.ts";
import { ALL_SCOPES, makeApi, type Api } from "../helpers/server.ts";
import { BUN, lastJson, REPO_ROOT, runCommand, spawnServer, type CommandResult, type SpawnedServer } from "../helpers/spawn.ts";
import { readMetrics } from "../helpers/metrics.ts";
import { until } from "../helpers/until.ts";

export { ALL_SCOPES };

export interface Node {
  name: string;
  origin: string;
  baseUrl: string;
  process: SpawnedServer;
  /** Requests to this node with `key`. */
  api: (key: string) => Api;
  /** kill -9: no shutdown, claims and connections left as they are. */
  kill9: () => Promise<void>;
  /** SIGTERM (graceful). */
  stop: () => Promise<void>;
}

export interface Cluster {
  /** The database every node shares. */
  url: string;
  /** The environment of every node and CLI run (before PORT/HOST and the node's own CRM_DB_PATH). */
  env: Record<string, string>;
  /** Starts one more node (`expectKey`: it must print a bootstrap key). */
  start: (name: string, opts?: { expectKey?: boolean; env?: Record<string, string> }) => Promise<Node>;
  /** Runs `crm ARGS` on the shared database; its JSON answer (throws unless exit 0). */
  cli: (args: string[]) => Promise<any>;
  cliRaw: (args: string[]) => Promise<CommandResult>;
  /** A project made by the CLI and an every-scope key of it. */
  project: (opts?: { contactQuota?: number; rateLimitPerMinute?: number; contactCreatesPerHour?: number }) => Promise<{ id: string; key: string; keyId: string }>;
  /** A new key of `projectId` made by the CLI. */
  key: (projectId: string, scopes?: string[]) => Promise<{ id: string; key: string }>;
  /** A direct connection to the shared database (closed by `close`). */
  sql: () => Promise<Client>;
  /** Kills every node still running (SIGKILL), drops the database, removes the folders. */
  close: () => Promise<void>;
}

/** base64 of 32 random bytes: the one CRM_SECRET_KEY every node of a cluster seals with. */
const newSecretKey = () => randomBytes(32).toString("base64");

let projects = 0;

/** A fresh database and what starting nodes on it needs. `env` is added to every node's and CLI run's environment. */
export async function newCluster(env: Record<string, string> = {}): Promise<Cluster> {
  const url = await createTestDatabase();
  const cliDir = mkdtempSync(join(tmpdir(), "crm-multinode-cli-"));
  const dirs = [cliDir];
  const nodes: Node[] = [];
  const clients: Client[] = [];
  const base: Record<string, string> = {
    CRM_DATABASE_URL: url,
    CRM_SECRET_KEY: newSecretKey(),
    CRM_ENV: "sandbox",
    CRM_LOG_LEVEL: "warn",
    CRM_OUTBOX_POLL_MS: "100",
    ...env,
  };

  const cliEnv = { ...(process.env as Record<string, string>), ...base, CRM_DB_PATH: join(cliDir, "crm.db") };
  const cliRaw = (args: string[]) => runCommand([BUN, "src/main.ts", ...args], { cwd: REPO_ROOT, env: cliEnv, allowFail: true });
  const cli = async (args: string[]) => {
    const r = await cliRaw(args);
    if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")} failed (${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
    return lastJson(r.stdout);
  };

  const key = async (projectId: string, scopes: string[] = ALL_SCOPES) => {
    const k = await cli(["key", "create", "--project", projectId, "--scopes", scopes.join(","), "--json"]);
    if (typeof k.key !== "string" || typeof k.id !== "string") throw new Error(`unexpected key create output ${JSON.stringify(k)}`);
    return { id: k.id as string, key: k.key as string };
  };

  const project: Cluster["project"] = async (o = {}) => {
    const args = ["project", "create", "--name", `multinode-${process.pid}-${++projects}`, "--json"];
    if (o.contactQuota !== undefined) args.push("--contact-quota", String(o.contactQuota));
    if (o.rateLimitPerMinute !== undefined) args.push("--rate-limit-per-minute", String(o.rateLimitPerMinute));
    if (o.contactCreatesPerHour !== undefined) args.push("--contact-creates-per-hour", String(o.contactCreatesPerHour));
    const p = await cli(args);
    if (typeof p.id !== "string") throw new Error(`unexpected project create output ${JSON.stringify(p)}`);
    const k = await key(p.id);
    return { id: p.id as string, key: k.key, keyId: k.id };
  };

  const start: Cluster["start"] = async (name, o = {}) => {
    const dir = mkdtempSync(join(tmpdir(), `crm-multinode-${name}-`));
    dirs.push(dir);
    const proc = await spawnServer({ env: { ...base, ...o.env, CRM_DB_PATH: join(dir, "crm.db") }, expectKey: o.expectKey ?? false });
    const node: Node = {
      name,
      origin: proc.origin,
      baseUrl: proc.baseUrl,
      process: proc,
      api: (k) => makeApi(proc.baseUrl, async () => k),
      kill9: async () => {
        await proc.stop("SIGKILL");
      },
      stop: async () => {
        await proc.stop("SIGTERM");
      },
    };
    nodes.push(node);
    return node;
  };

  const sql = async () => {
    const c = await pgClient(url);
    clients.push(c);
    return c;
  };

  const close = async () => {
    await Promise.all(nodes.splice(0).map((n) => n.process.stop("SIGKILL")));
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
    await dropTestDatabase(url).catch(() => {});
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  };

  return { url, env: base, start, cli, cliRaw, project, key, sql, close };
}

/** Starts nodes `names` at the same time (none must print a bootstrap key). */
export function startAll(cluster: Cluster, names: string[], opts: { env?: Record<string, string> } = {}): Promise<Node[]> {
  return Promise.all(names.map((n) => cluster.start(n, { env: opts.env })));
}

/** Waits until no delivery of the shared database is pending, as `node` reports it (crm_outbox_pending). */
export async function untilOutboxDrained(node: Node, timeoutMs = 60_000): Promise<void> {
  await until(async () => (await readMetrics(node.origin)).value("crm_outbox_pending") === 0, {
    timeoutMs,
    intervalMs: 50,
    what: `crm_outbox_pending 0 on node ${node.name}`,
  });
}

/** The sum of `crm_webhook_deliveries_total{outcome}` over the nodes (each counts the attempts it made). */
export async function deliveriesCounted(nodes: Node[], outcome: string): Promise<number> {
  let total = 0;
  for (const n of nodes) total += (await readMetrics(n.origin)).sum("crm_webhook_deliveries_total", { outcome });
  return total;
}
