/**
 * `search` through the term index (docs/api.md §11.6, §11): a contact matching through several
 * terms appears once, pages walk every match exactly once, every token must match.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, walk, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

let server: ServerHandle;
/** The 30 "Marion"s of beforeAll: no test changes them (tests that write make their own contacts). */
const created: string[] = [];

const ids = (res: { json: any }) => res.json.data.map((c: { contactId: string }) => c.contactId);

async function create(body: Record<string, unknown>): Promise<any> {
  const res = await server.api("POST", "/contacts", { body });
  expectStatus(res, 201);
  return res.json;
}

beforeAll(async () => {
  server = await startServer();
  // 30 "Marion"s whose emails also start with "mar": each matches "mar" through two terms.
  for (let i = 0; i < 30; i++) {
    const c = await create({ firstName: "Marion", lastName: i % 2 ? "Marsh" : "Stone", email: `mar${i}@example.com`, tags: i % 3 ? [] : ["third"] });
    created.push(c.contactId);
  }
  await create({ firstName: "Other", email: "other@example.com" });
}, 60_000);
afterAll(() => server.stop());

describe("search", () => {
  test("a contact matching through several terms appears once, pages cover every match once", async () => {
    const { items, pages } = await walk(server.api, "/contacts", { search: "mar", limit: 7 });
    const ids = items.map((c) => c.contactId);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...created].sort());
    expect(pages.length).toBe(5);
    const times = items.map((c) => c.updatedAt);
    expect([...times].sort().reverse()).toEqual(times);
  });

  test("every token of a multi-word search must match a term", async () => {
    const res = await server.api("GET", "/contacts", { query: { search: "marion marsh", limit: 200 } });
    expect(ids(res).sort()).toEqual(created.filter((_, i) => i % 2 === 1).sort());
    for (const c of res.json.data) expect(c.lastName).toBe("Marsh");
  });

  test("a page found by search shows each contact as GET /contacts/{contactId} does, its tags by name included", async () => {
    const tagged = await create({ firstName: "Tagwell", lastName: "Found", tags: ["zeta", "Alpha", "mid"] });
    const bare = await create({ firstName: "Tagwell", lastName: "Bare" });
    const res = await server.api("GET", "/contacts", { query: { search: "tagwell" } });
    expectStatus(res, 200);
    expect(ids(res)).toEqual([bare.contactId, tagged.contactId]);
    for (const c of res.json.data) {
      const one = await server.api("GET", `/contacts/${c.contactId}`);
      const { duplicateSignal: _, ...contact } = one.json;
      expect(c).toEqual(contact);
    }
    expect(res.json.data[1].tags.map((t: { name: string }) => t.name)).toEqual(["Alpha", "mid", "zeta"]);
    expect(res.json.data[0].tags).toEqual([]);
  });

  test("search combines with the other filters", async () => {
    const res = await server.api("GET", "/contacts", { query: { search: "marsh", tag: "third", limit: 200 } });
    const expected = created.filter((_, i) => i % 2 === 1 && i % 3 === 0);
    expect(ids(res).sort()).toEqual(expected.sort());
  });

  test("an updated contact moves to the top of its search results", async () => {
    const first = await create({ firstName: "Quillon", lastName: "First" });
    const second = await create({ firstName: "Quillon", lastName: "Second" });
    // The PATCH is stamped after the second contact's creation.
    await until(() => Date.now() > Date.parse(second.updatedAt) + 1, { what: "the clock past the second creation" });
    const before = await server.api("GET", "/contacts", { query: { search: "quillon" } });
    expect(ids(before)).toEqual([second.contactId, first.contactId]);
    const patched = await server.api("PATCH", `/contacts/${first.contactId}`, { body: { notes: "touched" } });
    expectStatus(patched, 200);
    const res = await server.api("GET", "/contacts", { query: { search: "quillon" } });
    expect(ids(res)).toEqual([first.contactId, second.contactId]);
    expect(res.json.data[0].updatedAt).toBe(patched.json.updatedAt);
    expect(Date.parse(res.json.data[0].updatedAt)).toBeGreaterThan(Date.parse(res.json.data[1].updatedAt));
  });

  test("a renamed contact is found by its new name only", async () => {
    const target = (await create({ firstName: "Oswaldo", lastName: "Pennywhistle", email: "oswaldo@example.com" })).contactId;
    expect(ids(await server.api("GET", "/contacts", { query: { search: "oswal" } }))).toEqual([target]);
    const renamed = await server.api("PATCH", `/contacts/${target}`, { body: { firstName: "Zelda", email: "zelda@example.com", lastName: null } });
    expectStatus(renamed, 200);
    expect(ids(await server.api("GET", "/contacts", { query: { search: "zel" } }))).toEqual([target]);
    for (const old of ["oswal", "penny", "oswaldo@example.com"]) {
      expect(ids(await server.api("GET", "/contacts", { query: { search: old } })), old).toEqual([]);
    }
  });
});
