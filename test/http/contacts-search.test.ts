/**
 * `search` through the term index (decisions §5, §12): a contact matching through several
 * terms appears once, pages walk every match exactly once, every token must match.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, walk, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
const created: string[] = [];

beforeAll(async () => {
  server = await startServer();
  // 30 "Marion"s whose emails also start with "mar": each matches "mar" through two terms.
  for (let i = 0; i < 30; i++) {
    const res = await server.api("POST", "/contacts", {
      body: { firstName: "Marion", lastName: i % 2 ? "Marsh" : "Stone", email: `mar${i}@example.com`, tags: i % 3 ? [] : ["third"] },
    });
    created.push(res.json.contactId);
  }
  await server.api("POST", "/contacts", { body: { firstName: "Other", email: "other@example.com" } });
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
    expect(res.json.data).toHaveLength(15);
    for (const c of res.json.data) expect(c.lastName).toBe("Marsh");
  });

  test("search combines with the other filters", async () => {
    const res = await server.api("GET", "/contacts", { query: { search: "marsh", tag: "third", limit: 200 } });
    const expected = created.filter((_, i) => i % 2 === 1 && i % 3 === 0);
    expect(res.json.data.map((c: { contactId: string }) => c.contactId).sort()).toEqual(expected.sort());
  });

  test("an updated contact moves to the top of its search results", async () => {
    const target = created[0]!;
    await server.api("PATCH", `/contacts/${target}`, { body: { notes: "touched" } });
    const res = await server.api("GET", "/contacts", { query: { search: "mar", limit: 1 } });
    expect(res.json.data[0].contactId).toBe(target);
  });

  test("a renamed contact is found by its new name only", async () => {
    const target = created[1]!;
    await server.api("PATCH", `/contacts/${target}`, { body: { firstName: "Zelda", email: "zelda@example.com", lastName: null } });
    const byNew = await server.api("GET", "/contacts", { query: { search: "zel" } });
    expect(byNew.json.data.map((c: { contactId: string }) => c.contactId)).toEqual([target]);
    const byOld = await server.api("GET", "/contacts", { query: { search: "marion", limit: 200 } });
    expect(byOld.json.data.map((c: { contactId: string }) => c.contactId)).not.toContain(target);
  });
});
