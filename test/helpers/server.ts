/**
 * Black-box harness: starts the real server (`bun src/main.ts serve`) on a fresh
 * database and talks to it over HTTP and through the admin CLI only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkContract } from "./contract.ts";
import { databaseEnv, releaseDatabases } from "./postgres.ts";
import { BUN, lastJson, REPO_ROOT, runCommand, spawnServer, type CommandResult, type SpawnedServer } from "./spawn.ts";

export { freePort, KEY_PATTERN, REPO_ROOT, sleep } from "./spawn.ts";
export const ALL_SCOPES = ["contacts:read", "contacts:write", "interactions:write", "webhooks:manage"];

export interface ApiResponse {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

export interface RequestOptions {
  /** API key. `undefined`: the handle's default (rotating) key; `null`: no Authorization header. */
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as is; no Content-Type is added unless given in `headers`. */
  rawBody?: string | Uint8Array;
  query?: Record<string, string | number | (string | number)[]>;
}

export type Api = (method: string, path: string, opts?: RequestOptions) => Promise<ApiResponse>;

export interface KeyInfo {
  id: string;
  key: string;
}

export interface ProjectOptions {
  name?: string;
  contactQuota?: number;
  rateLimitPerMinute?: number;
  contactCreatesPerHour?: number;
}

export interface ProjectInfo {
  id: string;
  name: string;
  /** An every-scope key of the project. */
  key: string;
  keyId: string;
  /** A request function that uses fresh every-scope keys of this project, rotated before the rate limit bites. */
  api: Api;
}

export interface ServerHandle {
  baseUrl: string; // ends in /v1
  origin: string;
  /** The every-scope key printed on first start. */
  key: string;
  projectId: string;
  env: Record<string, string>;
  process: SpawnedServer;
  stdout: () => string;
  stderr: () => string;
  /** Runs `crm ARGS` on the server's database; its JSON answer (throws unless exit 0). */
  cli: (args: string[]) => Promise<any>;
  /** Runs `crm ARGS` as cli does, with `stdin` on its standard input (a password for `crm admin create`). */
  cliRaw: (args: string[], stdin?: string) => Promise<CommandResult>;
  /** A new key of the default project (or `projectId`); returns the key string. */
  newKey: (scopes: string[], projectId?: string) => Promise<string>;
  createKey: (opts: { scopes: string[]; projectId?: string; expiresAt?: string; name?: string }) => Promise<KeyInfo>;
  newProject: (opts?: ProjectOptions) => Promise<ProjectInfo>;
  /** Requests against the default project with rotating every-scope keys (explicit `key` overrides). */
  api: Api;
  /** A request function with rotating keys of the given scopes/project. */
  client: (opts?: { projectId?: string; scopes?: string[]; rotateEvery?: number }) => Api;
  /** The folder holding the database (on PostgreSQL: the files kept beside it). */
  dir: string;
  /** The server's PostgreSQL database (CRM_TEST_BACKEND=postgres); undefined on SQLite. */
  databaseUrl: string | undefined;
  /** Stops the server (SIGTERM) and removes its folder (and its PostgreSQL database) unless `keepDir`. */
  stop: (keepDir?: boolean) => Promise<void>;
}

let projectCounter = 0;

/** A CLI answer: one JSON object, possibly after a line of text. */
function parseCliOutput(text: string): any {
  try {
    return JSON.parse(text.trim());
  } catch {
    try {
      return lastJson(text);
    } catch {
      return { raw: text.trim() };
    }
  }
}

/** Builds a request function against `baseUrl`. Paths starting with "http" are absolute. */
export function makeApi(baseUrl: string, keyFor: () => Promise<string | null>): Api {
  return async (method, path, opts = {}) => {
    let url = path.startsWith("http") ? path : baseUrl + path;
    if (opts.query) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) {
        if (Array.isArray(v)) for (const item of v) qs.append(k, String(item));
        else qs.append(k, String(v));
      }
      url += (url.includes("?") ? "&" : "?") + qs.toString();
    }
    const headers: Record<string, string> = {};
    const key = opts.key === undefined ? await keyFor() : opts.key;
    if (key !== null) headers["Authorization"] = `Bearer ${key}`;
    let body: string | Uint8Array | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["Content-Type"] = "application/json";
    }
    Object.assign(headers, opts.headers ?? {});
    const res = await fetch(url, { method, headers, body: body as BodyInit | undefined, redirect: "manual" });
    const text = await res.text();
    let json: any = undefined;
    try {
      json = text.length ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    // Every answer is held to the document the server serves (test/helpers/contract.ts, docs/testing.md).
    await checkContract(baseUrl, { method, url, requestHeaders: headers, requestBody: body, status: res.status, responseHeaders: res.headers, responseText: text });
    return { status: res.status, headers: res.headers, json, text };
  };
}

export async function startServer(
  opts: {
    env?: "production" | "sandbox";
    extraEnv?: Record<string, string>;
    /** Reuse a database folder (from `handle.dir`) instead of a fresh one (on PostgreSQL: the same database too). */
    dir?: string;
    /** Whether a bootstrap key must appear on stdout (default true). */
    expectBootstrapKey?: boolean;
  } = {},
): Promise<ServerHandle> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "crm-http-test-"));
  const expectKey = opts.expectBootstrapKey ?? true;
  /** A fresh folder is this call's to remove when the start fails. */
  const discard = async () => {
    if (opts.dir) return;
    rmSync(dir, { recursive: true, force: true });
    await releaseDatabases(dir);
  };
  let serverEnv: Record<string, string>;
  let proc: SpawnedServer;
  try {
    serverEnv = {
      // SQLite: CRM_DB_PATH=dir/crm.db. PostgreSQL: also CRM_DATABASE_URL, the folder's own database.
      ...(await databaseEnv(dir, opts.extraEnv)),
      CRM_ENV: opts.env ?? "production",
      CRM_LOG_LEVEL: "warn",
      ...(opts.extraEnv ?? {}),
    };
    proc = await spawnServer({ env: serverEnv, expectKey });
  } catch (error) {
    await discard();
    throw error;
  }
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...serverEnv, PORT: String(proc.port), HOST: "127.0.0.1" };
  const { origin, baseUrl } = proc;

  const cliRaw = (args: string[], stdin?: string) => runCommand([BUN, "src/main.ts", ...args], { cwd: REPO_ROOT, env, allowFail: true, stdin });
  const cli = async (args: string[]) => {
    const r = await cliRaw(args);
    if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")} failed (${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
    return parseCliOutput(r.stdout);
  };

  let projectId = "";
  try {
    const projects = await cli(["project", "list", "--json"]);
    const defaultProject = (projects.data as any[]).find((p) => p.name === "default");
    if (!defaultProject && expectKey) throw new Error(`no default project: ${JSON.stringify(projects)}`);
    projectId = defaultProject?.id ?? "";
  } catch (error) {
    await proc.stop("SIGKILL");
    await discard();
    throw error;
  }

  const createKey = async (o: { scopes: string[]; projectId?: string; expiresAt?: string; name?: string }): Promise<KeyInfo> => {
    const args = ["key", "create", "--project", o.projectId ?? projectId, "--scopes", o.scopes.join(","), "--json"];
    if (o.expiresAt) args.push("--expires-at", o.expiresAt);
    if (o.name) args.push("--name", o.name);
    const k = await cli(args);
    if (typeof k.key !== "string" || typeof k.id !== "string") throw new Error(`unexpected key create output ${JSON.stringify(k)}`);
    return { id: k.id, key: k.key };
  };
  const newKey = async (scopes: string[], pid?: string) => (await createKey({ scopes, projectId: pid })).key;

  // Each key has its own bucket (docs/api.md §6); a client moves to a fresh key before the
  // 120-request bucket runs dry. Key creation is an async CLI run: the event loop (and any
  // receiver of the test) keeps running meanwhile.
  const client = (o: { projectId?: string; scopes?: string[]; rotateEvery?: number } = {}): Api => {
    let current: Promise<string> | null = null;
    let uses = 0;
    const every = o.rotateEvery ?? 90;
    const keyFor = async () => {
      if (current === null || uses >= every) {
        current = newKey(o.scopes ?? ALL_SCOPES, o.projectId);
        uses = 0;
      }
      uses++;
      return current;
    };
    return makeApi(baseUrl, keyFor);
  };

  const newProject = async (o: ProjectOptions = {}): Promise<ProjectInfo> => {
    const name = o.name ?? `project-${process.pid}-${++projectCounter}`;
    const args = ["project", "create", "--name", name, "--json"];
    if (o.contactQuota !== undefined) args.push("--contact-quota", String(o.contactQuota));
    if (o.rateLimitPerMinute !== undefined) args.push("--rate-limit-per-minute", String(o.rateLimitPerMinute));
    if (o.contactCreatesPerHour !== undefined) args.push("--contact-creates-per-hour", String(o.contactCreatesPerHour));
    const p = await cli(args);
    if (typeof p.id !== "string") throw new Error(`unexpected project create output ${JSON.stringify(p)}`);
    const k = await createKey({ scopes: ALL_SCOPES, projectId: p.id });
    return { id: p.id, name: p.name, key: k.key, keyId: k.id, api: client({ projectId: p.id }) };
  };

  return {
    baseUrl,
    origin,
    key: proc.key,
    projectId,
    env,
    process: proc,
    stdout: proc.stdout,
    stderr: proc.stderr,
    cli,
    cliRaw,
    newKey,
    createKey,
    newProject,
    api: client(),
    client,
    dir,
    databaseUrl: serverEnv.CRM_DATABASE_URL,
    stop: async (keepDir = false) => {
      await proc.stop();
      if (keepDir) return;
      rmSync(dir, { recursive: true, force: true });
      await releaseDatabases(dir);
    },
  };
}

/** Asserts nothing; returns the error envelope fields for comparisons. */
export function envelopeOf(res: ApiResponse) {
  return res.json;
}

/** Walks every page of a list endpoint and returns the items and pages. */
export async function walk(api: Api, path: string, query: Record<string, any> = {}, key?: string) {
  const items: any[] = [];
  const pages: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const q: Record<string, any> = { ...query };
    if (cursor) q.cursor = cursor;
    const res = await api("GET", path, { query: q, key });
    if (res.status !== 200) throw new Error(`GET ${path} page ${i}: ${res.status} ${res.text}`);
    pages.push(res.json);
    items.push(...res.json.data);
    if (!res.json.pagination.hasMore) break;
    cursor = res.json.pagination.nextCursor;
  }
  return { items, pages };
}
