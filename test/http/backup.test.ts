/**
 * `crm backup FILE` (docs/cli.md §6.1): a consistent copy taken while the server runs and
 * writes, on which a second server starts and serves the same contacts. The copy is the
 * SQLite file's: on PostgreSQL (CRM_TEST_BACKEND=postgres) `crm backup` refuses, naming
 * pg_dump (docs/scaling.md §6).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresOnly, sqliteOnly } from "../helpers/postgres.ts";
import { makeApi, startServer, walk, type ServerHandle } from "../helpers/server.ts";
import { BUN, REPO_ROOT, runCommand } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";

let srv: ServerHandle;
let dir: string;

beforeAll(async () => {
  srv = await startServer();
  dir = mkdtempSync(join(tmpdir(), "crm-backup-test-"));
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test.skipIf(sqliteOnly)("a backup taken under writes is a consistent copy a second server serves", async () => {
  const p = await srv.newProject({ contactCreatesPerHour: 100_000, rateLimitPerMinute: 100_000 });
  for (let i = 0; i < 20; i++) expect((await p.api("POST", "/contacts", { body: { firstName: `Before${i}` } })).status).toBe(201);

  // Keep writing through the API while the backup runs.
  let writing = true;
  let written = 0;
  const writer = (async () => {
    while (writing) {
      const res = await p.api("POST", "/contacts", { body: { firstName: `During${written}`, tags: ["busy"] } });
      expect(res.status).toBe(201);
      written++;
    }
  })();
  // The backup starts once the writer is under way (its first write is acknowledged).
  await until(() => written > 0, { what: "the writer's first contact" });
  const file = join(dir, "copy.db");
  const backup = await runCommand([BUN, "src/main.ts", "backup", file, "--json"], { cwd: REPO_ROOT, env: srv.env, allowFail: true });
  writing = false;
  await writer;
  expect(backup.exitCode, backup.stderr).toBe(0);
  const out = JSON.parse(backup.stdout);
  expect(out.path).toBe(file);
  expect(out.bytes).toBe(statSync(file).size);

  // A second server on the copy: the bootstrap key and the project's contacts came along.
  const dir2 = mkdtempSync(join(tmpdir(), "crm-backup-restore-"));
  copyFileSync(file, join(dir2, "crm.db"));
  // The secrets in the copy open only with the key that sealed them (docs/webhooks.md §2, docs/scaling.md §6).
  copyFileSync(join(srv.dir, "secret.key"), join(dir2, "secret.key"));
  const second = await startServer({ dir: dir2, expectBootstrapKey: false });
  try {
    const key = (await srv.createKey({ scopes: ["contacts:read"], projectId: p.id })).key; // created after the copy: unknown there
    expect((await makeApi(second.baseUrl, async () => key)("GET", "/contacts")).status).toBe(401);
    const keyBefore = p.key;
    const restored = (await walk(makeApi(second.baseUrl, async () => keyBefore), "/contacts", { limit: 200 })).items;
    const live = (await walk(p.api, "/contacts", { limit: 200 })).items;
    const numbers = restored.map((c: any) => Number(c.contactId.slice(3))).sort((a: number, b: number) => a - b);
    // A snapshot: every contact up to some point (after the 20 and the writer's first, before
    // the writer's last), nothing after it, each exactly as the live server has it.
    expect(numbers.length).toBeGreaterThanOrEqual(21);
    expect(numbers.length).toBeLessThanOrEqual(20 + written);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
    const liveById = new Map(live.map((c: any) => [c.contactId, c]));
    for (const c of restored) expect(c).toEqual(liveById.get(c.contactId));
  } finally {
    await second.stop();
  }
}, 120_000);

test.skipIf(sqliteOnly)("backup refuses to overwrite an existing file", async () => {
  const file = join(dir, "exists.db");
  writeFileSync(file, "keep me");
  const r = await srv.cliRaw(["backup", file]);
  expect(r.exitCode).toBe(2);
  expect(r.stderr).toContain("refusing to overwrite");
  expect(readFileSync(file, "utf8")).toBe("keep me");
  const human = await srv.cliRaw(["backup", join(dir, "second.db")]);
  expect(human.exitCode).toBe(0);
  expect(human.stdout).toMatch(/^Backed up the database to .*second\.db \([\d,]+ bytes/);
});

test.skipIf(postgresOnly)("on PostgreSQL crm backup refuses with exit 2 and a message naming pg_dump, and writes nothing", async () => {
  const file = join(dir, "postgres.db");
  const r = await srv.cliRaw(["backup", file]);
  expect(r.exitCode).toBe(2);
  expect(r.stderr).toContain("pg_dump");
  expect(existsSync(file)).toBe(false);
});
