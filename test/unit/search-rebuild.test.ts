/**
 * The step of migration 0014_search_folding (src/storage/search-rebuild.ts): on a database at
 * the level before it, the term rows of exactly the contacts that had some are replaced by
 * this build's terms (docs/api.md §11.6), with the contact's order keys, across batches; the
 * typo words get their keys; trashed and merged-away contacts stay without terms. A step
 * runs in its migration's transaction: one that fails leaves the database as it was.
 */
import { termsBefore0014 } from "../fixtures/migrations/history.ts";
import { describe, expect, test } from "bun:test";
import { termHead } from "../../src/contacts/matching.ts";
import { isTypoWord, searchTerms, typoKeysOf } from "../../src/contacts/search/terms.ts";
import { runtime, type SqliteHandle } from "../../src/runtime/index.ts";
import { termBitsOf } from "../../src/contacts/search/term-bits.ts";
import { REBUILD_BATCH, SearchRebuild, type RebuildSource } from "../../src/storage/search-rebuild.ts";
import { migrate, MigrationError } from "../../src/storage/sqlite/migrate.ts";
import { migrations } from "../../src/storage/sqlite/migrations.ts";

const STEP = "0014_search_folding";
const BEFORE = migrations.slice(0, migrations.findIndex((m) => m.name === STEP));
/** 0014 and the migrations after it (0015_search_term_bits: the term bits, test/unit/term-bits.test.ts). */
const FROM_STEP = migrations.slice(BEFORE.length).map((m) => m.name);
const PROJECTS = ["prj_rebuild0000000000000a", "prj_rebuild0000000000000b"];

const oldTerms = termsBefore0014;

interface Seeded extends RebuildSource {
  /** Has term rows before the upgrade (a live contact); false: trashed or merged away. */
  live: boolean;
}

const FIRST = ["José", "Zoë", "Łukasz", "Ada", "Søren", "Renée", "O'Brien", "Mary-Jane"];
const LAST = ["Müller", "Straße", "Lovelace", "García", "Nuñez", "Ørsted", "Smith"];

/** Contacts of two projects; ids with gaps; every 97th trashed, every 89th merged away (both without terms). */
function people(count: number): Seeded[] {
  const out: Seeded[] = [];
  const numbers = new Map<string, number>();
  for (let i = 1; i <= count; i++) {
    const project = PROJECTS[i % 3 === 0 ? 1 : 0]!;
    const number = (numbers.get(project) ?? 0) + 1;
    numbers.set(project, number);
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[i % LAST.length]!;
    out.push({
      id: i * 2 + (i % 5 === 0 ? 1 : 0),
      project_id: project,
      contact_number: number,
      updated_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      first_name: i % 11 === 0 ? null : first,
      last_name: last,
      business_name: i % 7 === 0 ? `${last} & Söhne GmbH` : null,
      email: i % 4 === 0 ? null : `${first.toLowerCase()}.${i}@Mail.Example.co.uk`,
      phone_key: i % 3 === 0 ? null : i % 2 === 0 ? `+4930${String(1_000_000 + i)}` : `+1202555${String(i % 10_000).padStart(4, "0")}`,
      live: !(i % 97 === 0 || i % 89 === 0),
    });
  }
  return out;
}

/** A database at the level before 0014, with `contacts` as the previous build wrote them. */
function oldDatabase(contacts: Seeded[]): SqliteHandle {
  const raw = runtime.openSqlite(":memory:");
  raw.exec("PRAGMA foreign_keys = ON");
  migrate(raw, BEFORE);
  const t0 = "2026-01-01T00:00:00.000Z";
  raw.exec("BEGIN");
  for (const id of PROJECTS) {
    raw.all("INSERT INTO projects (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)", [id, id, t0, t0]);
  }
  for (const c of contacts) {
    raw.all(
      `INSERT INTO contacts (id, project_id, contact_number, identity_type, first_name, last_name, business_name, email, email_key,
         phone_key, address, created_at, updated_at, deleted_at, merged_into) VALUES (?, ?, ?, 'personal', ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?)`,
      [
        c.id, c.project_id, c.contact_number, c.first_name, c.last_name, c.business_name, c.email, c.email?.toLowerCase() ?? null,
        c.phone_key, t0, c.updated_at, c.live ? null : c.updated_at, c.live || c.id % 2 === 0 ? null : contacts[0]!.id,
      ],
    );
    if (!c.live) continue;
    for (const term of oldTerms(c)) {
      raw.all("INSERT INTO contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number) VALUES (?, ?, ?, ?, ?, ?)", [
        c.project_id, term, c.id, termHead(term), c.updated_at, c.contact_number,
      ]);
    }
  }
  raw.exec("COMMIT");
  return raw;
}

const termsOf = (c: RebuildSource) =>
  searchTerms({ firstName: c.first_name, lastName: c.last_name, businessName: c.business_name, email: c.email, phoneKey: c.phone_key, contactId: `CR-${c.contact_number}` });

describe("SearchRebuild.rowsOf", () => {
  const jose: RebuildSource = {
    id: 7, project_id: PROJECTS[0]!, contact_number: 3, updated_at: "2026-01-02T00:00:00.000Z",
    first_name: "José", last_name: "Müller", business_name: null, email: "Jose.M@Example.com", phone_key: "+12025550143",
  };

  test("a contact's rows are this build's terms with its order keys; its typo words' keys", () => {
    const { terms, keys } = new SearchRebuild().rowsOf([jose]);
    const expected = termsOf(jose);
    expect(expected).toEqual(expect.arrayContaining(["jose", "muller", "jose.m@example.com", "example.com", "example", "cr-3", "\u000112025550143", "\u00012025550143", "\u000234105552021"]));
    expect(terms).toEqual(expected.map((t) => [jose.project_id, t, 7, termHead(t), jose.updated_at, 3]));
    const words = expected.filter(isTypoWord);
    expect(words).toEqual(["jose", "muller", "example"]);
    expect(keys).toEqual(words.flatMap((w) => typoKeysOf(w).map((k) => [jose.project_id, k, w])));
  });

  test("a word already keyed in this run is not keyed again in the same project; in another project it is", () => {
    const rebuild = new SearchRebuild();
    rebuild.rowsOf([jose]);
    const josefine = { ...jose, id: 8, contact_number: 4, first_name: "Josefine", email: null, phone_key: null };
    const again = rebuild.rowsOf([josefine]);
    expect(again.keys.map((k) => k[2])).toEqual(typoKeysOf("josefine").map(() => "josefine"));
    const other = rebuild.rowsOf([{ ...jose, id: 9, project_id: PROJECTS[1]! }]);
    expect(new Set(other.keys.map((k) => k[2]))).toEqual(new Set(["jose", "muller", "example"]));
    expect({ contacts: rebuild.contacts, termRows: rebuild.termRows }).toEqual({ contacts: 3, termRows: termsOf(jose).length * 2 + termsOf(josefine).length });
  });
});

describe("migration 0014 on a database the previous build made", () => {
  // More than two batches, so the id ranges between batches are exercised.
  const contacts = people(REBUILD_BATCH * 2 + 1_234);
  const raw = oldDatabase(contacts);
  const before = raw.all<{ n: number }>("SELECT count(*) AS n FROM contact_search_terms")[0]!.n;
  const applied = migrate(raw);

  test("applies 0014 and what follows it, recorded", () => {
    expect(applied).toEqual(FROM_STEP);
    expect(before).toBeGreaterThan(0);
  });

  test("every contact that had terms has exactly this build's, with its project and order keys; the others none", () => {
    const rows = raw.all<{ project_id: string; term: string; contact_id: number; head: string; updated_at: string; contact_number: number }>(
      "SELECT project_id, term, contact_id, head, updated_at, contact_number FROM contact_search_terms ORDER BY contact_id, term",
    );
    const expected = contacts
      .filter((c) => c.live)
      .flatMap((c) => termsOf(c).map((term) => ({ project_id: c.project_id, term, contact_id: c.id, head: termHead(term), updated_at: c.updated_at, contact_number: c.contact_number })))
      .sort((a, b) => a.contact_id - b.contact_id || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
    expect(rows.length).toBe(expected.length);
    expect(rows).toEqual(expected);
    const dead = contacts.filter((c) => !c.live).map((c) => c.id);
    expect(dead.length).toBeGreaterThan(100);
    expect(raw.all(`SELECT count(*) AS n FROM contact_search_terms WHERE contact_id IN (${dead.join(", ")})`)).toEqual([{ n: 0 }]);
  });

  test("then 0015 and 0016 give each term row its contact's term bits, all four columns, made from all of the contact's terms", () => {
    const rows = raw.all<{ contact_id: number; a: number; b: number; c: number; d: number }>(
      `SELECT contact_id, term_bits_a AS a, term_bits_b AS b, term_bits_c AS c, term_bits_d AS d FROM contact_search_terms
       GROUP BY contact_id, term_bits_a, term_bits_b, term_bits_c, term_bits_d ORDER BY contact_id`,
    );
    const expected = contacts
      .filter((c) => c.live)
      .map((c) => {
        const [a, b, cc, d] = termBitsOf(termsOf(c));
        return { contact_id: c.id, a, b, c: cc, d };
      })
      .sort((x, y) => x.contact_id - y.contact_id);
    expect(rows).toEqual(expected);
    expect(rows.every((r) => r.a > 0 && r.b >= 0 && r.c + r.d > 0)).toBe(true);
  });

  test("each project's typo words have all their keys, and no other words", () => {
    const keys = raw.all<{ project_id: string; key: string; word: string }>("SELECT project_id, key, word FROM search_typo_keys");
    const expected = new Set<string>();
    for (const c of contacts.filter((c) => c.live)) {
      for (const word of termsOf(c).filter(isTypoWord)) for (const key of typoKeysOf(word)) expected.add(`${c.project_id} ${key} ${word}`);
    }
    expect(keys.length).toBe(expected.size);
    expect(new Set(keys.map((k) => `${k.project_id} ${k.key} ${k.word}`))).toEqual(expected);
    expect(keys.some((k) => k.word === "muller" && k.key === "mulle")).toBe(true);
    expect(keys.some((k) => k.word === "strasse" && k.key === "strase")).toBe(true);
  });

  test("the trashed and merged-away contacts' rows are unchanged, and the foreign keys hold", () => {
    const merged = contacts.filter((c) => !c.live && c.id % 2 === 1).length;
    expect(raw.all("SELECT count(*) AS n FROM contacts WHERE merged_into IS NOT NULL")).toEqual([{ n: merged }]);
    expect(raw.all("PRAGMA foreign_key_check")).toEqual([]);
  });
});

describe("a migration's step", () => {
  test("runs after its SQL in the same transaction: one that fails leaves nothing, recorded or written", () => {
    const contacts = people(50);
    const raw = oldDatabase(contacts);
    const terms = () => raw.all("SELECT project_id, term, contact_id FROM contact_search_terms ORDER BY project_id, term, contact_id");
    const was = terms();
    const failing = migrations.map((m) =>
      m.name === STEP
        ? {
            ...m,
            after: (h: SqliteHandle) => {
              m.after!(h);
              throw new MigrationError("step failed");
            },
          }
        : m,
    );
    expect(() => migrate(raw, failing)).toThrow("step failed");
    expect(raw.all("SELECT name FROM schema_migrations WHERE name = ?", [STEP])).toEqual([]);
    expect(raw.all("SELECT name FROM sqlite_master WHERE name = 'search_typo_keys'")).toEqual([]);
    expect(terms()).toEqual(was);
    // The next start applies it.
    expect(migrate(raw)).toEqual(FROM_STEP);
    expect(terms()).not.toEqual(was);
  });

  test("is not part of the checksum: a database that recorded 0014 does not run it again", () => {
    const raw = oldDatabase(people(20));
    migrate(raw);
    let ran = 0;
    const counting = migrations.map((m) => (m.name === STEP ? { ...m, after: () => void ran++ } : m));
    expect(migrate(raw, counting)).toEqual([]);
    expect(ran).toBe(0);
  });
});
