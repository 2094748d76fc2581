/**
 * `crm copy-to-postgres URL` (docs/scaling.md §6): a SQLite server's whole database, filled
 * through the API, is copied into an empty PostgreSQL database; a PostgreSQL node started
 * on it with the same CRM_SECRET_KEY answers as the SQLite server did (same contacts, logs,
 * keys, cursors, idempotent replays) and delivers the deliveries left pending, signed with
 * the original webhook secret. Also the refusals: a non-empty target, a wrong URL, a
 * missing CRM_DB_PATH, a node with another key; and a failed copy leaves nothing behind.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, signedInAdmin } from "../helpers/admin.ts";
import { expectStatus } from "../helpers/expect.ts";
import { createTestDatabase, pgClient } from "../helpers/postgres.ts";
import { serviceSignatureIndex, standardSignatureIndex, startReceiver, type Receiver } from "../helpers/receiver.ts";
import { ALL_SCOPES, startServer, walk, type ServerHandle } from "../helpers/server.ts";
import { BUN, freePort, REPO_ROOT, runCommand } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";

/** Every table of the data, as the brief of docs/scaling.md §6 lists them (schema_migrations is bookkeeping). */
const TABLES = [
  "settings", "projects", "api_keys", "contact_types", "interaction_types", "custom_fields", "tags", "contacts",
  "contact_tags", "contact_search_terms", "search_typo_keys", "contact_unique_values", "contact_name_keys", "duplicate_groups", "merges", "interaction_logs", "events", "idempotency_records", "webhooks",
  "deliveries", "delivery_attempts", "forms", "form_submissions", "admins", "admin_imports", "erased_contacts", "changes",
  "change_counters",
];
const SECRET_KEY = Buffer.alloc(32, 7).toString("base64");
const OTHER_KEY = Buffer.alloc(32, 9).toString("base64");
/** Retries every second, many times: deliveries failing with 500 stay pending, never exhausted. */
const SCHEDULE = Array(40).fill("1s").join(",");
const WAIT_MS = 20_000;

let dir: string;
let dbPath: string;
let sqliteNode: ServerHandle;
let pgNode: ServerHandle | undefined;
let rx: Receiver;
let url: string;

/** What the SQLite server answered before the copy, to compare with the PostgreSQL node's answers. */
const before = {
  cliKey: "",
  revokedKey: "",
  bootstrapKey: "",
  hookSecret: "",
  contacts: [] as { contactId: string; text: string }[],
  logsText: "",
  logId: "",
  logContact: "",
  cursor: "",
  page2Text: "",
  idem: { key: "", body: {} as Record<string, unknown>, text: "" },
  lastNumber: 0,
  maxId: 0,
  pendingEvents: [] as string[],
  admin: { email: "", password: "" },
  expected: {} as Record<string, number>,
  rows: {} as Record<string, unknown[]>,
};

const copy = (target: string, extraArgs: string[] = [], env: Record<string, string> = {}) =>
  runCommand([BUN, "src/main.ts", "copy-to-postgres", target, ...extraArgs], {
    cwd: REPO_ROOT,
    env: { ...(process.env as Record<string, string>), CRM_DB_PATH: dbPath, CRM_SECRET_KEY: SECRET_KEY, CRM_LOG_LEVEL: "warn", ...env },
    allowFail: true,
    timeoutMs: 120_000,
  });

const oneLine = (text: string) => expect(text.trim().split("\n")).toHaveLength(1);

/** The columns of each table (PRAGMA table_info) and its primary key's, in key order. */
function shapes(): Record<string, { columns: string[]; key: string[] }> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const out: Record<string, { columns: string[]; key: string[] }> = {};
    for (const table of TABLES) {
      const info = db.query(`PRAGMA table_info(${table})`).all() as { name: string; pk: number }[];
      const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
      out[table] = { columns: info.map((c) => `"${c.name}"`), key: key.map((c) => `"${c.name}"`) };
    }
    return out;
  } finally {
    db.close();
  }
}

/** Every row of every table, in primary-key order, read straight from the SQLite file. */
function sqliteRows(): Record<string, unknown[]> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows: Record<string, unknown[]> = {};
    for (const [table, { columns, key }] of Object.entries(shapes())) rows[table] = db.query(`SELECT ${columns.join(", ")} FROM ${table} ORDER BY ${key.join(", ")}`).all();
    return rows;
  } finally {
    db.close();
  }
}

/** The same on PostgreSQL: the SQLite columns only (PostgreSQL-only ones left out), in the same order. */
async function postgresRows(target: string): Promise<Record<string, unknown[]>> {
  const client = await pgClient(target);
  try {
    const rows: Record<string, unknown[]> = {};
    for (const [table, { columns, key }] of Object.entries(shapes())) rows[table] = (await client.query(`SELECT ${columns.join(", ")} FROM ${table} ORDER BY ${key.join(", ")}`)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

async function countsOn(target: string): Promise<Record<string, number>> {
  const client = await pgClient(target);
  try {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = (await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n;
    return counts;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "crm-copy-test-"));
  dbPath = join(dir, "crm.db");
  [rx, url] = await Promise.all([startReceiver({ status: 500 }), createTestDatabase()]);
  sqliteNode = await startServer({
    env: "sandbox",
    dir,
    // CRM_DB_PATH given: this node is SQLite whatever backend the suite runs on.
    extraEnv: { CRM_DB_PATH: dbPath, CRM_SECRET_KEY: SECRET_KEY, CRM_WEBHOOK_RETRY_SCHEDULE: SCHEDULE },
  });
  const srv = sqliteNode;
  before.bootstrapKey = srv.key;
  before.cliKey = (await srv.createKey({ scopes: ALL_SCOPES, name: "made by the CLI" })).key;
  const revoked = await srv.createKey({ scopes: ALL_SCOPES, name: "revoked" });
  await srv.cli(["key", "revoke", revoked.id, "--json"]);
  before.revokedKey = revoked.key;
  const api = (method: string, path: string, opts: Parameters<typeof srv.api>[2] = {}) => srv.api(method, path, { key: before.cliKey, ...opts });

  const hook = await api("POST", "/webhooks", { body: { url: rx.url, events: ["*"] } });
  expectStatus(hook, 201);
  before.hookSecret = hook.json.secret;

  const colour = (await srv.cli(["custom-field", "create", "--project", srv.projectId, "--title", "Colour", "--type", "select", "--options", "red,blue", "--json"])).id;
  const externalId = (await srv.cli(["custom-field", "create", "--project", srv.projectId, "--title", "External ID", "--type", "text", "--unique", "--json"])).id;
  const people = [
    { firstName: "Marigold", lastName: "Quillfeather", email: "marigold@example.com", tags: ["vip", "north"], customFields: { [colour]: "red", [externalId]: "ext-1" } },
    { firstName: "Bartholomew", lastName: "Stone", phone: "+1 415 555 0101", tags: ["north"], customFields: { [colour]: "blue" } },
    { firstName: "Céline", lastName: "Ødegård", notes: "unicode survives", tags: ["Ünïcode"] },
    { businessName: "Acme Anvils", website: "https://acme.example", address: { city: "Springfield", country: "US" } },
  ];
  for (const body of people) expectStatus(await api("POST", "/contacts", { body }), 201);
  before.idem = { key: "copy-idem-1", body: { firstName: "Idem", email: "idem@example.com" }, text: "" };
  const idem = await api("POST", "/contacts", { body: before.idem.body, headers: { "Idempotency-Key": before.idem.key } });
  expectStatus(idem, 201);
  before.idem.text = idem.text;

  const first = (await api("GET", "/contacts", { query: { search: "marigold" } })).json.data[0];
  before.logContact = first.contactId;
  for (const [i, uid] of ["msg-1", "msg-2", null].entries()) {
    const res = await api("POST", `/contacts/${first.contactId}/interactions`, { body: { type: "note", note: `note ${i}`, ...(uid ? { uniqueIdentifier: uid } : {}) } });
    expectStatus(res, 201);
    if (uid === "msg-1") before.logId = res.json.id;
  }
  before.logsText = (await api("GET", `/contacts/${first.contactId}/interactions`)).text;

  // Duplicates and a merge move too (docs/api.md §20): name keys, a group, the merge and its merged-away row.
  for (let i = 0; i < 2; i++) expectStatus(await api("POST", "/contacts", { body: { firstName: "Twin", lastName: "Copy", email: "twin@example.com" } }), 201);
  const keep = await api("POST", "/contacts", { body: { firstName: "Merged", email: "merged@example.com" } });
  const fold = await api("POST", "/contacts", { body: { firstName: "Merged", email: "MERGED@example.com" } });
  expectStatus(await api("POST", `/contacts/${keep.json.contactId}/merge`, { body: { contactIds: [fold.json.contactId] } }), 200);

  const form = await srv.cli(["form", "create", "--project", srv.projectId, "--name", "Contact us", "--fields", "email,firstName", "--json"]);
  expectStatus(await srv.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email: "form@example.com", firstName: "Formy" } }), 201);

  const other = await srv.newProject();
  expectStatus(await other.api("POST", "/contacts", { body: { firstName: "Elsewhere", tags: ["vip"] } }), 201);

  // The admin console's accounts and import history move too (its sessions do not: docs/admin.md §2).
  const admin = await signedInAdmin(srv.origin, srv.env);
  before.admin = admin.account;
  const importPath = `/admin/projects/${other.id}/import`;
  await admin.client.get(importPath);
  const upload = new FormData();
  upload.append("_csrf", admin.client.csrf);
  upload.append("file", new File(["firstName\nImported\n"], "people.csv", { type: "text/csv" }));
  const posted = await admin.client.request("POST", importPath, { body: upload, headers: { Origin: srv.origin } });
  expect(posted.status).toBe(303);
  // The upload shows its matched columns first (docs/import-export.md §1); starting it makes the import.
  expect((await admin.client.get(posted.location!)).status).toBe(200);
  const started = await admin.client.post(`${posted.location}/start`);
  expect(started.status).toBe(303);
  await until(async () => !/http-equiv="refresh"/.test((await admin.client.get(started.location!)).text), { timeoutMs: 30_000, what: "the console import" });

  // An erased contact's number moves too: it is never given again (docs/import-export.md §3).
  const doomed = await other.api("POST", "/contacts", { body: { firstName: "Forgotten" } });
  expectStatus(doomed, 201);
  expect((await srv.cliRaw(["contact", "erase", "--project", other.id, doomed.json.contactId])).exitCode).toBe(0);

  const { items } = await walk(api, "/contacts", { limit: 200 });
  for (const c of items) before.contacts.push({ contactId: c.contactId, text: (await api("GET", `/contacts/${c.contactId}`)).text });
  before.lastNumber = Math.max(...items.map((c: any) => Number(c.contactId.slice(3))));
  const page1 = await api("GET", "/contacts", { query: { limit: 2 } });
  before.cursor = page1.json.pagination.nextCursor;
  before.page2Text = (await api("GET", "/contacts", { query: { limit: 2, cursor: before.cursor } })).text;

  // The receiver answers 500: the deliveries are tried, fail, and stay pending.
  await rx.waitFor(3, WAIT_MS);
  await sqliteNode.stop(true);

  before.rows = sqliteRows();
  for (const table of TABLES) before.expected[table] = before.rows[table]!.length;
  before.pendingEvents = (before.rows.deliveries as any[]).filter((d) => d.status === "pending").map((d) => d.event_id);
  before.maxId = Math.max(...(before.rows.contacts as any[]).map((c) => c.id));
}, 120_000);

afterAll(async () => {
  await pgNode?.stop();
  await rx?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe("a file replicated by Litestream", () => {
  test("its _litestream_* bookkeeping tables are not data: the copy ignores them and succeeds", async () => {
    const litestreamDir = mkdtempSync(join(tmpdir(), "crm-copy-litestream-"));
    try {
      const path = join(litestreamDir, "crm.db");
      const env = { CRM_DB_PATH: path };
      expect((await copy(url, [], env)).exitCode).toBe(2); // no file yet
      const made = await runCommand([BUN, "src/main.ts", "project", "create", "--name", "replicated", "--json"], {
        cwd: REPO_ROOT,
        env: { ...(process.env as Record<string, string>), ...env },
      });
      expect(made.exitCode).toBe(0);
      const file = new Database(path);
      file.exec("CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER); CREATE TABLE _litestream_lock (id INTEGER)");
      file.close();
      const target = await createTestDatabase();
      const r = await copy(target, ["--json"], env);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).tables.projects).toBe(1);
    } finally {
      rmSync(litestreamDir, { recursive: true, force: true });
    }
  });
});

describe("refusals before anything is copied", () => {
  test("a CRM_DB_PATH that does not exist is refused with exit 2, and no file is made", async () => {
    const missing = join(dir, "nowhere", "crm.db");
    const r = await copy(url, [], { CRM_DB_PATH: missing });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("no SQLite database at");
    oneLine(r.stderr);
    expect(existsSync(missing)).toBe(false);
  });

  test.each([
    ["a MySQL URL", "mysql://u:p@127.0.0.1:3306/crm"],
    ["an HTTP URL", "http://127.0.0.1:5432/crm"],
    ["no URL at all", ""],
  ])("%s is refused with exit 2", async (_, target) => {
    const r = await copy(target);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^crm: .*(postgres:\/\/|URL)/);
    oneLine(r.stderr);
  });

  test("the data was made: every table has rows, some deliveries are pending and some attempts recorded", () => {
    for (const table of TABLES) expect(before.expected[table], table).toBeGreaterThan(0);
    expect(before.pendingEvents.length).toBeGreaterThan(0);
  });
});

describe("the copy", () => {
  let answer: any;

  test("copies every table into the empty database (CRM_DATABASE_URL set too: the source is still the SQLite file)", async () => {
    const r = await copy(url, ["--json"], { CRM_DATABASE_URL: url });
    expect(r.exitCode, r.stderr).toBe(0);
    answer = JSON.parse(r.stdout);
    expect(Object.keys(answer).sort()).toEqual(["ms", "tables"]);
    expect(typeof answer.ms).toBe("number");
    expect(answer.tables).toEqual(before.expected);
    expect(await countsOn(url)).toEqual(before.expected);
  }, 120_000);

  test("every row is the same, column for column, in the same key order", async () => {
    const after = await postgresRows(url);
    for (const table of TABLES) expect(after[table], table).toEqual(before.rows[table]!);
    const client = await pgClient(url);
    try {
      const leases = (await client.query("SELECT count(*) AS n FROM deliveries WHERE lease_until IS NOT NULL OR lease_owner IS NOT NULL")).rows[0].n;
      expect(leases).toBe(0);
    } finally {
      await client.end();
    }
  });

  test("a second copy into the now non-empty database is refused with exit 2 naming the problem", async () => {
    const r = await copy(url);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^crm: the target database already holds data \(in settings, projects, .*\)/);
    oneLine(r.stderr);
    expect(await countsOn(url)).toEqual(before.expected);
  });

  test("a copy under another CRM_SECRET_KEY than sealed the file's secrets is refused with exit 2 naming it, and copies nothing", async () => {
    const target = await createTestDatabase();
    const r = await copy(target, [], { CRM_SECRET_KEY: OTHER_KEY });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("CRM_SECRET_KEY");
    oneLine(r.stderr);
    // Refused before the target was opened: not even the schema was made there.
    const pgc = await pgClient(target);
    try {
      const tables = await pgc.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'");
      expect(tables.rows[0].n).toBe(0);
    } finally {
      await pgc.end();
    }
  });

  test("text output: one line per table with its count, then a summary", async () => {
    const other = await createTestDatabase();
    const r = await copy(other);
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    for (const table of TABLES) {
      const line = lines.find((l) => l.split(/\s+/)[0] === table);
      expect(line, table).toBeDefined();
      expect(line!.trim().split(/\s+/)[1]).toBe(before.expected[table]!.toLocaleString("en-US"));
    }
    expect(r.stdout).toContain("Copied ");
  }, 120_000);

  test("a copy that fails part way leaves the target as empty as it was (one transaction)", async () => {
    const target = await createTestDatabase();
    expect((await copy(target)).exitCode).toBe(0);
    const client = await pgClient(target);
    try {
      // Emptied again, with the last table refusing every row: the copy fails after all the others.
      await client.query(`TRUNCATE ${TABLES.join(", ")} CASCADE`);
      await client.query("CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
      await client.query("CREATE TRIGGER refuse_row BEFORE INSERT ON form_submissions FOR EACH ROW EXECUTE FUNCTION refuse_row()");
    } finally {
      await client.end();
    }
    const r = await copy(target);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("copying form_submissions: refused by the test");
    expect(r.stderr).toContain("nothing was copied");
    oneLine(r.stderr);
    expect(Object.values(await countsOn(target)).every((n) => n === 0)).toBe(true);
  }, 120_000);
});

describe("a PostgreSQL node on the copy", () => {
  let from = 0;

  beforeAll(async () => {
    await rx.respond({ status: 200 });
    from = rx.requests.length;
    pgNode = await startServer({
      env: "sandbox",
      expectBootstrapKey: false, // the default project came with the copy
      extraEnv: { CRM_DATABASE_URL: url, CRM_SECRET_KEY: SECRET_KEY, CRM_WEBHOOK_RETRY_SCHEDULE: SCHEDULE },
    });
  }, 60_000);

  const api = (method: string, path: string, opts: Parameters<ServerHandle["api"]>[2] = {}) => pgNode!.api(method, path, { key: before.cliKey, ...opts });

  test("the keys of before work (the bootstrap key and the CLI's), a revoked one stays revoked", async () => {
    expect(pgNode!.stdout()).not.toContain("Created project");
    expectStatus(await api("GET", "/contacts", { key: before.bootstrapKey }), 200);
    expectStatus(await api("GET", "/contacts"), 200);
    expectStatus(await api("GET", "/contacts", { key: before.revokedKey }), 401);
  });

  test("an admin of before signs in to the console; it asks for a new sign-in (sessions are not copied) and prints no setup link", async () => {
    expect(pgNode!.stdout()).not.toContain("/admin/setup");
    const client = new AdminClient(pgNode!.origin);
    expect((await client.get("/admin/projects")).status).toBe(303);
    await client.signIn(before.admin.email, before.admin.password);
    expect((await client.get("/admin/projects")).status).toBe(200);
  });

  test("every contact answers byte for byte as before", async () => {
    for (const c of before.contacts) {
      const res = await api("GET", `/contacts/${c.contactId}`);
      expect(res.text, c.contactId).toBe(c.text);
    }
  });

  test("the interaction logs are the same and a uniqueIdentifier replays the stored log", async () => {
    expect((await api("GET", `/contacts/${before.logContact}/interactions`)).text).toBe(before.logsText);
    const again = await api("POST", `/contacts/${before.logContact}/interactions`, { body: { type: "note", note: "again", uniqueIdentifier: "msg-1" } });
    expectStatus(again, 200);
    expect(again.json.id).toBe(before.logId);
  });

  test("an Idempotency-Key of before replays its stored answer", async () => {
    const res = await api("POST", "/contacts", { body: before.idem.body, headers: { "Idempotency-Key": before.idem.key } });
    expectStatus(res, 201);
    expect(res.headers.get("idempotent-replayed")).toBe("true");
    expect(res.text).toBe(before.idem.text);
  });

  test("a cursor handed out before the copy still reads the same page", async () => {
    expect((await api("GET", "/contacts", { query: { limit: 2, cursor: before.cursor } })).text).toBe(before.page2Text);
  });

  test("search finds the copied contacts", async () => {
    const res = await api("GET", "/contacts", { query: { search: "quillf" } });
    expectStatus(res, 200);
    expect(res.json.data.map((c: any) => c.firstName)).toEqual(["Marigold"]);
    const tagged = await api("GET", "/contacts", { query: { tag: "north", limit: 200 } });
    expect(tagged.json.data.length).toBe(2);
  });

  test("a new contact takes the next number and the next id", async () => {
    const res = await api("POST", "/contacts", { body: { firstName: "After" } });
    expectStatus(res, 201);
    expect(res.json.contactId).toBe(`CR-${before.lastNumber + 1}`);
    const client = await pgClient(url);
    try {
      const row = (await client.query("SELECT id FROM contacts WHERE first_name = 'After'")).rows[0];
      expect(row.id).toBe(before.maxId + 1);
    } finally {
      await client.end();
    }
  });

  test("the deliveries left pending are delivered, signed with the webhook's original secret", async () => {
    const pending = new Set(before.pendingEvents);
    const arrived = await rx.waitUntil(
      (reqs) => [...pending].every((id) => reqs.slice(from).some((r) => r.headers["webhook-id"] !== undefined && r.json?.id === id)),
      WAIT_MS,
      `the ${pending.size} pending deliveries`,
    );
    const delivered = arrived.slice(from).filter((r) => pending.has(r.json?.id));
    expect(delivered.length).toBeGreaterThanOrEqual(pending.size);
    for (const req of delivered) {
      expect(serviceSignatureIndex(before.hookSecret, req)).toBe(0);
      expect(standardSignatureIndex(before.hookSecret, req)).toBe(0);
    }
  });

  test("a node with another CRM_SECRET_KEY refuses to start: exit 2, one line", async () => {
    const r = await runCommand([BUN, "src/main.ts", "serve"], {
      cwd: REPO_ROOT,
      env: {
        ...(process.env as Record<string, string>),
        CRM_DB_PATH: join(dir, "other-node", "crm.db"),
        CRM_DATABASE_URL: url,
        CRM_SECRET_KEY: OTHER_KEY,
        CRM_LOG_LEVEL: "warn",
        PORT: String(freePort()),
        HOST: "127.0.0.1",
      },
      allowFail: true,
      timeoutMs: 30_000,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("CRM_SECRET_KEY");
    oneLine(r.stderr);
  });
});
