/**
 * Bulk-seeds contacts straight into a migrated database, row for row as the service writes
 * them (src/contacts/service.ts createContact/toRow): contacts, contact_tags and
 * contact_search_terms, with the service's own emailKey/phoneKey/searchTerms helpers and the
 * people of ./people.ts. Deterministic (seeded PRNG), so two runs build the same data set.
 * No ANALYZE: the database is left without planner statistics, as one filled through the API
 * is (the service gathers them itself, src/storage/sqlite/statistics.ts). `npm run bench`
 * builds its data through the API instead (./api.ts); this fast path serves stress/soak.ts.
 *
 *   bun bench/harness/seed/sqlite.ts <db-path> <project-id> [count]
 */
import { Database } from "bun:sqlite";
import { emailKey, phoneKey, termHead } from "../../../src/contacts/matching.ts";
import { searchTerms } from "../../../src/contacts/search/terms.ts";
import { formatContactId } from "../../../src/contacts/service.ts";
import { emptyAddress } from "../../../src/contacts/state.ts";
import { newId } from "../../../src/lib/ids.ts";
import { asciiLower, CITIES, drawPerson, prng, STREETS, TAGS, TYPE_SHARE } from "./people.ts";

export interface SeedResult {
  contacts: number;
  searchTerms: number;
  contactTags: number;
  seconds: number;
  phases: { rows: number; indexes: number };
}

export function seed(dbPath: string, projectId: string, count: number): SeedResult {
  const started = performance.now();
  const db = new Database(dbPath);
  // Bulk-load settings; the file is a throw-away bench database. Back to WAL at the end.
  db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -2000000; PRAGMA temp_store = MEMORY");

  const project = db.query("SELECT default_region, last_contact_number FROM projects WHERE id = ?").get(projectId) as
    | { default_region: string; last_contact_number: number }
    | null;
  if (!project) throw new Error(`no project ${projectId}`);
  if (project.last_contact_number !== 0) throw new Error(`project ${projectId} already has contacts`);
  const region = project.default_region;
  const types = db.query("SELECT id, category FROM contact_types WHERE project_id = ?").all(projectId) as Array<{ id: string; category: string }>;
  const typeShare = TYPE_SHARE.map(([cat, share]) => [types.find((t) => t.category === cat)!.id, share] as const);

  const now = new Date().toISOString();
  const insertTag = db.prepare("INSERT INTO tags (id, project_id, name, name_key, created_at) VALUES (?, ?, ?, ?, ?)");
  const tagIds = TAGS.map(([name, share]) => {
    const id = newId("tag");
    insertTag.run(id, projectId, name, name.toLowerCase(), now);
    return [id, share] as const;
  });

  const insertContact = db.prepare(
    `INSERT INTO contacts (id, project_id, contact_number, identity_type, source, first_name, last_name, email, email_key,
       phone, phone_key, business_name, website, address, contact_type_id, subscribed, sms_subscribed, notes, custom_fields,
       created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
  );
  const insertContactTag = db.prepare("INSERT INTO contact_tags (contact_id, tag_id, updated_at, contact_number) VALUES (?, ?, ?, ?)");
  // The term rows carry whatever copied order keys the schema has (src/contacts/repository.ts
  // replaceSearchTerms); a NOT NULL column this seed does not know fails loudly.
  const termValues = { project_id: 0, term: 1, contact_id: 2, updated_at: 3, contact_number: 4, head: 5 } as const;
  const termColumns = (db.query("PRAGMA table_info(contact_search_terms)").all() as Array<{ name: string; notnull: number; dflt_value: unknown }>)
    .map((c) => {
      if (!(c.name in termValues) && c.notnull && c.dflt_value === null) throw new Error(`seed does not know contact_search_terms.${c.name}`);
      return c.name;
    })
    .filter((name) => name in termValues) as Array<keyof typeof termValues>;
  const insertTerm = db.prepare(
    `INSERT INTO contact_search_terms (${termColumns.join(", ")}) VALUES (${termColumns.map(() => "?").join(", ")})`,
  );
  const termRow = (term: string, n: number, updatedAt: string) => {
    const all = [projectId, term, n, updatedAt, n, termHead(term)];
    return termColumns.map((c) => all[termValues[c]]!);
  };

  const r = prng(20240601);
  const startMs = Date.parse("2022-01-01T00:00:00.000Z");
  const span = Date.now() - 86_400_000 - startMs;
  const recentEmails: string[] = [];
  let terms = 0;
  let tagRows = 0;

  const writeBatch = db.transaction((from: number, to: number) => {
    for (let n = from; n <= to; n++) {
      const { isBusiness, first, last, business, email, phone } = drawPerson(r, n, recentEmails, r.pick);
      const address = emptyAddress();
      if (r.next() < 0.6) {
        const [city, state, zip] = r.pick(CITIES);
        Object.assign(address, { line1: `${r.int(1, 9999)} ${r.pick(STREETS)} St`, city, state, zip, country: "US" });
      }
      let typeRoll = r.next();
      const typeId = typeShare.find(([, share]) => (typeRoll -= share) < 0)?.[0] ?? typeShare[0]![0];
      const created = startMs + Math.floor((span * n) / count) + r.int(0, 60_000);
      const updated = r.next() < 0.3 ? Math.min(Date.now() - 1000, created + r.int(0, 90 * 86_400_000)) : created;
      const emailValue = email?.trim() ?? null;
      const updatedAt = new Date(updated).toISOString();

      insertContact.run(
        n, projectId, n, isBusiness ? "business" : "personal", r.next() < 0.8 ? "api" : "web-form",
        first, last, emailValue, emailKey(emailValue), phone, phoneKey(phone, region),
        business, isBusiness && r.next() < 0.5 ? `https://www.${asciiLower(business!.split(" ")[0]!)}.com` : null,
        JSON.stringify(address), typeId, r.next() < 0.4 ? 1 : 0, r.next() < 0.1 ? 1 : 0,
        r.next() < 0.05 ? "Met at the spring fair; call back in Q3." : null, "{}",
        new Date(created).toISOString(), updatedAt,
      );
      for (const [tagId, share] of tagIds) {
        if (r.next() < share) {
          insertContactTag.run(n, tagId, updatedAt, n);
          tagRows++;
        }
      }
      for (const term of searchTerms({ firstName: first, lastName: last, businessName: business, email: emailValue, phoneKey: phoneKey(phone, region), contactId: formatContactId(n) })) {
        insertTerm.run(...termRow(term, n, updatedAt));
        terms++;
      }
    }
  });

  // Secondary indexes are dropped for the load and rebuilt from their own CREATE INDEX text
  // (as db/0001_init.sql made them): one sort per index instead of a million random inserts.
  const indexes = db
    .query("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('contacts', 'contact_tags', 'contact_search_terms')")
    .all() as Array<{ name: string; sql: string }>;
  for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
  const BATCH = 50_000;
  for (let from = 1; from <= count; from += BATCH) writeBatch(from, Math.min(count, from + BATCH - 1));
  const loaded = performance.now();
  db.transaction(() => {
    for (const { sql } of indexes) db.exec(sql);
  })();
  db.query("UPDATE projects SET last_contact_number = ?, contact_count = ? WHERE id = ?").run(count, count, projectId);
  db.exec("PRAGMA journal_mode = WAL");
  db.close();
  const end = performance.now();
  const sec = (ms: number) => Math.round(ms) / 1000;
  return {
    contacts: count,
    searchTerms: terms,
    contactTags: tagRows,
    seconds: sec(end - started),
    phases: { rows: sec(loaded - started), indexes: sec(end - loaded) },
  };
}

if (import.meta.main) {
  const [path, projectId, count] = process.argv.slice(2);
  if (!path || !projectId) {
    console.error("usage: bun bench/harness/seed/sqlite.ts <db-path> <project-id> [count]");
    process.exit(2);
  }
  console.log(JSON.stringify(seed(path, projectId, Number(count ?? 1_000_000))));
}
