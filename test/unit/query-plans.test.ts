/**
 * GET /contacts plans on a database as users build it (issue 10; docs/api.md §11: "must stay
 * fast at a million contacts"): contacts created through the service, never ANALYZEd by
 * hand. Every statement the list code runs is checked with EXPLAIN QUERY PLAN: each filter
 * is driven by its own index and nothing walks a project's contacts. Plan choice does not
 * depend on the number of rows, only on the statistics, so a few thousand contacts and
 * three states of the statistics cover it: none (the database as filled), fresh (after a
 * restart) and stale (taken while the project was tiny and had no emails or phones).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CompiledQuery, Kysely, KyselyPlugin } from "kysely";
import { listContacts } from "../../src/contacts/list.ts";
import { ListContactsQuery } from "../../src/contacts/schemas.ts";
import { createContact, patchContact } from "../../src/contacts/service.ts";
import { openDatabase, type OpenDatabase } from "../../src/storage/sqlite/open.ts";
import type { Database } from "../../src/storage/schema.ts";
import { CursorCodec } from "../../src/lib/cursor.ts";
import { createProject } from "../../src/projects/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-plans-"));
const cursors = new CursorCodec("plans");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FIRST = ["Mark", "Maria", "Martin", "Marek", "James", "Linda", "Paul", "Zoe"];
const LAST = ["Smith", "Marsh", "Garcia", "Nguyen", "Stone"];
const TAGS = ["newsletter", "vip", "partner"];

/** `count` contacts through the service, in transactions of 500 as an import would. */
async function fill(db: Kysely<Database>, projectId: string, count: number, withContactDetails = true) {
  for (let from = 0; from < count; from += 500) {
    await db.transaction().execute(async (trx) => {
      for (let i = from; i < Math.min(count, from + 500); i++) {
        const [first, last] = [FIRST[i % FIRST.length]!, LAST[i % LAST.length]!];
        await createContact(
          trx,
          projectId,
          {
            firstName: first,
            lastName: last,
            ...(withContactDetails ? { email: `${first}.${last}${i}@example.com`.toLowerCase(), phone: `+1 415 555 ${String(i % 10_000).padStart(4, "0")}` } : {}),
            tags: TAGS.filter((_, k) => i % (k + 2) === 0),
          },
          { emitEvent: false, now: isoNow(systemClock) },
        );
      }
    });
  }
  // Some updates, so list order is not creation order.
  await db.transaction().execute(async (trx) => {
    for (let n = 1; n <= count; n += 97) await patchContact(trx, projectId, n, { notes: "touched" }, isoNow(systemClock));
  });
}

/** Runs `run` and returns every statement it executed with its query plan lines. */
async function plansOf(database: OpenDatabase, run: (db: Kysely<Database>) => Promise<unknown>) {
  const statements: CompiledQuery[] = [];
  const recorder: KyselyPlugin = {
    transformQuery: ({ node, queryId }) => (statements.push(database.db.getExecutor().compileQuery(node, queryId)), node),
    transformResult: async ({ result }) => result,
  };
  await run(database.db.withPlugin(recorder));
  return statements.map((s) => ({
    sql: s.sql,
    plan: database.raw.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${s.sql}`, [...s.parameters]).map((r) => r.detail),
  }));
}

interface Shape {
  name: string;
  query: Record<string, string | string[]>;
  /** A plan line of the statement that drives the page. */
  drives: RegExp;
  /** Take the second page (a cursor from the first). */
  page2?: boolean;
}

const shapes: Shape[] = [
  { name: "no filter walks contacts_recent", query: {}, drives: /contacts_recent \(project_id=\?\)/ },
  { name: "?email= takes contacts_email", query: { email: "Mark.Smith0@example.com" }, drives: /contacts_email \(project_id=\? AND email_key=\?\)/ },
  { name: "?phone= takes contacts_phone", query: { phone: "(415) 555-0009" }, drives: /contacts_phone \(project_id=\? AND phone_key=\?\)/ },
  { name: "?contactTypeId= walks contacts_type", query: { contactTypeId: "<customer>" }, drives: /contacts_type \(contact_type_id=\?\)/ },
  { name: "?contactTypeCategory= walks contacts_type", query: { contactTypeCategory: "Customer" }, drives: /contacts_type \(contact_type_id=\?\)/ },
  { name: "?tag= walks contact_tags_recent", query: { tag: "vip" }, drives: /contact_tags_recent \(tag_id=\?\)/ },
  { name: "two ?tag= walk the rarer tag's contact_tags_recent", query: { tag: ["newsletter", "vip"] }, drives: /contact_tags_recent \(tag_id=\?\)/ },
  { name: "?updatedSince= seeks contacts_recent", query: { updatedSince: "2000-01-01T00:00:00Z" }, drives: /contacts_recent \(project_id=\? AND updated_at>\?\)/ },
  { name: "a dense 3-letter ?search= walks contact_search_terms_walk", query: { search: "mar" }, drives: /contact_search_terms_walk \(project_id=\? AND head=\?\)/ },
  { name: "a rare ?search= takes its term range", query: { search: "marsh1" }, drives: /SEARCH t USING PRIMARY KEY \(project_id=\? AND term>\? AND term<\?\)/ },
  { name: "a rare 1-letter ?search= takes its term range", query: { search: "z" }, drives: /SEARCH t USING PRIMARY KEY \(project_id=\? AND term>\? AND term<\?\)/ },
  { name: "a dense 1-letter ?search= walks contacts_recent, checking the word per contact", query: { search: "m" }, drives: /contacts_recent \(project_id=\?\)/ },
  { name: "a rare 3-letter ?search= walks its head group, which holds only its matches", query: { search: "zoe" }, drives: /contact_search_terms_walk \(project_id=\? AND head=\?\)/ },
  { name: "a two-word ?search= of different heads is driven by their pair term", query: { search: "mar smit" }, drives: /SEARCH t USING PRIMARY KEY \(project_id=\? AND term=\?\)/ },
  { name: "a two-word ?search= of dense words walks the longer one", query: { search: "ma mar" }, drives: /contact_search_terms_walk \(project_id=\? AND head=\?\)/ },
  {
    name: "?email= with type, tag and search still takes contacts_email",
    query: { email: "mark.smith0@example.com", contactTypeCategory: "Customer", tag: "newsletter", search: "mar" },
    drives: /contacts_email \(project_id=\? AND email_key=\?\)/,
  },
  { name: "?contactTypeId= with ?tag= walks the tag", query: { contactTypeId: "<customer>", tag: "partner" }, drives: /contact_tags_recent \(tag_id=\?\)/ },
  { name: "the second page of no filter seeks past the cursor", query: {}, drives: /contacts_recent \(project_id=\? AND updated_at<\?\)/, page2: true },
  { name: "the second page of ?contactTypeId= seeks past the cursor", query: { contactTypeId: "<customer>" }, drives: /contacts_type \(contact_type_id=\? AND updated_at<\?\)/, page2: true },
  { name: "the second page of ?tag= seeks past the cursor", query: { tag: "newsletter" }, drives: /contact_tags_recent \(tag_id=\? AND updated_at<\?\)/, page2: true },
  { name: "the second page of a dense ?search= seeks past the cursor", query: { search: "mar" }, drives: /contact_search_terms_walk \(project_id=\? AND head=\? AND updated_at<\?\)/, page2: true },
];

/** A full walk of a table that grows with the contacts (under its name or its aliases t, o, other). */
const FULL_SCAN = /^SCAN (contacts|contact_tags|contact_search_terms|t|o|other)\b/;

/** Checks every shape's statements against `database` (project `projectId`). */
function checkShapes(state: string, get: () => { database: OpenDatabase; projectId: string; customer: string }) {
  describe(`GET /contacts plans, statistics ${state}`, () => {
    for (const shape of shapes) {
      test(shape.name, async () => {
        const { database, projectId, customer } = get();
        const raw = Object.fromEntries(Object.entries(shape.query).map(([k, v]) => [k, v === "<customer>" ? customer : v]));
        const query = ListContactsQuery.parse({ ...raw, limit: "20" });
        let cursor: string | undefined;
        if (shape.page2) {
          const first = await listContacts(database.db, cursors, projectId, query);
          expect(first.pagination.nextCursor).not.toBeNull();
          cursor = first.pagination.nextCursor!;
        }
        const statements = await plansOf(database, (db) => listContacts(db, cursors, projectId, { ...query, cursor }));
        const lines = statements.flatMap((s) => s.plan);
        expect(lines.some((l) => shape.drives.test(l))).toBe(true);
        // A scan of a page a subquery made (CO-ROUTINE or MATERIALIZE t: at most a batch of rows) is not a walk of a table.
        const page = (plan: string[]) => plan.some((l) => /^(CO-ROUTINE|MATERIALIZE) t$/.test(l));
        const scans = (plan: string[]) => plan.filter((l) => FULL_SCAN.test(l) && !(l === "SCAN t" && page(plan)));
        for (const s of statements) expect({ sql: s.sql, scans: scans(s.plan) }).toEqual({ sql: s.sql, scans: [] });
        // Only the shapes that are meant to walk the project in list order may touch contacts_recent.
        if (!/contacts_recent/.test(shape.drives.source)) expect(lines.filter((l) => l.includes("contacts_recent"))).toEqual([]);
      });
    }
  });
}

async function customerType(db: Kysely<Database>, projectId: string) {
  return (await db.selectFrom("contact_types").select("id").where("project_id", "=", projectId).where("category", "=", "Customer").executeTakeFirstOrThrow()).id;
}

// A: filled through the service and never analyzed, then restarted.
const a = { database: undefined as unknown as OpenDatabase, projectId: "", customer: "" };
beforeAll(async () => {
  a.database = await openDatabase(join(dir, "a.db"), "NORMAL");
  for (const [name, count] of [["other", 300], ["big", 3000]] as const) {
    a.projectId = (await createProject(a.database.db, name, isoNow(systemClock))).id;
    await fill(a.database.db, a.projectId, count);
  }
  a.customer = await customerType(a.database.db, a.projectId);
}, 120_000);

// B: statistics taken while the only project was tiny and had no emails or phones; it grew after.
const b = { database: undefined as unknown as OpenDatabase, projectId: "", customer: "" };
beforeAll(async () => {
  const path = join(dir, "b.db");
  let database = await openDatabase(path, "NORMAL");
  b.projectId = (await createProject(database.db, "b", isoNow(systemClock))).id;
  await fill(database.db, b.projectId, 40, false);
  await database.close();
  database = await openDatabase(path, "NORMAL");
  // Opening drops statistics of a table under 1,000 rows (src/storage/sqlite/statistics.ts COLD_ROWS): take them by hand, stale as an older build left them.
  database.raw.exec("ANALYZE");
  await fill(database.db, b.projectId, 3000);
  b.database = database;
  b.customer = await customerType(database.db, b.projectId);
}, 120_000);

afterAll(async () => {
  await a.database?.close();
  await b.database?.close();
});

const statTables = (database: OpenDatabase) => {
  const exists = database.raw.all("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").length > 0;
  return exists ? database.raw.all<{ tbl: string }>("SELECT DISTINCT tbl FROM sqlite_stat1 ORDER BY tbl").map((r) => r.tbl) : [];
};

describe("GET /contacts plans, no statistics (the database as the API filled it)", () => {
  test("the filled database has no statistics yet", () => {
    expect(statTables(a.database)).not.toContain("contacts");
  });
});
checkShapes("none (the database as the API filled it)", () => a);

describe("planner statistics are kept without a manual ANALYZE", () => {
  test("a restart (close, then open) gives every filled table statistics", async () => {
    await a.database.close();
    a.database = await openDatabase(join(dir, "a.db"), "NORMAL");
    expect(statTables(a.database)).toEqual(expect.arrayContaining(["contact_search_terms", "contact_tags", "contacts"]));
  });

  test("the periodic refresh analyzes a table that was never analyzed (from 1,000 rows: smaller ones keep none)", async () => {
    const { COLD_ROWS, refreshStatistics } = await import("../../src/storage/sqlite/statistics.ts");
    const database = await openDatabase(join(dir, "c.db"), "NORMAL");
    const projectId = (await createProject(database.db, "c", isoNow(systemClock))).id;
    await fill(database.db, projectId, 50);
    await refreshStatistics(database.db);
    expect(statTables(database)).not.toContain("contacts");
    await fill(database.db, projectId, COLD_ROWS);
    expect(statTables(database)).not.toContain("contacts");
    await refreshStatistics(database.db);
    expect(statTables(database)).toContain("contacts");
    await database.close();
  });
});
checkShapes("fresh (after a restart)", () => a);
checkShapes("stale (taken when the project was tiny, without emails or phones)", () => b);

describe("a page's contacts are read by one prepared statement (src/contacts/repository.ts contactRowsByIds)", () => {
  test("one statement text for pages of any size: the ids outer, each contact by its primary key, in the ids' order", async () => {
    const { Database: Sqlite } = await import("bun:sqlite");
    const { contactRowsByIds } = await import("../../src/contacts/repository.ts");
    const database = await openDatabase(join(dir, "d.db"), "NORMAL");
    const projectId = (await createProject(database.db, "d", isoNow(systemClock))).id;
    await fill(database.db, projectId, 60);
    const ids = database.raw.all<{ id: number }>("SELECT id FROM contacts WHERE project_id = ? ORDER BY id", [projectId]).map((r) => r.id);
    // Every statement the connection prepares from here (its own cache prepares each text once).
    const prepared: string[] = [];
    const prepare = Sqlite.prototype.prepare;
    Sqlite.prototype.prepare = function (this: InstanceType<typeof Sqlite>, text: string, ...rest: unknown[]) {
      prepared.push(text);
      return (prepare as Function).call(this, text, ...rest);
    } as typeof prepare;
    try {
      for (const page of [ids.slice(0, 3).reverse(), ids.slice(10, 60), [ids[7]!, ids[2]!, 999_999]]) {
        const rows = await contactRowsByIds(database.db, projectId, page);
        expect(rows.map((r) => r.id)).toEqual(page.filter((id) => ids.includes(id)));
      }
    } finally {
      Sqlite.prototype.prepare = prepare;
    }
    const texts = [...new Set(prepared.filter((text) => text.includes("json_each")))];
    expect(texts).toHaveLength(1);
    const plan = database.raw.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${texts[0]}`, [JSON.stringify(ids.slice(0, 5)), projectId]).map((r) => r.detail);
    expect(plan[0]).toMatch(/^SCAN ids VIRTUAL TABLE/);
    expect(plan).toContain("SEARCH contacts USING INTEGER PRIMARY KEY (rowid=?)");
    expect(plan.filter((l) => FULL_SCAN.test(l))).toEqual([]);
    await database.close();
  });
});
