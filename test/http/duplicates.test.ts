/**
 * Duplicates (docs/api.md §20.1), black box: GET /duplicates groups live contacts that share
 * a normalised email, a phone (its E.164 form), or a folded full name (case and accents
 * ignored) with the same businessName or email domain; never a name alone. Keys held by the
 * same contacts make one group with every reason; the group written to most recently comes
 * first; pages follow cursors; trashed, merged-away and erased contacts leave their groups.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { sleep, startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

async function contactIn(p: ProjectInfo, body: Record<string, unknown>): Promise<string> {
  // Each write its own millisecond, so "most recent" is never a tie.
  await sleep(3);
  const res = await p.api("POST", "/contacts", { body });
  expectStatus(res, 201);
  return res.json.contactId;
}

interface Group {
  reasons: string[];
  contactIds: string[];
}

/** Every group of the project, across every page. */
async function groups(p: ProjectInfo, query: Record<string, any> = {}): Promise<Group[]> {
  return (await walk(p.api, "/duplicates", query)).items;
}

/** A group's members as a sorted set, to compare without caring for their order. */
const members = (g: Group) => [...g.contactIds].sort();
const sets = (gs: Group[]) => gs.map(members);

describe("GET /duplicates groups contacts that share a key", () => {
  test("the same email, whatever its case and surrounding spaces, makes a group with reason email", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "Ann", email: "Ann.Lee@Example.com" });
    const b = await contactIn(p, { firstName: "Bea", email: "  ann.lee@example.COM " });
    await contactIn(p, { firstName: "Cy", email: "cy@example.com" });
    expect(await groups(p)).toEqual([{ reasons: ["email"], contactIds: [b, a] }]);
  });

  test("the same phone in different formats (one E.164 number) makes a group with reason phone", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "Ann", phone: "+14155550100" });
    const b = await contactIn(p, { firstName: "Bea", phone: "+1 (415) 555-0100" });
    const c = await contactIn(p, { firstName: "Cy", phone: "+1 415.555.0100" });
    await contactIn(p, { firstName: "Dee", phone: "+14155550199" });
    expect(await groups(p)).toEqual([{ reasons: ["phone"], contactIds: [c, b, a] }]);
  });

  test("the same full name, case and accents ignored, with the same businessName makes a group with reason name", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "José", lastName: "Müller", businessName: "Acme GmbH" });
    const b = await contactIn(p, { firstName: "jose", lastName: "MULLER", businessName: "acme gmbh" });
    expect(await groups(p)).toEqual([{ reasons: ["name"], contactIds: [b, a] }]);
  });

  test("the same full name, case and accents ignored, with the same email domain makes a group with reason name", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "José", lastName: "Müller", email: "jose@acme.example" });
    const b = await contactIn(p, { firstName: "jose", lastName: "muller", email: "j.mueller@ACME.example" });
    expect(await groups(p)).toEqual([{ reasons: ["name"], contactIds: [b, a] }]);
  });

  test("the same name alone (another businessName, another email domain, or none) makes no group", async () => {
    const p = await srv.newProject();
    await contactIn(p, { firstName: "José", lastName: "Müller", businessName: "Acme", email: "jose@acme.example" });
    await contactIn(p, { firstName: "Jose", lastName: "Muller", businessName: "Globex", email: "jose@globex.example" });
    await contactIn(p, { firstName: "jose", lastName: "müller" });
    expect(await groups(p)).toEqual([]);
  });

  test("contacts sharing several keys make one group whose reasons combine", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "Ann", lastName: "Lee", email: "ann@acme.example", phone: "+14155550100" });
    const b = await contactIn(p, { firstName: "ANN", lastName: "lée", email: "Ann@Acme.example", phone: "+1 415 555 0100" });
    expect(await groups(p)).toEqual([{ reasons: ["email", "phone", "name"], contactIds: [b, a] }]);
  });

  test("a contact sharing one key with one contact and another key with another is in two groups", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "A", email: "shared@example.com" });
    const b = await contactIn(p, { firstName: "B", phone: "+14155550100" });
    const c = await contactIn(p, { firstName: "C", email: "shared@example.com", phone: "+14155550100" });
    const found = await groups(p);
    expect(found).toHaveLength(2);
    expect(found).toContainEqual({ reasons: ["email"], contactIds: [c, a] });
    expect(found).toContainEqual({ reasons: ["phone"], contactIds: [c, b] });
  });

  test("a group lists its contacts most recently updated first", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "A", email: "same@example.com" });
    const b = await contactIn(p, { firstName: "B", email: "same@example.com" });
    const c = await contactIn(p, { firstName: "C", email: "same@example.com" });
    expect((await groups(p))[0]!.contactIds).toEqual([c, b, a]);
    await sleep(3);
    expectStatus(await p.api("PATCH", `/contacts/${a}`, { body: { notes: "touched" } }), 200);
    expect((await groups(p))[0]!.contactIds).toEqual([a, c, b]);
  });
});

describe("order and pages", () => {
  test("the group written to most recently comes first; a PATCH of a member moves its group to the top", async () => {
    const p = await srv.newProject();
    const e1 = await contactIn(p, { firstName: "E1", email: "one@example.com" });
    const e2 = await contactIn(p, { firstName: "E2", email: "one@example.com" });
    const f1 = await contactIn(p, { firstName: "F1", email: "two@example.com" });
    const f2 = await contactIn(p, { firstName: "F2", email: "two@example.com" });
    const g1 = await contactIn(p, { firstName: "G1", phone: "+14155550100" });
    const g2 = await contactIn(p, { firstName: "G2", phone: "+14155550100" });
    expect(sets(await groups(p))).toEqual([[g1, g2].sort(), [f1, f2].sort(), [e1, e2].sort()]);
    await sleep(3);
    expectStatus(await p.api("PATCH", `/contacts/${e1}`, { body: { lastName: "Moved" } }), 200);
    expect(sets(await groups(p))).toEqual([[e1, e2].sort(), [g1, g2].sort(), [f1, f2].sort()]);
    await sleep(3);
    expectStatus(await p.api("PATCH", `/contacts/${f2}`, { body: { notes: "up" } }), 200);
    expect(sets(await groups(p))).toEqual([[f1, f2].sort(), [e1, e2].sort(), [g1, g2].sort()]);
  });

  test("limit and cursor page through every group once, in order", async () => {
    const p = await srv.newProject();
    for (let i = 0; i < 7; i++) {
      await contactIn(p, { firstName: `A${i}`, email: `g${i}@example.com` });
      await contactIn(p, { firstName: `B${i}`, email: `g${i}@example.com` });
    }
    const all = await groups(p, { limit: 200 });
    expect(all).toHaveLength(7);
    const { items, pages } = await walk(p.api, "/duplicates", { limit: 3 });
    expect(pages.map((page) => page.data.length)).toEqual([3, 3, 1]);
    expect(pages.map((page) => page.pagination.hasMore)).toEqual([true, true, false]);
    expect(pages.at(-1).pagination.nextCursor).toBeNull();
    expect(items).toEqual(all);
    const first = await p.api("GET", "/duplicates", { query: { limit: 1 } });
    expectStatus(first, 200);
    expect(first.json.data).toEqual([all[0]]);
    expect(typeof first.json.pagination.nextCursor).toBe("string");
  });

  test("paging one group at a time never shows a group twice nor splits its reasons, when one write made several groups at once", async () => {
    const p = await srv.newProject();
    // C's creation makes two groups in one write: {A, C} by email and phone, {C, D} by name.
    const a = await contactIn(p, { firstName: "Ann", email: "shared@example.com", phone: "+14155550100" });
    const d = await contactIn(p, { firstName: "Cleo", lastName: "Park", businessName: "Acme" });
    const c = await contactIn(p, { firstName: "Cleo", lastName: "Park", businessName: "ACME", email: "shared@example.com", phone: "+14155550100" });
    const whole = await groups(p, { limit: 10 });
    expect(whole).toHaveLength(2);
    expect(whole).toContainEqual({ reasons: ["email", "phone"], contactIds: [c, a] });
    expect(whole).toContainEqual({ reasons: ["name"], contactIds: [c, d] });
    const paged = await groups(p, { limit: 1 });
    expect(paged).toEqual(whole);
  });

  test("422 for a limit out of 1–200 or a made-up cursor, naming the parameter", async () => {
    const p = await srv.newProject();
    expectError(await p.api("GET", "/duplicates", { query: { limit: 0 } }), "ERR_FORM_VALIDATION", "limit");
    expectError(await p.api("GET", "/duplicates", { query: { limit: 201 } }), "ERR_FORM_VALIDATION", "limit");
    expectError(await p.api("GET", "/duplicates", { query: { limit: "ten" } }), "ERR_FORM_VALIDATION", "limit");
    expectError(await p.api("GET", "/duplicates", { query: { cursor: "not-a-cursor" } }), "ERR_FORM_VALIDATION", "cursor");
  });
});

describe("contacts that leave", () => {
  test("a trashed contact leaves its group (the group dissolves at one member) and comes back with restore", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "A", email: "same@example.com" });
    const b = await contactIn(p, { firstName: "B", email: "same@example.com" });
    const c = await contactIn(p, { firstName: "C", email: "same@example.com" });
    expectStatus(await p.api("DELETE", `/contacts/${c}`), 204);
    expect(await groups(p)).toEqual([{ reasons: ["email"], contactIds: [b, a] }]);
    expectStatus(await p.api("DELETE", `/contacts/${b}`), 204);
    expect(await groups(p)).toEqual([]);
    expectStatus(await p.api("POST", `/contacts/${b}/restore`), 200);
    expect(await groups(p)).toEqual([{ reasons: ["email"], contactIds: [b, a] }]);
  });

  test("a merged-away contact leaves its group", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "A", email: "same@example.com" });
    const b = await contactIn(p, { firstName: "B", email: "same@example.com" });
    const c = await contactIn(p, { firstName: "C", email: "same@example.com" });
    expectStatus(await p.api("POST", `/contacts/${a}/merge`, { body: { contactIds: [b] } }), 200);
    expect(sets(await groups(p))).toEqual([[a, c].sort()]);
    expectStatus(await p.api("POST", `/contacts/${a}/merge`, { body: { contactIds: [c] } }), 200);
    expect(await groups(p)).toEqual([]);
  });

  test("an erased contact leaves its group", async () => {
    const p = await srv.newProject();
    await contactIn(p, { firstName: "A", phone: "+14155550100" });
    const b = await contactIn(p, { firstName: "B", phone: "+14155550100" });
    await srv.cli(["contact", "erase", "--project", p.id, b, "--json"]);
    expect(await groups(p)).toEqual([]);
  });

  test("a group dissolves when a member's email changes, and forms again when it changes back", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "A", email: "same@example.com" });
    const b = await contactIn(p, { firstName: "B", email: "same@example.com" });
    expectStatus(await p.api("PATCH", `/contacts/${b}`, { body: { email: "other@example.com" } }), 200);
    expect(await groups(p)).toEqual([]);
    expectStatus(await p.api("PATCH", `/contacts/${b}`, { body: { email: "SAME@example.com" } }), 200);
    expect(await groups(p)).toEqual([{ reasons: ["email"], contactIds: [b, a] }]);
    expectStatus(await p.api("PATCH", `/contacts/${a}`, { body: { email: null } }), 200);
    expect(await groups(p)).toEqual([]);
  });

  test("a name group dissolves when a member's businessName changes", async () => {
    const p = await srv.newProject();
    await contactIn(p, { firstName: "Zoë", lastName: "Ng", businessName: "Acme" });
    const b = await contactIn(p, { firstName: "Zoe", lastName: "NG", businessName: "acme" });
    expect((await groups(p)).map((g) => g.reasons)).toEqual([["name"]]);
    expectStatus(await p.api("PATCH", `/contacts/${b}`, { body: { businessName: "Initech" } }), 200);
    expect(await groups(p)).toEqual([]);
  });
});

describe("access", () => {
  test("needs contacts:read: 403 for a key without it", async () => {
    const p = await srv.newProject();
    const writer = await srv.newKey(["contacts:write", "interactions:write", "webhooks:manage"], p.id);
    expectError(await p.api("GET", "/duplicates", { key: writer }), "ERR_FORBIDDEN");
    const reader = await srv.newKey(["contacts:read"], p.id);
    expectStatus(await p.api("GET", "/duplicates", { key: reader }), 200);
    expectError(await p.api("GET", "/duplicates", { key: null }), "ERR_UNAUTHORIZED");
  });

  test("projects are isolated: a project sees only its own groups, and another project's cursor is 422", async () => {
    const p = await srv.newProject();
    const q = await srv.newProject();
    const a = await contactIn(p, { firstName: "A", email: "same@example.com" });
    await contactIn(q, { firstName: "Q", email: "same@example.com" });
    expect(await groups(p)).toEqual([]);
    expect(await groups(q)).toEqual([]);
    const b = await contactIn(p, { firstName: "B", email: "same@example.com" });
    await contactIn(p, { firstName: "C", email: "c@example.com" });
    await contactIn(p, { firstName: "D", email: "c@example.com" });
    expect(sets(await groups(p))).toContainEqual([a, b].sort());
    expect(await groups(q)).toEqual([]);
    const page = await p.api("GET", "/duplicates", { query: { limit: 1 } });
    expect(page.json.pagination.hasMore).toBe(true);
    expectError(await q.api("GET", "/duplicates", { query: { cursor: page.json.pagination.nextCursor } }), "ERR_FORM_VALIDATION", "cursor");
  });
});
