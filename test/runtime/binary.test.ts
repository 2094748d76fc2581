/**
 * The compiled binary (docs/operations.md §1): `npm run build` → dist/crm carries the migrations,
 * serves, runs the admin CLI and the Docker healthcheck, from a folder with no db/ in it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, REPO_ROOT, lastJson, run, startServerProcess, type Started } from "./process.ts";

const BINARY = join(REPO_ROOT, "dist/crm");

/** Newest modification time under the folders the binary is built from. */
function newestSource(): number {
  let newest = 0;
  const visit = (path: string) => {
    const st = statSync(path);
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const part of ["src", "db", "package.json", "package-lock.json"]) visit(join(REPO_ROOT, part));
  return newest;
}

let dir: string;
let server: Started | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  if (!existsSync(BINARY) || statSync(BINARY).mtimeMs < newestSource()) {
    const started = performance.now();
    await run([BUN, "run", "build"]);
    console.log(`built dist/crm in ${Math.round(performance.now() - started)} ms`);
  }
  // A working folder with no db/ and no node_modules: only the binary's embedded files exist.
  dir = mkdtempSync(join(tmpdir(), "crm-binary-test-"));
  env = { ...(process.env as Record<string, string>), CRM_DB_PATH: join(dir, "data/crm.db"), CRM_LOG_LEVEL: "warn" };
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("dist/crm serves from an empty folder, with migrations applied from the binary", async () => {
  server = await startServerProcess([BINARY, "serve"], { cwd: dir, env });
  console.log(`dist/crm time-to-ready: ${server.readyMs.toFixed(0)} ms (spawn → first ready answer from /readyz, fresh database)`);
  expect(existsSync(join(dir, "db"))).toBe(false);
  expect(existsSync(join(dir, "data/crm.db"))).toBe(true);
  const ready = await fetch(`${server.origin}/readyz`);
  expect(ready.status).toBe(200);

  const created = await server.api("POST", "/contacts", { body: { firstName: "Binary", email: "binary@example.com" } });
  expect(created.status).toBe(201);
  const got = await server.api("GET", `/contacts/${created.json.contactId}`);
  expect(got.status).toBe(200);
  expect(got.json.email).toBe("binary@example.com");
});

test("dist/crm serves the reference page and its Scalar bundle from inside the binary (docs/api.md §16.2)", async () => {
  const page = await fetch(`${server!.origin}/docs`);
  expect(page.status).toBe(200);
  const bundle = await fetch(`${server!.origin}/docs/scalar.js`, { headers: { "Accept-Encoding": "identity" } });
  expect(bundle.status).toBe(200);
  const packaged = await Bun.file(join(REPO_ROOT, "node_modules/@scalar/api-reference/dist/browser/standalone.js")).text();
  expect(await bundle.text()).toBe(packaged);
  const document = await (await fetch(`${server!.origin}/v1/openapi.json`)).json();
  expect(document.info.version).toBe((await Bun.file(join(REPO_ROOT, "package.json")).json()).version);
});

test("dist/crm runs the admin CLI against the same database", async () => {
  const { stdout } = await run([BINARY, "project", "list", "--json"], { cwd: dir, env: { ...env, PORT: String(server!.port) } });
  const projects = lastJson(stdout);
  expect(projects.data.map((p: { name: string }) => p.name)).toContain("default");
  expect(projects.data[0].contactCount).toBe(1);
});

test("dist/crm healthcheck exits 0 against the running server and 1 when nothing listens", async () => {
  const ok = await run([BINARY, "healthcheck"], { cwd: dir, env: { ...env, PORT: String(server!.port), HOST: "0.0.0.0" } });
  expect(ok.exitCode).toBe(0);
  await server!.stop();
  const down = await run([BINARY, "healthcheck"], { cwd: dir, env: { ...env, PORT: String(server!.port) }, allowFail: true });
  expect(down.exitCode).toBe(1);
});

test("dist/crm restarts on the existing database and keeps its data (warm time-to-ready)", async () => {
  const key = server!.key;
  const restarted = await startServerProcess([BINARY, "serve"], { cwd: dir, env, expectKey: false });
  server = restarted;
  console.log(`dist/crm time-to-ready: ${restarted.readyMs.toFixed(0)} ms (restart, existing database)`);
  const list = await restarted.api("GET", "/contacts", { key });
  expect(list.status).toBe(200);
  expect(list.json.data.map((c: { firstName: string }) => c.firstName)).toEqual(["Binary"]);
});
