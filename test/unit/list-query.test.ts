/**
 * The list drivers of GET /contacts (decisions §5) against brute force on a real database:
 * a dense search prefix (walked), a rare one (sorted), a dense 1-letter word (checked on each
 * contact), several words (the rarest drives), a tag, several types, an email, and their
 * combinations give exactly the matching contacts in list order, page after page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { listContactRows, type ContactFilters } from "../../src/contacts/list-query.ts";
import { findTagIds } from "../../src/reference/repository.ts";
import { createContact, patchContact } from "../../src/contacts/service.ts";
import { openDatabase } from "../../src/db/open.ts";
import type { Database } from "../../src/db/schema.ts";
import { createProject } from "../../src/projects/service.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-list-query-"));
let db: Kysely<Database>;
let close: () => Promise<void>;
let projectId: string;
let typeIds: Record<string, string>;
interface Seeded { number: number; first: string; last: string; email: string; tags: string[]; type?: string }
const seeded: Seeded[] = [];

beforeAll(async () => {
  ({ db, close } = await openDatabase(join(dir, "l.db"), "NORMAL"));
  projectId = (await createProject(db, "l")).id;
  const firsts = ["Mark", "Maria", "Martin", "Marek", "Paul", "Zoe"];
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < 3000; i++) {
      const first = firsts[i % firsts.length]!;
      const last = i % 7 === 0 ? "Marsh" : "Stone";
      const email = `${first.toLowerCase()}${i}@example.com`;
      const tags = i % 5 === 0 ? ["five"] : i % 11 === 0 ? ["eleven"] : [];
      const c = await createContact(trx, projectId, { firstName: first, lastName: last, email, tags }, { emitEvent: false });
      seeded.push({ number: Number(c.contactId.slice(3)), first, last, email, tags });
    }
  });
  // Touch some so updatedAt order differs from creation order.
  await db.transaction().execute(async (trx) => {
    for (const n of [5, 17, 1200, 2999]) await patchContact(trx, projectId, n, { notes: `touched ${n}` });
  });
  // Some Leads and some Others, for filters on several types at once.
  const types = await db.selectFrom("contact_types").select(["id", "category"]).where("project_id", "=", projectId).execute();
  typeIds = Object.fromEntries(types.map((t) => [t.category, t.id]));
  await db.transaction().execute(async (trx) => {
    for (const s of seeded) {
      const type = s.number % 3 === 0 ? "Lead" : s.number % 7 === 0 ? "Other" : undefined;
      if (!type) continue;
      await patchContact(trx, projectId, s.number, { contactTypeId: typeIds[type]! });
      s.type = type;
    }
  });
}, 120_000);
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

async function walkAll(f: ContactFilters, limit: number) {
  const out: number[] = [];
  let after: [string, number] | undefined;
  for (;;) {
    const rows = await listContactRows(db, projectId, { ...f, after }, limit);
    const page = rows.slice(0, limit);
    out.push(...page.map((r) => r.contact_number));
    if (rows.length <= limit) return out;
    const last = page[page.length - 1]!;
    after = [last.updated_at, last.contact_number];
  }
}

async function expected(match: (s: Seeded) => boolean) {
  const rows = await db.selectFrom("contacts").select(["contact_number", "updated_at"]).where("project_id", "=", projectId).execute();
  const keep = new Set(seeded.filter(match).map((s) => s.number));
  return rows
    .filter((r) => keep.has(r.contact_number))
    .sort((a, b) => (a.updated_at === b.updated_at ? b.contact_number - a.contact_number : a.updated_at < b.updated_at ? 1 : -1))
    .map((r) => r.contact_number);
}

const words = (s: Seeded) => [s.first.toLowerCase(), s.last.toLowerCase(), s.email, `cr-${s.number}`];
const prefixMatch = (s: Seeded, token: string) => words(s).some((w) => w.startsWith(token));

describe("GET /contacts drivers", () => {
  test("a dense prefix (walked in list order) returns every match once, in order", async () => {
    // "mar" matches Mark, Maria, Martin, Marek, Marsh and their emails: over 2,000 term rows.
    expect(await walkAll({ searchTokens: ["mar"] }, 50)).toEqual(await expected((s) => prefixMatch(s, "mar")));
  });

  test("a longer prefix of a dense group (about 1,000 matches, sorted) returns every match in order", async () => {
    expect(await walkAll({ searchTokens: ["mari"] }, 37)).toEqual(await expected((s) => prefixMatch(s, "mari")));
  });

  test("a rare prefix (sorted) returns every match in order", async () => {
    expect(await walkAll({ searchTokens: ["paul1"] }, 20)).toEqual(await expected((s) => prefixMatch(s, "paul1")));
  });

  test("a short prefix and a multi-word search", async () => {
    expect(await walkAll({ searchTokens: ["z"] }, 100)).toEqual(await expected((s) => prefixMatch(s, "z")));
    expect(await walkAll({ searchTokens: ["mar", "marsh"] }, 30)).toEqual(
      await expected((s) => prefixMatch(s, "mar") && prefixMatch(s, "marsh")),
    );
  });

  test("a tag drives the list; a second tag and search combine with it", async () => {
    const [five] = (await findTagIds(db, projectId, ["five"]))!;
    const [eleven] = (await findTagIds(db, projectId, ["eleven"]))!;
    expect(await walkAll({ tagIds: [five!] }, 50)).toEqual(await expected((s) => s.tags.includes("five")));
    expect(await walkAll({ tagIds: [five!, eleven!] }, 50)).toEqual([]);
    expect(await walkAll({ tagIds: [eleven!], searchTokens: ["mark"] }, 10)).toEqual(
      await expected((s) => s.tags.includes("eleven") && prefixMatch(s, "mark")),
    );
  });

  test("updatedSince and email filters combine with a dense search", async () => {
    const since = (await db.selectFrom("contacts").select("updated_at").where("contact_number", "=", 1200).executeTakeFirstOrThrow()).updated_at;
    const times = new Map((await db.selectFrom("contacts").select(["contact_number", "updated_at"]).execute()).map((r) => [r.contact_number, r.updated_at]));
    expect(await walkAll({ searchTokens: ["mar"], updatedSince: since }, 5)).toEqual(
      await expected((s) => prefixMatch(s, "mar") && times.get(s.number)! >= since),
    );
    expect(await walkAll({ searchTokens: ["mar"], emailKey: "maria1@example.com" }, 5)).toEqual([2]);
  });

  test("several contact types (a category) merge their walks in list order, page after page", async () => {
    const types = [typeIds.Lead!, typeIds.Other!];
    expect(await walkAll({ contactTypeIds: types }, 70)).toEqual(await expected((s) => s.type === "Lead" || s.type === "Other"));
    const since = (await db.selectFrom("contacts").select("updated_at").where("contact_number", "=", 1500).executeTakeFirstOrThrow()).updated_at;
    const times = new Map((await db.selectFrom("contacts").select(["contact_number", "updated_at"]).execute()).map((r) => [r.contact_number, r.updated_at]));
    expect(await walkAll({ contactTypeIds: types, updatedSince: since }, 33)).toEqual(
      await expected((s) => (s.type === "Lead" || s.type === "Other") && times.get(s.number)! >= since),
    );
    expect(await walkAll({ contactTypeIds: [] }, 10)).toEqual([]);
  });

  test("an email or phone drives; type, tags and every search word are checked on its few rows", async () => {
    const [five] = (await findTagIds(db, projectId, ["five"]))!;
    // Contact 1 (index 0): Mark Marsh, mark0@example.com, tag five, type Customer.
    expect(await walkAll({ emailKey: "mark0@example.com", searchTokens: ["mar", "marsh"], tagIds: [five!], contactTypeIds: [typeIds.Customer!] }, 5)).toEqual([1]);
    expect(await walkAll({ emailKey: "mark0@example.com", searchTokens: ["mar", "stone"] }, 5)).toEqual([]);
    expect(await walkAll({ emailKey: "mark0@example.com", contactTypeIds: [typeIds.Lead!] }, 5)).toEqual([]);
    expect(await walkAll({ emailKey: "mark0@example.com", phoneKey: "+14155550100" }, 5)).toEqual([]);
  });

  test("a dense 1-letter word (no driver: the contacts are walked) alone, with a tag and with a type", async () => {
    const [five] = (await findTagIds(db, projectId, ["five"]))!;
    expect(await walkAll({ searchTokens: ["m"] }, 150)).toEqual(await expected((s) => prefixMatch(s, "m")));
    expect(await walkAll({ searchTokens: ["m", "s"] }, 90)).toEqual(await expected((s) => prefixMatch(s, "m") && prefixMatch(s, "s")));
    expect(await walkAll({ searchTokens: ["m"], tagIds: [five!] }, 40)).toEqual(await expected((s) => prefixMatch(s, "m") && s.tags.includes("five")));
    expect(await walkAll({ searchTokens: ["m"], contactTypeIds: [typeIds.Lead!, typeIds.Other!] }, 40)).toEqual(
      await expected((s) => prefixMatch(s, "m") && (s.type === "Lead" || s.type === "Other")),
    );
  });

  test("several words: the rarest drives, in any order, and each must match", async () => {
    const both = await expected((s) => prefixMatch(s, "mar") && prefixMatch(s, "stone"));
    expect(both.length).toBeGreaterThan(0);
    expect(await walkAll({ searchTokens: ["mar", "stone"] }, 25)).toEqual(both);
    expect(await walkAll({ searchTokens: ["stone", "mar"] }, 25)).toEqual(both);
    expect(await walkAll({ searchTokens: ["m", "marsh", "paul"] }, 25)).toEqual(await expected((s) => ["m", "marsh", "paul"].every((t) => prefixMatch(s, t))));
  });

  test("a rare prefix (sorted) with updatedSince and a type, page after page", async () => {
    const since = (await db.selectFrom("contacts").select("updated_at").where("contact_number", "=", 100).executeTakeFirstOrThrow()).updated_at;
    const times = new Map((await db.selectFrom("contacts").select(["contact_number", "updated_at"]).execute()).map((r) => [r.contact_number, r.updated_at]));
    expect(await walkAll({ searchTokens: ["paul1"], updatedSince: since, contactTypeIds: [typeIds.Lead!] }, 7)).toEqual(
      await expected((s) => prefixMatch(s, "paul1") && s.type === "Lead" && times.get(s.number)! >= since),
    );
  });
});
