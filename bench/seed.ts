/**
 * Bulk-seeds contacts straight into a migrated database, row for row as the service writes
 * them (src/contacts/service.ts createContact/toRow): contacts, contact_tags and
 * contact_search_terms, with the service's own emailKey/phoneKey/searchTerms helpers.
 * Deterministic (seeded PRNG), so two runs build the same data set. No ANALYZE: the
 * database is left without planner statistics, as one filled through the API is (the
 * service gathers them itself, src/storage/sqlite/statistics.ts). `npm run bench` builds its data
 * through the API instead (bench/seed-api.ts); this fast path serves stress/soak.ts.
 *
 *   bun bench/seed.ts <db-path> <project-id> [count]
 */
import { Database } from "bun:sqlite";
import { emailKey, phoneKey, searchTerms, termHead } from "../src/contacts/matching.ts";
import { formatContactId } from "../src/contacts/service.ts";
import { emptyAddress } from "../src/contacts/state.ts";
import { newId } from "../src/lib/ids.ts";
import { seededRandom } from "../test/helpers/random.ts";

export const FIRST = `James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan Joseph Jessica
Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra Donald Ashley Steven Kimberly
Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy George Melissa Timothy Deborah Ronald Stephanie
Edward Rebecca Jason Sharon Jeffrey Laura Ryan Cynthia Jacob Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen
Brenda Larry Pamela Justin Emma Scott Nicole Brandon Helen Benjamin Samantha Samuel Katherine Gregory Christine Alexander Debra
Frank Rachel Patrick Carolyn Raymond Janet Jack Catherine Dennis Maria Jerry Heather Tyler Diane Aaron Ruth José Julie Adam Olivia
Henry Joyce Nathan Virginia Douglas Victoria Zachary Kelly Peter Lauren Kyle Christina Ethan Joan Walter Evelyn Noah Judith Jeremy
Megan Christian Andrea Keith Cheryl Roger Hannah Terry Jacqueline Gerald Martha Harold Gloria Sean Teresa Austin Ann Carl Sara
Arthur Madison Lawrence Frances Dylan Kathryn Jesse Janice Jordan Jean Bryan Abigail Billy Alice Joe Julia Bruce Judy Gabriel Sophia
Logan Grace Albert Denise Willie Amber Alan Doris Juan Marilyn Wayne Danielle Elijah Beverly Randy Isabella Roy Theresa Vincent
Diana Ralph Natalie Eugene Brittany Russell Charlotte Bobby Marie Mason Kayla Philip Alexis Louis Lori Zoë Ana-Sofía Mei Hiroshi`.split(/\s+/);
export const LAST = `Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson Anderson Thomas
Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott
Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz
Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly
Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders
Patel Myers Long Ross Foster Jimenez Powell Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher
Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera
Gibson Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods Washington Kennedy Wells
Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder Mason Dixon
Muñoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice Schmidt Garza Daniels
O'Brien Van-der-Berg Müller Sato Kowalski Novak Dubois Rossi Jensen`.split(/\s+/);
export const BIZ_A = "Acme Blue Summit Northwind Pioneer Cedar Harbor Golden Silver Apex Evergreen Red Rock Bright Prairie Coastal Urban Maple Iron Lakeside".split(" ");
export const BIZ_B = "Logistics Bakery Dental Consulting Builders Realty Plumbing Analytics Florist Motors Legal Fitness Media Outfitters Labs Studio Farms Supply".split(" ");
export const BIZ_C = ["LLC", "Inc.", "& Co", "Group", "", "", ""];
export const DOMAINS = "gmail.com yahoo.com outlook.com hotmail.com icloud.com aol.com proton.me example.com mail.com fastmail.com".split(" ");
export const CITIES: Array<[string, string, string]> = [
  ["Springfield", "IL", "62701"], ["Austin", "TX", "73301"], ["Portland", "OR", "97201"], ["Denver", "CO", "80202"],
  ["Columbus", "OH", "43004"], ["Madison", "WI", "53703"], ["Raleigh", "NC", "27601"], ["Tucson", "AZ", "85701"],
  ["Boise", "ID", "83702"], ["Albany", "NY", "12207"], ["Savannah", "GA", "31401"], ["Spokane", "WA", "99201"],
];
export const STREETS = "Main Oak Pine Maple Cedar Elm Washington Lake Hill Park".split(" ");
export const AREA = [212, 305, 312, 415, 503, 512, 602, 617, 702, 713, 720, 808, 919, 971];
/** [name, share of contacts]; a contact gets each tag independently. */
export const TAGS: Array<[string, number]> = [
  ["newsletter", 0.3], ["vip", 0.02], ["partner", 0.05], ["trade-show-2024", 0.08],
  ["churn-risk", 0.04], ["wholesale", 0.06], ["beta", 0.01], ["referral", 0.1],
];
/** [category, share]; the project's default types (src/projects/service.ts). */
export const TYPE_SHARE: Array<[string, number]> = [["Customer", 0.5], ["Lead", 0.35], ["Other", 0.1], ["Personnel", 0.05]];

/** The seeded source of test/helpers/random.ts (mulberry32) with pick and int. */
export function prng(seed: number) {
  const next = seededRandom(seed);
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return { next, pick, int };
}

export type Prng = ReturnType<typeof prng>;

export const asciiLower = (s: string) => s.normalize("NFD").replace(/[^A-Za-z0-9]/g, "").toLowerCase();

/**
 * One person's identity: names from `name` (uniform or skewed), a business for 12 %, an
 * email for 90 % (2 % reusing a recent one: the same person entered twice), a phone for 70 %.
 * Draws in a fixed order, so a seed gives the same people.
 */
export function drawPerson(r: Prng, n: number, recentEmails: string[], name: <T>(list: T[]) => T) {
  const isBusiness = r.next() < 0.12;
  const first = r.next() < 0.97 ? name(FIRST) : null;
  const last = r.next() < 0.93 ? name(LAST) : null;
  const business = isBusiness ? `${r.pick(BIZ_A)} ${r.pick(BIZ_B)} ${r.pick(BIZ_C)}`.trim() : null;
  let email: string | null = null;
  const roll = r.next();
  if (roll < 0.02 && recentEmails.length) email = r.pick(recentEmails);
  else if (roll < 0.9) {
    const local = [first, last].filter(Boolean).map((p) => asciiLower(p!)).join(r.next() < 0.7 ? "." : "") || "info";
    const num = r.next() < 0.6 ? String(r.int(1, 9999)) : "";
    email = `${local}${num}@${isBusiness ? `${asciiLower(business!.split(" ")[0]!)}.com` : r.pick(DOMAINS)}`;
    if (r.next() < 0.1) email = email[0]!.toUpperCase() + email.slice(1); // as typed
  }
  if (email && n % 50 === 0) recentEmails[(n / 50) % 2000] = email;
  const phone = r.next() < 0.7
    ? r.next() < 0.5
      ? `(${r.pick(AREA)}) ${r.int(200, 999)}-${String(r.int(0, 9999)).padStart(4, "0")}`
      : `+1 ${r.pick(AREA)} ${r.int(200, 999)} ${String(r.int(0, 9999)).padStart(4, "0")}`
    : null;
  return { isBusiness, first, last, business, email, phone };
}

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
      for (const term of searchTerms({ firstName: first, lastName: last, businessName: business, email: emailValue, contactId: formatContactId(n) })) {
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
  const indexed = performance.now();
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
    console.error("usage: bun bench/seed.ts <db-path> <project-id> [count]");
    process.exit(2);
  }
  console.log(JSON.stringify(seed(path, projectId, Number(count ?? 1_000_000))));
}
