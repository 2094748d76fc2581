/**
 * The storage limit for POST /contacts and POST interactions: raw bun:sqlite inserts of one
 * contact with its contact_tags and contact_search_terms rows (the rows createContact in
 * src/contacts/service.ts writes), one row per transaction (BEGIN IMMEDIATE … COMMIT), with
 * the PRAGMAs of src/storage/sqlite/open.ts, into a copy of the 1 M-contact bench database. No HTTP, no
 * Kysely, no validation: what SQLite alone allows on this machine.
 *
 * Schema check: db/*.sql is applied to a fresh file and the tables and indexes of contacts,
 * contact_tags and contact_search_terms must be the same there as in the copy (so the
 * baseline pays for exactly the indexes the service pays for).
 *
 * rate = rows / time inside the transactions (generating the row values in JS is outside it).
 * A second, informational pass ("service shape") adds what createContact also writes in the
 * same transaction: the project's contact counter and the contact.created event row.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { termHead } from "../src/contacts/matching.ts";
import { newId } from "../src/lib/ids.ts";
import { quantile as percentile } from "./harness/report.ts";
import { rawContact, rawEventBody } from "./harness/seed/people.ts";

const ROOT = resolve(import.meta.dir, "..");
const TABLES = ["contacts", "contact_tags", "contact_search_terms"];

export interface RawInsertResult {
  label: string;
  rows: number;
  /** rows / seconds spent inside BEGIN IMMEDIATE … COMMIT */
  rate: number;
  /** rows / wall seconds including building the row values in JS */
  wallRate: number;
  p50Us: number;
  p95Us: number;
  p99Us: number;
  termsPerRow: number;
  tagsPerRow: number;
}

/** The CREATE text of the three tables and their indexes, whitespace-normalised. */
function schemaOf(db: Database): string[] {
  return (db
    .query(`SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN (${TABLES.map(() => "?").join(",")}) ORDER BY type, name`)
    .all(...TABLES) as Array<{ type: string; name: string; sql: string | null }>)
    .map((r) => `${r.type} ${r.name}: ${(r.sql ?? "(auto)").replace(/\s+/g, " ").trim()}`);
}

/**
 * Copies the (checkpointed, closed) seeded database to `copyPath` and checks its schema
 * against db/*.sql applied to a fresh file. Returns a one-line description of the check.
 */
export function prepareRawCopy(seededDb: string, tmp: string, copyPath: string): string {
  const fresh = new Database(join(tmp, "schema-only.db"));
  const files = readdirSync(join(ROOT, "db")).filter((f) => f.endsWith(".sql")).sort();
  for (const f of files) fresh.exec(readFileSync(join(ROOT, "db", f), "utf8"));
  const expected = schemaOf(fresh);
  fresh.close();

  const src = new Database(seededDb);
  src.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  src.close();
  copyFileSync(seededDb, copyPath);

  const copy = new Database(copyPath, { readonly: true });
  const actual = schemaOf(copy);
  copy.close();
  const missing = expected.filter((s) => !actual.includes(s));
  const extra = actual.filter((s) => !expected.includes(s));
  if (missing.length || extra.length) {
    throw new Error(`the seeded copy's schema differs from db/*.sql:\n  missing: ${missing.join("\n  ")}\n  extra: ${extra.join("\n  ")}`);
  }
  const indexes = expected.filter((s) => s.startsWith("index ")).length;
  return `db/${files.join(", db/")} applied to a fresh file: ${TABLES.join(", ")} and their ${indexes} indexes match the seeded copy`;
}

/**
 * Inserts contacts one per transaction for `seconds` (after `warmupSeconds` not counted) into
 * the copy, with the bodies bench/wrk/post.lua sends. `serviceShape` adds the counter UPDATE
 * and the event INSERT of createContact.
 */
export function rawInsertBaseline(
  copyPath: string,
  projectId: string,
  seconds: number,
  warmupSeconds: number,
  serviceShape = false,
): RawInsertResult {
  const db = new Database(copyPath);
  // src/storage/sqlite/open.ts, in its order.
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA cache_size = -65536");

  const project = db.query("SELECT default_region FROM projects WHERE id = ?").get(projectId) as { default_region: string } | null;
  if (!project) throw new Error(`no project ${projectId} in ${copyPath}`);
  const region = project.default_region;
  const typeId = (db.query("SELECT id FROM contact_types WHERE project_id = ? ORDER BY is_default DESC, created_at LIMIT 1").get(projectId) as { id: string }).id;
  const tagIds = new Map(
    (db.query("SELECT id, name_key FROM tags WHERE project_id = ?").all(projectId) as Array<{ id: string; name_key: string }>).map((t) => [t.name_key, t.id]),
  );
  let next = ((db.query("SELECT max(contact_number) AS n FROM contacts WHERE project_id = ?").get(projectId) as { n: number }).n ?? 0) + 1;
  if (serviceShape) db.query("UPDATE projects SET last_contact_number = max(last_contact_number, ?) WHERE id = ?").run(next - 1, projectId);

  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const counter = db.prepare(
    "UPDATE projects SET last_contact_number = last_contact_number + 1, contact_count = contact_count + 1 WHERE id = ? " +
      "RETURNING last_contact_number, contact_count, contact_quota, default_region",
  );
  const insertContact = db.prepare(
    `INSERT INTO contacts (project_id, contact_number, identity_type, source, first_name, last_name, email, email_key,
       phone, phone_key, business_name, website, address, contact_type_id, subscribed, sms_subscribed, notes, custom_fields,
       created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
  );
  const insertTag = db.prepare("INSERT INTO contact_tags (contact_id, tag_id, updated_at, contact_number) VALUES (?, ?, ?, ?)");
  const insertTerm = db.prepare(
    "INSERT INTO contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insertEvent = db.prepare("INSERT INTO events (id, project_id, type, body, created_at) VALUES (?, ?, ?, ?, ?)");

  const latencies: number[] = [];
  let terms = 0;
  let tags = 0;
  let inTxnMs = 0;
  const warmupEnd = performance.now() + warmupSeconds * 1000;
  let measuring = warmupSeconds <= 0;
  let wallStart = performance.now();
  let end = wallStart + (warmupSeconds + seconds) * 1000;
  for (let i = 0; performance.now() < end; i++) {
    if (!measuring && performance.now() >= warmupEnd) {
      measuring = true;
      wallStart = performance.now();
      end = wallStart + seconds * 1000;
    }
    // The row values, as createContact/toRow derive them from a post.lua body.
    const n = next++;
    const row = rawContact(n, region, tagIds);
    const { tags: contactTags, terms: contactTerms } = row;
    const now = new Date().toISOString();
    const values = [projectId, n, "personal", "api", row.first, row.last, row.email, row.emailKey, row.phone, row.phoneKey, null, null,
      row.address, typeId, 1, 0, null, "{}", now, now] as const;
    const eventBody = serviceShape ? rawEventBody(newId("evt"), projectId, n, row, now) : "";

    const t0 = performance.now();
    begin.run();
    let number = n;
    if (serviceShape) number = (counter.get(projectId) as { last_contact_number: number }).last_contact_number;
    const id = Number(insertContact.run(...values.map((v, k) => (k === 1 ? number : v))).lastInsertRowid);
    for (const tagId of contactTags) insertTag.run(id, tagId, now, number);
    for (const term of contactTerms) insertTerm.run(projectId, term, id, termHead(term), now, number);
    if (serviceShape) insertEvent.run(newId("evt"), projectId, "contact.created", eventBody, now);
    commit.run();
    const dt = performance.now() - t0;

    if (measuring) {
      latencies.push(dt * 1000);
      inTxnMs += dt;
      terms += contactTerms.length;
      tags += contactTags.length;
    }
  }
  const wallSeconds = (performance.now() - wallStart) / 1000;
  db.close();
  const sorted = Float64Array.from(latencies).sort();
  return {
    label: serviceShape ? "raw insert, service shape (+ counter UPDATE + event INSERT)" : "raw insert (contact + tags + search terms)",
    rows: latencies.length,
    rate: latencies.length / (inTxnMs / 1000),
    wallRate: latencies.length / wallSeconds,
    p50Us: percentile(sorted, 0.5),
    p95Us: percentile(sorted, 0.95),
    p99Us: percentile(sorted, 0.99),
    termsPerRow: terms / Math.max(1, latencies.length),
    tagsPerRow: tags / Math.max(1, latencies.length),
  };
}

if (import.meta.main) {
  // bun bench/limits.ts <seeded-db> <project-id> [seconds]: copies the db next to itself and measures.
  const [seeded, projectId, seconds] = process.argv.slice(2);
  if (!seeded || !projectId) {
    console.error("usage: bun bench/limits.ts <seeded-db> <project-id> [seconds]");
    process.exit(2);
  }
  const copy = `${seeded}.raw-copy`;
  console.log(prepareRawCopy(seeded, dirname(seeded), copy));
  console.log(rawInsertBaseline(copy, projectId, Number(seconds ?? 5), 1));
  rmSync(copy, { force: true });
}
