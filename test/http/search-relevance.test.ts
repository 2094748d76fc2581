/**
 * `sort=relevance` (docs/api.md §11.6): exact word matches before prefix matches before
 * typo matches, ties by updatedAt desc; only with `search`; cursors walk every match once in
 * both orders and are bound to their sort as to their filters (docs/api.md §5).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, walk, type Api, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
}, 60_000);
afterAll(() => server.stop());

interface Fixture {
  api: Api;
  id: Record<string, string>;
  create: (body: Record<string, unknown>) => Promise<any>;
  /** The contactIds of one page of 200, in the server's order. */
  list: (query: Record<string, string | number>) => Promise<string[]>;
  /** PATCHes the contact once the clock has passed every updatedAt given out so far. */
  touch: (contactId: string) => Promise<void>;
}

/** A project of its own holding `people`, created in the order given. */
async function fixture(people: Record<string, Record<string, unknown>> = {}): Promise<Fixture> {
  const p = await server.newProject();
  const api: Api = (method, path, opts = {}) => server.api(method, path, { ...opts, key: p.key });
  let latest = 0;
  const create = async (body: Record<string, unknown>) => {
    const res = await api("POST", "/contacts", { body });
    expectStatus(res, 201);
    latest = Math.max(latest, Date.parse(res.json.updatedAt));
    return res.json;
  };
  const list = async (query: Record<string, string | number>) => {
    const res = await api("GET", "/contacts", { query: { limit: 200, ...query } });
    expectStatus(res, 200);
    expect(res.json.pagination.hasMore).toBe(false);
    return res.json.data.map((c: any) => c.contactId as string);
  };
  const touch = async (contactId: string) => {
    await until(() => Date.now() > latest + 1, { what: "the clock past the last write" });
    const res = await api("PATCH", `/contacts/${contactId}`, { body: { notes: `touched ${Date.now()}` } });
    expectStatus(res, 200);
    latest = Math.max(latest, Date.parse(res.json.updatedAt));
  };
  const id: Record<string, string> = {};
  for (const [name, body] of Object.entries(people)) id[name] = (await create(body)).contactId;
  return { api, id, create, list, touch };
}

describe("sort=relevance orders exact, then prefix, then typo, then updatedAt desc (docs/api.md §11.6)", () => {
  test("exact word matches come before prefix matches, however old; ties by updatedAt desc", async () => {
    const f = await fixture({
      p1: { firstName: "Anders", lastName: "Berg" },
      e1: { firstName: "Ander", lastName: "Nilsson" },
      p2: { firstName: "Andersen", lastName: "Holm" },
      e2: { firstName: "Ander", lastName: "Lind" },
      p3: { firstName: "Anderberg", lastName: "Kvist" },
      other: { firstName: "Bob", lastName: "Stone" },
    });
    const { p1, p2, p3, e1, e2 } = f.id;
    expect(await f.list({ search: "ander" })).toEqual([p3, e2, p2, e1, p1]); // the default: updatedAt desc
    expect(await f.list({ search: "ander", sort: "updatedAt" })).toEqual([p3, e2, p2, e1, p1]);
    expect(await f.list({ search: "ander", sort: "relevance" })).toEqual([e2, e1, p3, p2, p1]);
    await f.touch(e1!);
    expect(await f.list({ search: "ander", sort: "relevance" })).toEqual([e1, e2, p3, p2, p1]);
    await f.touch(p1!);
    expect(await f.list({ search: "ander", sort: "relevance" })).toEqual([e1, e2, p1, p3, p2]);
    expect(await f.list({ search: "ander" })).toEqual([p1, e1, p3, e2, p2]);
    // Pages of every size: a first page that holds the exact matches whole and then prefix
    // matches, one that holds them exactly, one that ends inside them; the later pages go on.
    for (const limit of [1, 2, 3, 4]) {
      const { items } = await walk(f.api, "/contacts", { search: "ander", sort: "relevance", limit });
      expect({ limit, got: items.map((c) => c.contactId) }).toEqual({ limit, got: [e1, e2, p1, p3, p2] });
    }
  });

  test("a contact ranks by its weakest word: every word exact first, then any word by prefix", async () => {
    const f = await fixture({
      adaLove: { firstName: "Ada", lastName: "Love" },
      adamLove: { firstName: "Adam", lastName: "Love" },
      adaLovelace: { firstName: "Ada", lastName: "Lovelace" },
      adamLovell: { firstName: "Adam", lastName: "Lovell" },
      other: { firstName: "Ada", lastName: "Byron" },
    });
    const { adaLove, adamLove, adaLovelace, adamLovell } = f.id;
    expect(await f.list({ search: "ada love", sort: "relevance" })).toEqual([adaLove, adamLovell, adaLovelace, adamLove]);
    expect(await f.list({ search: "love ada", sort: "relevance" })).toEqual([adaLove, adamLovell, adaLovelace, adamLove]);
    await f.touch(adaLovelace!);
    expect(await f.list({ search: "ada love", sort: "relevance" })).toEqual([adaLove, adaLovelace, adamLovell, adamLove]);
  });

  test("a word's best match counts: a contact matching it by prefix and exactly ranks as exact; relevance combines with filters", async () => {
    const f = await fixture({
      both: { firstName: "Andersen", lastName: "Ander", tags: ["north"] },
      prefix: { firstName: "Anders", lastName: "Holm", tags: ["north"] },
      exact: { firstName: "Ander", lastName: "Lind", tags: ["south"] },
    });
    const { both, prefix, exact } = f.id;
    expect(await f.list({ search: "ander", sort: "relevance" })).toEqual([exact, both, prefix]);
    expect(await f.list({ search: "ander", sort: "relevance", tag: "north" })).toEqual([both, prefix]);
    const { items } = await walk(f.api, "/contacts", { search: "ander", sort: "relevance", tag: "north", limit: 1 });
    expect(items.map((c) => c.contactId)).toEqual([both, prefix]);
  });

  test("an email label matched whole ranks before a name or a label matched by prefix", async () => {
    const f = await fixture({
      prefixDomain: { firstName: "Pia", email: "pia@examplesite.org" },
      exactDomain: { firstName: "Eli", email: "eli@example.org" },
      prefixName: { firstName: "Exampleton" },
    });
    const { prefixDomain, exactDomain, prefixName } = f.id;
    expect(await f.list({ search: "example", sort: "relevance" })).toEqual([exactDomain, prefixName, prefixDomain]);
    expect(await f.list({ search: "example.org", sort: "relevance" })).toEqual([exactDomain]);
  });

  test("typo matches rank alike, by updatedAt desc; a word matched by prefix somewhere has no typo matches", async () => {
    const f = await fixture({
      a: { firstName: "Ada", lastName: "Lovelace" },
      b: { firstName: "Bea", lastName: "Lovelace" },
      c: { firstName: "Cy", lastName: "Lovelass" },
      other: { firstName: "Bob", lastName: "Stone" },
    });
    const { a, b, c } = f.id;
    // "lovelase" has no exact or prefix match: every match is a typo match, ranked alike.
    expect(await f.list({ search: "lovelase", sort: "relevance" })).toEqual([c, b, a]);
    await f.touch(a!);
    expect(await f.list({ search: "lovelase", sort: "relevance" })).toEqual([a, c, b]);
    // Once a word matches by prefix somewhere, its typo matches are gone.
    const d = (await f.create({ firstName: "Di", lastName: "Lovelaser" })).contactId;
    expect(await f.list({ search: "lovelase", sort: "relevance" })).toEqual([d]);
    expect(await f.list({ search: "lovelace", sort: "relevance" })).toEqual([a, b]);
  });
});

describe("sort is checked like any list parameter (docs/api.md §11.5, §11.6)", () => {
  test("sort=relevance without search is 422 sort", async () => {
    const f = await fixture({ a: { firstName: "Ada" } });
    expectError(await f.api("GET", "/contacts", { query: { sort: "relevance" } }), "ERR_FORM_VALIDATION", "sort");
    expectError(await f.api("GET", "/contacts", { query: { sort: "relevance", tag: "vip" } }), "ERR_FORM_VALIDATION", "sort");
  });

  test("a search of only blanks is no search: sort=relevance with it is 422 sort, and no contact is listed twice", async () => {
    const f = await fixture({ a: { firstName: "Ada" }, b: { firstName: "Bea" } });
    expect(await f.list({ search: "   " })).toEqual([f.id.b, f.id.a]); // as without search
    for (const search of ["   ", " \t ", "\u0001"]) {
      expectError(await f.api("GET", "/contacts", { query: { search, sort: "relevance" } }), "ERR_FORM_VALIDATION", "sort");
    }
  });

  test.each([["name"], ["best"]])("sort=%p is 422 sort", async (sort) => {
    const f = await fixture({ a: { firstName: "Ada" } });
    expectError(await f.api("GET", "/contacts", { query: { search: "ada", sort } }), "ERR_FORM_VALIDATION", "sort");
  });
});

describe("cursors in both orders (docs/api.md §5, §11.6)", () => {
  let f: Fixture;
  let exact: string[];
  let prefix: string[];
  beforeAll(async () => {
    f = await fixture();
    exact = [];
    prefix = [];
    // Exact and prefix matches interleaved in time, so both orders differ and the
    // relevance walk crosses from exact to prefix inside a page.
    for (let i = 0; i < 5; i++) {
      prefix.push((await f.create({ firstName: "Kasimirova", lastName: `Prefix${i}` })).contactId);
      exact.push((await f.create({ firstName: "Kasimir", lastName: `Exact${i}` })).contactId);
    }
    prefix.push((await f.create({ firstName: "Kasimiro", lastName: "Late" })).contactId);
    await f.create({ firstName: "Bob", lastName: "Stone" });
  }, 60_000);

  const newestFirst = (ids: string[]) => [...ids].reverse();

  test.each([[2], [3]])("sort=relevance with limit %d walks every match once: exact ones, then prefix ones", async (limit) => {
    const whole = await f.list({ search: "kasimir", sort: "relevance" });
    expect(whole).toEqual([...newestFirst(exact), ...newestFirst(prefix)]);
    const { items, pages } = await walk(f.api, "/contacts", { search: "kasimir", sort: "relevance", limit });
    expect(items.map((c) => c.contactId)).toEqual(whole);
    expect(pages.length).toBe(Math.ceil(whole.length / limit));
    expect(pages.at(-1)!.pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  test.each([[2], [3]])("the default sort with limit %d walks every match once, newest first", async (limit) => {
    const whole = await f.list({ search: "kasimir" });
    expect([...whole].sort()).toEqual([...exact, ...prefix].sort());
    const { items } = await walk(f.api, "/contacts", { search: "kasimir", limit });
    expect(items.map((c) => c.contactId)).toEqual(whole);
    const { items: explicit } = await walk(f.api, "/contacts", { search: "kasimir", sort: "updatedAt", limit });
    expect(explicit.map((c) => c.contactId)).toEqual(whole);
  });

  test("a relevance walk stays right when a contact moves between pages: no match twice, none lost that kept its place", async () => {
    const g = await fixture();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await g.create({ firstName: "Tamsin", lastName: `T${i}` })).contactId);
    for (let i = 0; i < 3; i++) ids.push((await g.create({ firstName: "Tamsinella", lastName: `P${i}` })).contactId);
    const first = await g.api("GET", "/contacts", { query: { search: "tamsin", sort: "relevance", limit: 3 } });
    expectStatus(first, 200);
    const seen: string[] = first.json.data.map((c: any) => c.contactId);
    // The oldest exact match, not yet seen, is touched: it jumps ahead of the cursor.
    await g.touch(ids[0]!);
    const { items } = await walk(g.api, "/contacts", { search: "tamsin", sort: "relevance", limit: 3, cursor: first.json.pagination.nextCursor });
    const all = [...seen, ...items.map((c) => c.contactId)];
    expect(new Set(all).size).toBe(all.length);
    for (const id of ids.slice(1)) expect(all).toContain(id); // keyset pages (docs/api.md §5)
    for (const id of all) expect(ids).toContain(id);
  });

  test("a cursor reused with another sort is 422 cursor, as with another search", async () => {
    const rel = await f.api("GET", "/contacts", { query: { search: "kasimir", sort: "relevance", limit: 2 } });
    const relCursor = rel.json.pagination.nextCursor;
    expect(typeof relCursor).toBe("string");
    expectError(await f.api("GET", "/contacts", { query: { search: "kasimir", limit: 2, cursor: relCursor } }), "ERR_FORM_VALIDATION", "cursor");
    expectError(await f.api("GET", "/contacts", { query: { search: "kasimir", sort: "updatedAt", limit: 2, cursor: relCursor } }), "ERR_FORM_VALIDATION", "cursor");
    expectError(await f.api("GET", "/contacts", { query: { search: "kasimi", sort: "relevance", limit: 2, cursor: relCursor } }), "ERR_FORM_VALIDATION", "cursor");
    expectError(await f.api("GET", "/contacts", { query: { sort: "updatedAt", limit: 2, cursor: relCursor } }), "ERR_FORM_VALIDATION", "cursor");

    const def = await f.api("GET", "/contacts", { query: { search: "kasimir", limit: 2 } });
    const defCursor = def.json.pagination.nextCursor;
    expect(typeof defCursor).toBe("string");
    expectError(await f.api("GET", "/contacts", { query: { search: "kasimir", sort: "relevance", limit: 2, cursor: defCursor } }), "ERR_FORM_VALIDATION", "cursor");
    expectError(await f.api("GET", "/contacts", { query: { search: "kasimi", limit: 2, cursor: defCursor } }), "ERR_FORM_VALIDATION", "cursor");
    // The same sort and search take it.
    expectStatus(await f.api("GET", "/contacts", { query: { search: "kasimir", sort: "relevance", limit: 2, cursor: relCursor } }), 200);
    expectStatus(await f.api("GET", "/contacts", { query: { search: "kasimir", limit: 2, cursor: defCursor } }), 200);
  });
});
