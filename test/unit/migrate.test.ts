/**
 * Migrations are frozen (decisions: schema upgrades): each applied file's checksum is
 * recorded and checked at every start; a changed file or a migration this build does not
 * know stops the start; 0004 brings a database made by any released or edited version of
 * 0001/0002 to the schema of a fresh one, keeping its rows.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { termHead } from "../../src/contacts/matching.ts";
import { checksum, migrate, MigrationError, migrationsApplied } from "../../src/storage/sqlite/migrate.ts";
import { migrations, type Migration } from "../../src/storage/sqlite/migrations.ts";
import { runtime, type SqliteHandle } from "../../src/runtime/index.ts";
import { addLitestreamTables, fixture, HISTORIES, migrateLikeBefore, SAMPLE, schemaOf, seedOldShape, type History } from "../fixtures/migrations/history.ts";

const REPO = join(import.meta.dir, "../..");
const ALL = migrations.map((m) => m.name);
const UPGRADE = "0004_order_keys_and_delivery_status";
const THROUGH_UPGRADE = migrations.slice(0, ALL.indexOf(UPGRADE) + 1);

function open(): SqliteHandle {
  const raw = runtime.openSqlite(":memory:");
  raw.exec("PRAGMA foreign_keys = ON");
  return raw;
}

/** The same, with comments, quotes and spacing taken out of the SQL text. */
function normalizedSchemaOf(raw: SqliteHandle) {
  const normalize = (sql: string | null) =>
    sql === null ? null : sql.replace(/--[^\n]*/g, "").replace(/"/g, "").replace(/\s+/g, " ").replace(/\s*([(),])\s*/g, "$1").trim();
  return schemaOf(raw).map((row) => ({ ...row, sql: normalize(row.sql) }));
}

const freshSchema = (() => {
  const raw = open();
  migrate(raw);
  return schemaOf(raw);
})();

function legacy(history: History): SqliteHandle {
  const raw = open();
  migrateLikeBefore(raw, history);
  return raw;
}

const recorded = (raw: SqliteHandle) =>
  raw.all<{ name: string; applied_at: string; checksum: string | null }>("SELECT name, applied_at, checksum FROM schema_migrations ORDER BY name");

function startError(run: () => unknown): MigrationError {
  try {
    run();
  } catch (error) {
    if (error instanceof MigrationError) return error;
    throw error;
  }
  throw new Error("the start was not stopped");
}

describe("checksums", () => {
  test("the released 0001 and 0002 are back byte for byte; no migration changes once written", () => {
    expect(readFileSync(join(REPO, "db/0001_init.sql"), "utf8")).toBe(fixture("0001_init.51c137c.sql"));
    expect(readFileSync(join(REPO, "db/0002_webhooks.sql"), "utf8")).toBe(fixture("0002_webhooks.5bcdb4c.sql"));
    // Frozen: changing one of these breaks every database that applied it. Add a file instead.
    const frozen: Record<string, string> = {
      "0001_init": "aee62906202bcb6f0eed3650a2d905f854ae0daac78297948d1f24092c967b97",
      "0002_webhooks": "dca13916a3fbded62e8357105ba1c9434a357e268ff2837354784d7374962507",
      "0003_forms": "74d021e540a26af9dae0af6e78cc0e6d66ad7bcb21ab1a78301b624163dea720",
      [UPGRADE]: "89e9f91c004093412468d9f76a9a33f1752dee147b199456c69c670345c9f8f2",
    };
    for (const [name, sum] of Object.entries(frozen)) expect(checksum(migrations.find((m) => m.name === name)!.sql)).toBe(sum);
    expect(ALL.slice(0, 4)).toEqual(Object.keys(frozen));
  });

  test("the checksum is SHA-256 of the file's text, CRLF read as LF", () => {
    expect(checksum("SELECT 1;\n")).toBe(new Bun.CryptoHasher("sha256").update("SELECT 1;\n").digest("hex"));
    expect(checksum("SELECT 1;\r\nSELECT 2;\r\n")).toBe(checksum("SELECT 1;\nSELECT 2;\n"));
  });

  test("a fresh database records every migration with its file's checksum", () => {
    const raw = open();
    expect(migrate(raw, migrations.slice(0, 2))).toEqual(ALL.slice(0, 2));
    expect(migrationsApplied(raw)).toBe(false);
    expect(migrate(raw)).toEqual(ALL.slice(2));
    expect(recorded(raw).map((r) => [r.name, r.checksum])).toEqual(migrations.map((m) => [m.name, checksum(m.sql)]));
    expect(migrationsApplied(raw)).toBe(true);
    expect(raw.all("PRAGMA foreign_keys")).toEqual([{ foreign_keys: 1 }]);
  });

  test("running again applies nothing and changes nothing", () => {
    const raw = open();
    migrate(raw);
    const before = { rows: recorded(raw), schema: schemaOf(raw) };
    expect(migrate(raw)).toEqual([]);
    expect(migrate(raw)).toEqual([]);
    expect({ rows: recorded(raw), schema: schemaOf(raw) }).toEqual(before);
  });

  test("an applied migration whose file changed stops the start, in one line naming it and no SQL", () => {
    const raw = open();
    migrate(raw);
    const edited: Migration[] = migrations.map((m) =>
      m.name === "0002_webhooks" ? { ...m, sql: `${m.sql}CREATE INDEX webhooks_url ON webhooks(url);\n` } : m,
    );
    const later: Migration = { name: "9999_later", sql: "CREATE TABLE later (id INTEGER PRIMARY KEY) STRICT;" };
    const error = startError(() => migrate(raw, [...edited, later]));
    expect(error.message).toContain("migration 0002_webhooks");
    expect(error.message).toContain("migrations are frozen; add a new file");
    expect(error.message).not.toContain("\n");
    expect(error.message).not.toMatch(/CREATE|INDEX|webhooks_url/);
    // Nothing after it ran.
    expect(raw.all("SELECT name FROM sqlite_master WHERE name = 'later'")).toEqual([]);
    expect(recorded(raw).map((r) => r.name)).toEqual(ALL);
  });

  test("a migration recorded by a newer build stops the start", () => {
    const raw = open();
    migrate(raw);
    raw.all("INSERT INTO schema_migrations (name, applied_at, checksum) VALUES ('9999_from_the_future', '2030-01-01T00:00:00.000Z', 'abc') RETURNING name");
    const error = startError(() => migrate(raw));
    expect(error.message).toContain("this database was migrated by a newer version");
    expect(error.message).toContain("9999_from_the_future");
    expect(error.message).not.toContain("\n");
    // An older build also refuses when it lacks a migration the database has.
    const older = open();
    migrate(older);
    expect(startError(() => migrate(older, migrations.slice(0, 3))).message).toContain(`newer version (it records ${UPGRADE}`);
  });

  test("a pending migration that would orphan rows is rolled back with foreign keys back on", () => {
    const raw = open();
    migrate(raw);
    raw.exec("CREATE TABLE parent (id INTEGER PRIMARY KEY) STRICT; CREATE TABLE child (parent_id INTEGER REFERENCES parent(id) ON DELETE CASCADE) STRICT;");
    raw.exec("INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1);");
    const orphaning: Migration = { name: "9999_orphaning", sql: "DELETE FROM parent;" };
    expect(startError(() => migrate(raw, [...migrations, orphaning])).message).toContain("child → parent");
    expect(raw.all("SELECT count(*) AS n FROM child")).toEqual([{ n: 1 }]);
    expect(raw.all("SELECT count(*) AS n FROM parent")).toEqual([{ n: 1 }]);
    expect(raw.all("PRAGMA foreign_keys")).toEqual([{ foreign_keys: 1 }]);
  });
});

describe.each(Object.entries(HISTORIES))("a database made by the %s migrations", (label, history) => {
  const build = () => {
    const raw = legacy(history);
    addLitestreamTables(raw);
    seedOldShape(raw);
    return raw;
  };

  test("starts, takes the recorded rows as applied, records checksums, and applies what is missing", () => {
    const raw = build();
    const pending = ALL.filter((name) => !history.some(([n]) => n === name));
    expect(migrationsApplied(raw)).toBe(false);
    expect(migrate(raw)).toEqual(pending);
    expect(pending).toContain(UPGRADE);
    expect(recorded(raw).map((r) => [r.name, r.checksum])).toEqual(migrations.map((m) => [m.name, checksum(m.sql)]));
    expect(migrationsApplied(raw)).toBe(true);
    expect(migrate(raw)).toEqual([]);
  });

  test("ends with exactly the schema of a fresh database", () => {
    const raw = build();
    migrate(raw);
    expect(schemaOf(raw)).toEqual(freshSchema);
  });

  test("through 0004, has the schema the edited 0001/0002 gave (what today's code was written for)", () => {
    const raw = build();
    migrate(raw, THROUGH_UPGRADE);
    const withoutRecords = (schema: ReturnType<typeof normalizedSchemaOf>) => schema.filter((r) => r.name !== "schema_migrations");
    expect(withoutRecords(normalizedSchemaOf(raw))).toEqual(withoutRecords(normalizedSchemaOf(legacy(HISTORIES.editedMain))));
  });

  test("keeps every row: order keys and heads filled as the application writes them, in-flight deliveries pending", () => {
    const raw = build();
    const count = (table: string) => raw.all<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)[0]!.n;
    // contact_search_terms is rebuilt by 0014 (docs/operations.md §3.3): its rows are checked below.
    const before = Object.fromEntries(["contacts", "contact_tags", "deliveries", "delivery_attempts"].map((t) => [t, count(t)]));
    migrate(raw);
    expect(Object.fromEntries(Object.keys(before).map((t) => [t, count(t)]))).toEqual(before);

    const expectedTags = SAMPLE.contacts.flatMap((c) => c.tags.map((tag) => ({ contact_id: c.id, tag_id: tag, updated_at: c.updatedAt, contact_number: c.number })));
    const tags = raw.all("SELECT contact_id, tag_id, updated_at, contact_number FROM contact_tags");
    expect(tags).toEqual(expect.arrayContaining(expectedTags));
    const terms = raw.all<{ term: string; head: string; contact_id: number; updated_at: string; contact_number: number }>(
      "SELECT term, head, contact_id, updated_at, contact_number FROM contact_search_terms",
    );
    expect(terms.map((t) => t.term)).toEqual(expect.arrayContaining(["ada", "lovelace", "ada@example.com", "cr-1", "elodie", "😀bcd", "日本語テキスト"]));
    for (const t of terms) {
      const c = SAMPLE.contacts.find((c) => c.id === t.contact_id)!;
      expect({ head: t.head, updated_at: t.updated_at, contact_number: t.contact_number }).toEqual({ head: termHead(t.term), updated_at: c.updatedAt, contact_number: c.number });
    }
    expect(terms.find((t) => t.term === "😀bcd")!.head).toBe("😀bc");

    expect(raw.all("SELECT id, status, attempts FROM deliveries ORDER BY id")).toEqual([
      { id: SAMPLE.doneDelivery, status: "succeeded", attempts: 1 },
      { id: SAMPLE.stuckDelivery, status: "pending", attempts: 2 },
    ]);
    expect(raw.all("SELECT delivery_id, count(*) AS n FROM delivery_attempts GROUP BY delivery_id ORDER BY delivery_id")).toEqual([
      { delivery_id: SAMPLE.doneDelivery, n: 1 },
      { delivery_id: SAMPLE.stuckDelivery, n: 2 },
    ]);
    expect(raw.all("PRAGMA foreign_key_check")).toEqual([]);
    expect(raw.all("PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
  });

  test("the rebuilt tables keep their foreign keys: deletes still cascade, orphans are refused", () => {
    const raw = build();
    migrate(raw);
    expect(raw.all("PRAGMA foreign_keys")).toEqual([{ foreign_keys: 1 }]);
    raw.exec(`DELETE FROM deliveries WHERE id = '${SAMPLE.doneDelivery}'`);
    expect(raw.all(`SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id = '${SAMPLE.doneDelivery}'`)).toEqual([{ n: 0 }]);
    raw.exec("DELETE FROM contacts WHERE id = 2");
    expect(raw.all("SELECT count(*) AS n FROM contact_tags WHERE contact_id = 2")).toEqual([{ n: 0 }]);
    expect(raw.all("SELECT count(*) AS n FROM contact_search_terms WHERE contact_id = 2")).toEqual([{ n: 0 }]);
    expect(() => raw.exec("INSERT INTO contact_tags VALUES (99, 'tag_vip00000000000000000', 'x', 1)")).toThrow();
    expect(() => raw.exec("INSERT INTO deliveries VALUES ('d', 'nope', 'nope', 'in_flight', 0, 'x', 'x', 'x')")).toThrow();
  });

  test("tables it does not own (Litestream's) are left as they were", () => {
    const raw = build();
    migrate(raw);
    expect(raw.all("SELECT id, seq FROM _litestream_seq")).toEqual([{ id: 1, seq: 42 }]);
    expect(raw.all("SELECT name FROM sqlite_master WHERE name LIKE '\\_litestream\\_%' ESCAPE '\\' ORDER BY name")).toEqual([
      { name: "_litestream_lock" },
      { name: "_litestream_seq" },
    ]);
  });

  test(`(${label}) a row recorded before checksums is checked like any other once adopted`, () => {
    const raw = build();
    migrate(raw);
    const edited = migrations.map((m) => (m.name === "0001_init" ? { ...m, sql: fixture("0001_init.6e75ad1.sql") } : m));
    expect(startError(() => migrate(raw, edited)).message).toContain("migration 0001_init differs");
  });
});
