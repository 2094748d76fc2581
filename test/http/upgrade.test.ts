/**
 * Upgrades (decisions: schema upgrades): the real server started on a database an earlier
 * build made (the released migrations, or the edited ones main had before checksums), with
 * Litestream's tables in it, migrates it and serves its data: search and tag filters find
 * the old contacts, the delivery left in flight is sent and its old attempts are still
 * listed; the schema ends as a fresh one. A database it must not touch stops the start with
 * one line. The old databases are SQLite files (skipped under CRM_TEST_BACKEND=postgres);
 * on PostgreSQL a database a newer version migrated stops the start the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/storage/sqlite/migrate.ts";
import { runtime } from "../../src/runtime/index.ts";
import { SecretBox } from "../../src/secrets/secret-box.ts";
import { addLitestreamTables, HISTORIES, migrateLikeBefore, SAMPLE, schemaOf, seedOldShape, type History } from "../fixtures/migrations/history.ts";
import { postgresOnly, releaseDatabases, sqliteOnly } from "../helpers/postgres.ts";
import { parseServiceSignature, serviceHmacHex, startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { BUN, runCommand } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function freshSchema() {
  const raw = runtime.openSqlite(":memory:");
  migrate(raw);
  const schema = schemaOf(raw);
  raw.close();
  return schema;
}

/** A database folder as an earlier build left it, with the server key beside it. */
function oldDatabase(history: History, webhookUrl: string, secret: string): string {
  const dir = mkdtempSync(join(tmpdir(), "crm-upgrade-test-"));
  dirs.push(dir);
  const key = randomBytes(32);
  writeFileSync(join(dir, "secret.key"), key.toString("base64"), { mode: 0o600 });
  const raw = runtime.openSqlite(join(dir, "crm.db"));
  raw.exec("PRAGMA journal_mode = WAL");
  raw.exec("PRAGMA foreign_keys = ON");
  migrateLikeBefore(raw, history);
  addLitestreamTables(raw);
  seedOldShape(raw, { webhookUrl, sealedSecret: new SecretBox(key).seal(secret) });
  raw.close();
  return dir;
}

describe.skipIf(sqliteOnly).each([
  ["released", HISTORIES.released],
  ["edited (main before checksums)", HISTORIES.editedMain],
] as const)("the server on a database made by the %s migrations", (_label, history) => {
  // Tests that only read share one server; one that writes (or stops its server) has its
  // own, on its own copy of the old database, so every test runs alone and in any order.
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  let receiver: Receiver;
  let srv: ServerHandle;
  const own: ServerHandle[] = [];
  /** A server on a fresh copy of the old database; its stuck delivery goes nowhere (port 9). */
  const ownServer = async () => {
    const s = await startServer({ dir: oldDatabase(history, "http://127.0.0.1:9/hook", secret), env: "sandbox", expectBootstrapKey: false });
    own.push(s);
    return s;
  };
  beforeAll(async () => {
    receiver = await startReceiver();
    srv = await startServer({
      dir: oldDatabase(history, receiver.url, secret),
      env: "sandbox",
      expectBootstrapKey: false,
      extraEnv: { CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s" },
    });
  }, 60_000);
  afterAll(async () => {
    for (const s of [srv, ...own]) await s?.stop(true);
    await receiver?.stop();
  }, 60_000);
  const names = (res: { json: any }) => res.json.data.map((c: { contactId: string }) => c.contactId);

  test("starts on it, ready, as its own default project", async () => {
    expect(srv.projectId).toBe(SAMPLE.projectId);
    expect((await fetch(`${srv.origin}/readyz`)).status).toBe(200);
  });

  test("search finds the old contacts by every kind of term", async () => {
    for (const [search, expected] of [
      ["lov", ["CR-1"]],
      ["Ada@Ex", ["CR-1"]],
      ["ada mary", ["CR-1"]],
      ["cr-2", ["CR-2"]],
      ["élo", ["CR-2"]],
      ["日本語", ["CR-2"]],
      ["😀b", ["CR-2"]],
      ["l", ["CR-1"]],
    ] as const) {
      const res = await srv.api("GET", "/contacts", { query: { search } });
      expect({ search, status: res.status, found: names(res) }).toEqual({ search, status: 200, found: [...expected] });
    }
  });

  test("tag filters list them newest first, and each contact shows its tags", async () => {
    expect(names(await srv.api("GET", "/contacts", { query: { tag: "vip" } }))).toEqual(["CR-2", "CR-1"]);
    expect(names(await srv.api("GET", "/contacts", { query: { tag: ["vip", "early adopter"] } }))).toEqual(["CR-1"]);
    const ada = await srv.api("GET", "/contacts/CR-1");
    expect(ada.status).toBe(200);
    expect(ada.json.tags.map((t: { name: string }) => t.name).sort()).toEqual(["Early Adopter", "vip"]);
  });

  test("a change written by today's code keeps search and tag order in step", async () => {
    const srv = await ownServer();
    const patched = await srv.api("PATCH", "/contacts/CR-1", { body: { lastName: "Byron" } });
    expect(patched.status).toBe(200);
    expect(names(await srv.api("GET", "/contacts", { query: { search: "byr" } }))).toEqual(["CR-1"]);
    expect(names(await srv.api("GET", "/contacts", { query: { search: "lovelace" } }))).toEqual([]);
    expect(names(await srv.api("GET", "/contacts", { query: { tag: "vip" } }))).toEqual(["CR-1", "CR-2"]);
  });

  test("old contacts find their duplicates: by email at once, by name once the backfill job keyed them (docs/api.md §20.1)", async () => {
    const srv = await ownServer();
    const byEmail = await srv.api("POST", "/contacts", { body: { firstName: "Someone", email: "ADA@example.com" } });
    const byName = await srv.api("POST", "/contacts", { body: { firstName: "ada mary", lastName: "LOVELACE", email: "countess@example.com" } });
    expect([byEmail.status, byName.status]).toEqual([201, 201]);
    const groups = async () => (await srv.api("GET", "/duplicates")).json.data as Array<{ reasons: string[]; contactIds: string[] }>;
    expect((await groups()).find((g) => g.reasons.includes("email"))?.contactIds.sort()).toEqual(["CR-1", byEmail.json.contactId].sort());
    // The job runs every 10 s; it keys CR-1's name, which CR-… created now shares (same domain).
    await until(async () => (await groups()).some((g) => g.reasons.includes("name")), { timeoutMs: 25_000 });
    expect((await groups()).find((g) => g.reasons.includes("name"))?.contactIds.sort()).toEqual(["CR-1", byName.json.contactId].sort());
  }, 40_000);

  test("the delivery left unsent (in flight where the schema allowed it) is sent, signed with its stored secret; its old attempts are still listed", async () => {
    const ofStuck = (r: { headers: Record<string, string> }) => r.headers["x-service-delivery"] === SAMPLE.stuckDelivery;
    const sent = (await receiver.waitUntil((reqs) => reqs.some(ofStuck), 10_000)).find(ofStuck)!;
    const sig = parseServiceSignature(sent.headers["x-service-signature"]);
    expect(sig.v1).toContain(serviceHmacHex(secret, sig.t, sent.raw));
    expect(sent.json.id).toBe(SAMPLE.eventId);
    // The succeeded delivery is not sent again.
    expect(receiver.requests.filter((r) => r.headers["x-service-delivery"] === SAMPLE.doneDelivery)).toEqual([]);

    // The receiver has the request; its attempt is recorded once the answer is back.
    const attempts: any[] = await until(
      async () => {
        const res = await srv.api("GET", `/webhooks/${SAMPLE.webhookId}/attempts`);
        expect(res.status).toBe(200);
        return res.json.data.length === 4 ? res.json.data : undefined;
      },
      { timeoutMs: 10_000, what: "the fourth recorded attempt" },
    );
    expect(attempts.map((a) => [a.deliveryId, a.attempt, a.statusCode]).sort()).toEqual(
      [
        [SAMPLE.doneDelivery, 1, 200],
        [SAMPLE.stuckDelivery, 1, 500],
        [SAMPLE.stuckDelivery, 2, 500],
        [SAMPLE.stuckDelivery, 3, 200],
      ].sort(),
    );
  });

  test("after a clean stop the schema is a fresh database's, and Litestream's tables are untouched", async () => {
    const srv = await ownServer();
    expect((await fetch(`${srv.origin}/readyz`)).status).toBe(200);
    await srv.stop(true);
    const raw = runtime.openSqlite(join(srv.dir, "crm.db"));
    try {
      expect(schemaOf(raw)).toEqual(freshSchema());
      expect(raw.all("SELECT id, seq FROM _litestream_seq")).toEqual([{ id: 1, seq: 42 }]);
      expect(raw.all("SELECT count(*) AS n FROM _litestream_lock")).toEqual([{ n: 0 }]);
      expect(raw.all("SELECT count(*) AS n FROM schema_migrations WHERE checksum IS NULL")).toEqual([{ n: 0 }]);
      expect(raw.all("PRAGMA foreign_key_check")).toEqual([]);
    } finally {
      raw.close();
    }
  });
});

describe.skipIf(sqliteOnly)("a database this build must not change stops the start with one line", () => {
  async function serveOn(prepare: (raw: ReturnType<typeof runtime.openSqlite>) => void) {
    const dir = mkdtempSync(join(tmpdir(), "crm-upgrade-test-"));
    dirs.push(dir);
    const raw = runtime.openSqlite(join(dir, "crm.db"));
    migrate(raw);
    prepare(raw);
    const before = schemaOf(raw);
    raw.close();
    const run = await runCommand([BUN, "src/main.ts", "serve"], {
      env: { ...(process.env as Record<string, string>), CRM_DB_PATH: join(dir, "crm.db"), PORT: "0", CRM_LOG_LEVEL: "warn" },
      allowFail: true,
      timeoutMs: 20_000,
    });
    const after = runtime.openSqlite(join(dir, "crm.db"));
    const unchanged = JSON.stringify(schemaOf(after)) === JSON.stringify(before);
    after.close();
    return { exitCode: run.exitCode, stderr: run.stderr.trim(), stdout: run.stdout, unchanged };
  }

  test("migrated by a newer version", async () => {
    const r = await serveOn((raw) =>
      raw.all("INSERT INTO schema_migrations (name, applied_at, checksum) VALUES ('9999_newer', '2030-01-01T00:00:00.000Z', 'abc') RETURNING name"),
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr.split("\n")).toHaveLength(1);
    expect(r.stderr).toStartWith("crm: this database was migrated by a newer version");
    expect(r.stderr).toContain("9999_newer");
    expect(r.stdout).not.toContain("listening");
    expect(r.unchanged).toBe(true);
  });

  test("an applied migration whose file differs", async () => {
    const r = await serveOn((raw) => raw.all("UPDATE schema_migrations SET checksum = 'edited' WHERE name = '0002_webhooks' RETURNING name"));
    expect(r.exitCode).toBe(2);
    expect(r.stderr.split("\n")).toHaveLength(1);
    expect(r.stderr).toStartWith("crm: migration 0002_webhooks differs");
    expect(r.stderr).toEndWith("migrations are frozen; add a new file");
    expect(r.unchanged).toBe(true);
  });
});

describe.skipIf(postgresOnly)("PostgreSQL: a database this build must not change stops the start with one line", () => {
  test("migrated by a newer version", async () => {
    const first = await startServer();
    await first.stop(true);
    const db = await openSideDatabase(first.env);
    const schema = () =>
      db.all("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position");
    try {
      await db.run("INSERT INTO schema_migrations (name, applied_at, checksum) VALUES ('9999_newer', '2030-01-01T00:00:00.000Z', 'abc')");
      const before = await schema();
      const run = await runCommand([BUN, "src/main.ts", "serve"], { env: { ...first.env, PORT: "0" }, allowFail: true, timeoutMs: 20_000 });
      expect(run.exitCode).toBe(2);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toStartWith("crm: this database was migrated by a newer version");
      expect(run.stderr).toContain("9999_newer");
      expect(run.stdout).not.toContain("listening");
      expect(await schema()).toEqual(before);
    } finally {
      await db.close();
      rmSync(first.dir, { recursive: true, force: true });
      await releaseDatabases(first.dir);
    }
  });
});
