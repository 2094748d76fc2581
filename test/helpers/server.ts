/**
 * Black-box harness: starts the real server (`bun src/main.ts serve`) on a fresh
 * database and talks to it over HTTP and through the admin CLI only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
const BUN = join(REPO_ROOT, "node_modules/.bin/bun");
export const ALL_SCOPES = ["contacts:read", "contacts:write", "interactions:write", "webhooks:manage"];
export const KEY_PATTERN = /crm_(live|test)_[A-Za-z0-9]{46}/;

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
  stdout: () => string;
  stderr: () => string;
  cli: (args: string[]) => any;
  cliRaw: (args: string[]) => { exitCode: number; stdout: string; stderr: string };
  /** A new key of the default project (or `projectId`); returns the key string. */
  newKey: (scopes: string[], projectId?: string) => Promise<string>;
  createKey: (opts: { scopes: string[]; projectId?: string; expiresAt?: string; name?: string }) => KeyInfo;
  newProject: (opts?: ProjectOptions) => Promise<ProjectInfo>;
  /** Requests against the default project with rotating every-scope keys (explicit `key` overrides). */
  api: Api;
  /** A request function with rotating keys of the given scopes/project. */
  client: (opts?: { projectId?: string; scopes?: string[]; rotateEvery?: number }) => Api;
  /** The folder holding the database. */
  dir: string;
  /** Stops the server (SIGTERM) and removes its folder unless `keepDir`. */
  stop: (keepDir?: boolean) => Promise<void>;
}

let projectCounter = 0;

export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port;
  s.stop(true);
  return port!;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server sees reference data, revocations and project settings changed by the CLI within 2 s. */
export const settle = () => sleep(2200);

function collect(stream: ReadableStream<Uint8Array> | undefined, sink: { text: string }) {
  if (!stream) return;
  const decoder = new TextDecoder();
  (async () => {
    try {
      for await (const chunk of stream as any) sink.text += decoder.decode(chunk, { stream: true });
    } catch {
      /* process ended */
    }
  })();
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
    const res = await fetch(url, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let json: any = undefined;
    try {
      json = text.length ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
}

export async function startServer(
  opts: {
    env?: "production" | "sandbox";
    extraEnv?: Record<string, string>;
    /** Reuse a database folder (from `handle.dir`) instead of a fresh one. */
    dir?: string;
    /** Whether a bootstrap key must appear on stdout (default true). */
    expectBootstrapKey?: boolean;
  } = {},
): Promise<ServerHandle> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "crm-http-test-"));
  const expectKey = opts.expectBootstrapKey ?? true;
  const port = freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: "127.0.0.1",
    CRM_DB_PATH: join(dir, "crm.db"),
    CRM_ENV: opts.env ?? "production",
    CRM_LOG_LEVEL: "warn",
    ...(opts.extraEnv ?? {}),
  };
  const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn([BUN, "src/main.ts", "serve"], {
    cwd: REPO_ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = { text: "" };
  const err = { text: "" };
  collect(proc.stdout, out);
  collect(proc.stderr, err);
  let exited = false;
  proc.exited.then(() => (exited = true));

  const origin = `http://127.0.0.1:${port}`;
  const baseUrl = `${origin}/v1`;
  const deadline = Date.now() + 15_000;
  let healthy = false;
  while (Date.now() < deadline && !exited) {
    try {
      const res = await fetch(`${origin}/healthz`);
      await res.arrayBuffer();
      if (res.status === 200) {
        healthy = true;
        break;
      }
    } catch {
      /* not yet listening */
    }
    await sleep(50);
  }
  if (!healthy) {
    proc.kill();
    throw new Error(`server did not become healthy (exited=${exited})\nstdout:\n${out.text}\nstderr:\n${err.text}`);
  }
  // The bootstrap key is printed on first start; give stdout a moment to flush.
  let match = out.text.match(KEY_PATTERN);
  for (let i = 0; expectKey && !match && i < 40; i++) {
    await sleep(50);
    match = out.text.match(KEY_PATTERN);
  }
  if (!match && expectKey) {
    proc.kill();
    throw new Error(`no bootstrap key on stdout\nstdout:\n${out.text}\nstderr:\n${err.text}`);
  }
  const bootstrapKey = match ? match[0] : "";

  const cliRaw = (args: string[]) => {
    const r = Bun.spawnSync([BUN, "src/main.ts", ...args], { cwd: REPO_ROOT, env, stdout: "pipe", stderr: "pipe" });
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };
  const cli = (args: string[]) => {
    const r = cliRaw(args);
    if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")} failed (${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
    const text = r.stdout.trim();
    try {
      return JSON.parse(text);
    } catch {
      // Some commands print a line of text before the JSON object; take the last JSON line.
      const lines = text.split("\n").reverse();
      for (const line of lines) {
        try {
          return JSON.parse(line);
        } catch {
          /* keep looking */
        }
      }
      return { raw: text };
    }
  };

  const projects = cli(["project", "list", "--json"]);
  const defaultProject = (projects.data as any[]).find((p) => p.name === "default");
  if (!defaultProject && expectKey) throw new Error(`no default project: ${JSON.stringify(projects)}`);
  const projectId: string = defaultProject?.id ?? "";

  const createKey = (o: { scopes: string[]; projectId?: string; expiresAt?: string; name?: string }): KeyInfo => {
    const args = ["key", "create", "--project", o.projectId ?? projectId, "--scopes", o.scopes.join(","), "--json"];
    if (o.expiresAt) args.push("--expires-at", o.expiresAt);
    if (o.name) args.push("--name", o.name);
    const k = cli(args);
    if (typeof k.key !== "string" || typeof k.id !== "string") throw new Error(`unexpected key create output ${JSON.stringify(k)}`);
    return { id: k.id, key: k.key };
  };
  const newKey = async (scopes: string[], pid?: string) => createKey({ scopes, projectId: pid }).key;

  const client = (o: { projectId?: string; scopes?: string[]; rotateEvery?: number } = {}): Api => {
    let current: string | null = null;
    let uses = 0;
    const every = o.rotateEvery ?? 90;
    const keyFor = async () => {
      if (current === null || uses >= every) {
        current = createKey({ scopes: o.scopes ?? ALL_SCOPES, projectId: o.projectId }).key;
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
    const p = cli(args);
    if (typeof p.id !== "string") throw new Error(`unexpected project create output ${JSON.stringify(p)}`);
    const k = createKey({ scopes: ALL_SCOPES, projectId: p.id });
    return { id: p.id, name: p.name, key: k.key, keyId: k.id, api: client({ projectId: p.id }) };
  };

  return {
    baseUrl,
    origin,
    key: bootstrapKey,
    projectId,
    env,
    stdout: () => out.text,
    stderr: () => err.text,
    cli,
    cliRaw,
    newKey,
    createKey,
    newProject,
    api: client(),
    client,
    dir,
    stop: async (keepDir = false) => {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await proc.exited;
      clearTimeout(t);
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
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
