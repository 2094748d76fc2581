/**
 * Decisions §16: no network I/O while a write transaction is open. The real service
 * (database, group commit, routes, socket) runs in this process with one thing replaced:
 * the DNS resolver, which holds lookups of one host until the test lets them go.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { startServices, type RunningService } from "../../src/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { ALL_SCOPES, makeApi, REPO_ROOT, type Api } from "../helpers/server.ts";

const BUN = join(REPO_ROOT, "node_modules/.bin/bun");
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), "crm-slow-dns-"));
const env = { CRM_DB_PATH: join(dir, "crm.db"), CRM_ENV: "production", CRM_BOOTSTRAP: "false", PORT: "0" };

let service: RunningService;
let lookupStarted!: () => void;
const started = new Promise<void>((r) => (lookupStarted = r));
let releaseLookup!: () => void;
const released = new Promise<void>((r) => (releaseLookup = r));

function cli(args: string[]) {
  const r = Bun.spawnSync([BUN, "src/main.ts", ...args, "--json"], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout.toString().trim().split("\n").pop()!);
}

function projectApi(name: string): Api {
  const project = cli(["project", "create", "--name", name]);
  const { key } = cli(["key", "create", "--project", project.id, "--scopes", ALL_SCOPES.join(",")]);
  return makeApi(`http://127.0.0.1:${service.server.port}/v1`, async () => key);
}

beforeAll(async () => {
  service = await startServices(loadConfig(env), {
    log: silent,
    resolve: async (host) => {
      if (host === "slow.example.com") {
        lookupStarted();
        await released;
      }
      return ["93.184.216.34"];
    },
  });
});

afterAll(async () => {
  releaseLookup();
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Settles with the answer, or with "still waiting" after `ms` (a deadline, not a speed check). */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), ms))]);

test("a webhook create waiting on a slow DNS lookup never holds up another project's writes and reads", async () => {
  const a = projectApi("slow-dns-a");
  const b = projectApi("slow-dns-b");
  let aAnswered = false;
  const slowCreate = a("POST", "/webhooks", { body: { url: "https://slow.example.com/hook", events: ["*"] } }).then((res) => {
    aAnswered = true;
    return res;
  });
  await started;
  const create = await within(b("POST", "/contacts", { body: { firstName: "Unblocked" } }), 10_000);
  expect(create).not.toBe("still waiting");
  expectStatus(create as Awaited<typeof slowCreate>, 201);
  const list = await within(b("GET", "/contacts"), 10_000);
  expect(list).not.toBe("still waiting");
  expect(aAnswered).toBe(false);
  releaseLookup();
  expectStatus(await slowCreate, 201);
}, 30_000);

test("a URL refused by the address policy is still 422 url, decided before the transaction", async () => {
  const a = projectApi("slow-dns-c");
  expectError(await a("POST", "/webhooks", { body: { url: "https://127.0.0.1/hook", events: ["*"] } }), "ERR_FORM_VALIDATION", "url");
  const ok = await a("POST", "/webhooks", { body: { url: "https://hooks.example.com/x", events: ["*"] } });
  expectStatus(ok, 201);
  expectError(await a("PATCH", `/webhooks/${ok.json.id}`, { body: { url: "https://10.0.0.1/x" } }), "ERR_FORM_VALIDATION", "url");
});
