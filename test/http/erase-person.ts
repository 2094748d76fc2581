/**
 * What the erasure tests share (erase*.test.ts, admin-erase.test.ts; docs/import-export.md §3): a
 * person whose data is easy to look for (every value carries a word found nowhere else),
 * searches of text and of every table of the database for it, and the shape an event about
 * an erased contact must have.
 */
import { expect } from "bun:test";
import type { SideDatabase } from "../helpers/side-db.ts";

export interface Person {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  city: string;
  street: string;
  notes: string;
  createBody: Record<string, unknown>;
  /** Lower-cased strings that only this person's data contains. */
  needles: string[];
}

const letters = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => String.fromCharCode(97 + (b % 26))).join("");

/** A person with every contact field set, each value unique to it; `Nickname` must be a text custom field of the project. */
export function cannedPerson(): Person {
  const sfx = letters(8);
  const firstName = `Zephyrine${sfx.slice(0, 4)}`;
  const lastName = `Quillfeather${sfx}`;
  const email = `zephyrine.${sfx}@erase-test.example.org`;
  const digits = String(1000 + (crypto.getRandomValues(new Uint16Array(1))[0]! % 9000));
  const phone = `+1415555${digits}`;
  const city = `Quillton${sfx}`;
  const street = `17 Larkspur${sfx} Lane`;
  const notes = `Prefers calls after six. NOTE-${sfx}.`;
  const nickname = `Zephy-${sfx}`;
  const createBody = {
    firstName,
    lastName,
    email,
    phone,
    businessName: `Botanicals${sfx} Ltd`,
    website: `https://zephyrine-${sfx}.example.org/`,
    address: { line1: street, line2: "Flat 3", city, state: "Oregon", zip: "97035", country: "US" },
    notes,
    tags: ["vip", "newsletter"],
    customFields: { Nickname: nickname },
  };
  const needles = [firstName, lastName, email, phone.slice(2), city, street, `Botanicals${sfx}`, `NOTE-${sfx}`, nickname, `zephyrine-${sfx}`];
  return { firstName, lastName, email, phone, city, street, notes, createBody, needles: needles.map((s) => s.toLowerCase()) };
}

/** The needles found in `text`, case-insensitively. */
export const hitsIn = (text: string, needles: string[]) => needles.filter((n) => text.toLowerCase().includes(n));

export const ids = (c: { contactId: string }) => c.contactId;

/** A column's value as text: blobs decoded as UTF-8, JSON columns (PostgreSQL) serialised. */
function asText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Every table of the database (SQLite: sqlite_master; PostgreSQL: the schemas besides the system's). */
async function tables(db: SideDatabase): Promise<string[]> {
  if (db.backend === "sqlite") {
    return (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => `"${r.name}"`);
  }
  const rows = await db.all<{ s: string; t: string }>(
    "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
  );
  return rows.map((r) => `"${r.s}"."${r.t}"`);
}

/** Reads every row of every table; table name (unquoted, schema dropped) → the needles found in it. */
export async function databaseHits(db: SideDatabase, needles: string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  const all = await tables(db);
  if (all.length < 10) throw new Error(`only ${all.length} tables found: ${all.join(", ")}`);
  for (const table of all) {
    const rows = await db.all(`SELECT * FROM ${table}`);
    const text = rows.map((row) => Object.values(row).map(asText).join("\u0000")).join("\n");
    const hits = hitsIn(text, needles);
    if (hits.length > 0) found.set(table.split(".").at(-1)!.replaceAll('"', ""), hits);
  }
  return found;
}

const contactIdOf = (e: any): string | undefined => e.data?.contact?.contactId ?? e.data?.interactionLog?.contactId;

/** The events whose contact (or interaction log's contact) is one of `contactIds`. */
export const eventsAbout = (events: any[], contactIds: string[]) => events.filter((e) => contactIds.includes(contactIdOf(e) ?? ""));

/** `object` with every value but those of `kept` null. */
export const nulledExcept = (object: Record<string, unknown>, kept: string[]) =>
  Object.fromEntries(Object.entries(object).map(([k, v]) => [k, kept.includes(k) ? v : null]));

/**
 * `after` is `before` (the same event as stored before the erase) with the contact's data
 * removed (docs/import-export.md §3): every contact field but contactId null, the interaction log's
 * fields but id and contactId null, the form submission's values null; the rest as it was.
 */
export function expectErasedEvent(after: any, before: any) {
  const { data: dataAfter, ...restAfter } = after;
  const { data, ...rest } = before;
  expect(restAfter).toEqual(rest);
  const expected: Record<string, unknown> = { ...data, contact: nulledExcept(data.contact, ["contactId"]) };
  if (before.event === "interaction_log.created") expected.interactionLog = nulledExcept(data.interactionLog, ["id", "contactId"]);
  if (before.event === "web_form.submitted") expected.submission = { ...data.submission, values: null };
  // contact.updated's former values are the person's too (docs/api.md §19.4).
  if (before.event === "contact.updated" && data.previous) expected.previous = null;
  expect(dataAfter).toEqual(expected);
}
