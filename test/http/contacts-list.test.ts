import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, walk, type Api, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { expectContactShape, expectError, expectStatus } from "../helpers/expect.ts";
import { until } from "../helpers/until.ts";

let srv: ServerHandle;
let p: ProjectInfo; // a fresh project: the six people of beforeAll, never changed by a test
let api: Api;
let types: Record<string, any> = {};
const people: Record<string, any> = {};

const ids = (res: { json: any }) => res.json.data.map((c: any) => c.contactId);
const list = (query: Record<string, any> = {}) => api("GET", "/contacts", { query });

/** Resolves once the clock has moved past `iso`, so the next write gets a later updatedAt. */
const pastClock = (iso: string) => until(() => Date.now() > Date.parse(iso) + 1, { what: `the clock past ${iso}` });

/** Creates a contact through `via`; the next write of the test is stamped later than this one. */
async function create(via: Api, body: Record<string, unknown>) {
  const res = await via("POST", "/contacts", { body });
  expectStatus(res, 201);
  await pastClock(res.json.updatedAt);
  return res.json;
}

async function make(name: string, body: Record<string, unknown>) {
  people[name] = await create(api, body);
  return people[name];
}

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newProject({ name: "list-project" });
  api = p.api;
  const ct = await api("GET", "/contact-types");
  for (const t of ct.json.data) types[t.category] = t;

  await make("alice", { firstName: "Alice", lastName: "Zimmerman", email: "alice.z@example.com", tags: ["vip", "newsletter"], contactTypeId: types.Lead.id });
  await make("bob", { firstName: "Bob", lastName: "Quixote", email: "bob@sample.org", phone: "+1 (415) 555-0100", tags: ["vip"] });
  await make("carol", { firstName: "Mary Ann", lastName: "Carolson", email: "CAROL@Example.com", tags: ["newsletter"], contactTypeId: types.Lead.id });
  await make("dave", { businessName: "Davecorp", email: "info@davecorp.io", phone: "415-555-0100", contactTypeId: types.Personnel.id });
  await make("erin", { firstName: "Erin", lastName: "Alistair", phone: "+14155550100", tags: ["VIP", "newsletter", "partner"], contactTypeId: types.Other.id });
  await make("frank", { firstName: "Frank", lastName: "Xylo", email: "frank@example.com" });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

describe("GET /contacts shape and order", () => {
  test("the list answers { data, pagination: { nextCursor, hasMore } } with full contacts", async () => {
    const res = await list();
    expectStatus(res, 200);
    expect(Object.keys(res.json).sort()).toEqual(["data", "pagination"]);
    expect(Object.keys(res.json.pagination).sort()).toEqual(["hasMore", "nextCursor"]);
    expect(res.json.data).toHaveLength(6);
    for (const c of res.json.data) expectContactShape(c);
    expect(res.json.pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  test("contacts are listed by updatedAt, most recent first", async () => {
    const res = await list();
    expect(ids(res)).toEqual(["frank", "erin", "dave", "carol", "bob", "alice"].map((n) => people[n].contactId));
    const times = res.json.data.map((c: any) => Date.parse(c.updatedAt));
    for (let i = 1; i < times.length; i++) expect(times[i - 1]).toBeGreaterThan(times[i]);
  });

  test("a PATCHed contact moves to the front of the list", async () => {
    const own = await srv.newProject();
    const g = await create(own.api, { firstName: "Gina" });
    const h = await create(own.api, { firstName: "Hal" });
    expect(ids(await own.api("GET", "/contacts"))).toEqual([h.contactId, g.contactId]);
    const patched = await own.api("PATCH", `/contacts/${g.contactId}`, { body: { notes: "touched" } });
    expectStatus(patched, 200);
    expect(Date.parse(patched.json.updatedAt)).toBeGreaterThan(Date.parse(h.updatedAt));
    expect(ids(await own.api("GET", "/contacts"))).toEqual([g.contactId, h.contactId]);
  });
});

describe("filters", () => {
  test("email matches exactly and case-insensitively", async () => {
    expect(ids(await list({ email: "carol@example.com" }))).toEqual([people.carol.contactId]);
    expect(ids(await list({ email: "ALICE.Z@EXAMPLE.COM" }))).toEqual([people.alice.contactId]);
  });

  test("email ignores surrounding whitespace", async () => {
    expect(ids(await list({ email: "  frank@example.com " }))).toEqual([people.frank.contactId]);
  });

  test("email is exact, not a prefix", async () => {
    expect(ids(await list({ email: "frank@example" }))).toEqual([]);
  });

  test.each([["+14155550100"], ["415-555-0100"], ["+1 (415) 555-0100"], ["(415) 5550100"]])(
    "phone matches format-insensitively (%s)",
    async (phone) => {
      const res = await list({ phone });
      expect(ids(res).sort()).toEqual([people.bob.contactId, people.dave.contactId, people.erin.contactId].sort());
    },
  );

  test("a phone with no match gives an empty list", async () => {
    expect(ids(await list({ phone: "+14155550999" }))).toEqual([]);
  });

  test("contactTypeId matches that contact type only", async () => {
    const res = await list({ contactTypeId: types.Lead.id });
    expect(ids(res)).toEqual([people.carol.contactId, people.alice.contactId]);
  });

  test("contactTypeCategory matches contacts whose type has that category", async () => {
    expect(ids(await list({ contactTypeCategory: "Personnel" }))).toEqual([people.dave.contactId]);
    expect(ids(await list({ contactTypeCategory: "Other" }))).toEqual([people.erin.contactId]);
  });

  test("contactTypeCategory outside Lead, Customer, Personnel, Other is 422 contactTypeCategory", async () => {
    expectError(await list({ contactTypeCategory: "Robot" }), "ERR_FORM_VALIDATION", "contactTypeCategory");
  });

  test("an unknown contactTypeId filter is 422 contactTypeId, another project's type included (docs/api.md §11)", async () => {
    expectError(await list({ contactTypeId: "ct_unknown" }), "ERR_FORM_VALIDATION", "contactTypeId");
    const other = await srv.newProject();
    const types = await other.api("GET", "/contact-types");
    expectStatus(types, 200);
    expectError(await list({ contactTypeId: types.json.data[0].id }), "ERR_FORM_VALIDATION", "contactTypeId");
  });

  test("tag matches by name", async () => {
    expect(ids(await list({ tag: "partner" }))).toEqual([people.erin.contactId]);
  });

  test("tag matches by name case-insensitively", async () => {
    expect(ids(await list({ tag: "PARTNER" }))).toEqual([people.erin.contactId]);
  });

  test("tag matches by id", async () => {
    const partner = people.erin.tags.find((t: any) => t.name === "partner");
    expect(ids(await list({ tag: partner.id }))).toEqual([people.erin.contactId]);
  });

  test("a repeated tag matches contacts carrying every tag named (AND)", async () => {
    const res = await list({ tag: ["vip", "newsletter"] });
    expect(ids(res)).toEqual([people.erin.contactId, people.alice.contactId]);
  });

  test("an unknown tag name gives an empty list", async () => {
    const res = await list({ tag: "no-such-tag-anywhere" });
    expectStatus(res, 200);
    expect(res.json).toEqual({ data: [], pagination: { nextCursor: null, hasMore: false } });
  });

  test("a repeated tag with one unknown name gives an empty list", async () => {
    expect(ids(await list({ tag: ["vip", "no-such-tag"] }))).toEqual([]);
  });

  test("updatedSince includes contacts updated at or after the time", async () => {
    const since = people.dave.updatedAt;
    const res = await list({ updatedSince: since, tag: ["vip"] });
    // of the vip contacts only erin (after dave) qualifies
    expect(ids(res)).toEqual([people.erin.contactId]);
    const inclusive = await list({ updatedSince: since, contactTypeCategory: "Personnel" });
    expect(ids(inclusive)).toEqual([people.dave.contactId]);
  });

  test("updatedSince accepts an ISO time with an offset", async () => {
    const t = new Date(Date.parse(people.dave.updatedAt));
    const offset = new Date(t.getTime() + 2 * 3600_000).toISOString().replace("Z", "+02:00");
    const res = await list({ updatedSince: offset, contactTypeCategory: "Personnel" });
    expectStatus(res, 200);
    expect(ids(res)).toEqual([people.dave.contactId]);
  });

  test("updatedSince in the future gives an empty list", async () => {
    expect(ids(await list({ updatedSince: "2999-01-01T00:00:00Z" }))).toEqual([]);
  });

  test.each([["yesterday"], ["2024-13-45T00:00:00Z"], ["12345"]])("a non-ISO updatedSince (%s) is 422 updatedSince", async (v) => {
    expectError(await list({ updatedSince: v }), "ERR_FORM_VALIDATION", "updatedSince");
  });

  test("filters combine with AND", async () => {
    expect(ids(await list({ tag: "newsletter", contactTypeCategory: "Lead" }))).toEqual([
      people.carol.contactId,
      people.alice.contactId,
    ]);
    expect(ids(await list({ tag: "newsletter", contactTypeCategory: "Lead", search: "mary" }))).toEqual([people.carol.contactId]);
    expect(ids(await list({ phone: "4155550100", tag: "vip" }))).toEqual([people.erin.contactId, people.bob.contactId]);
    expect(ids(await list({ email: "bob@sample.org", tag: "newsletter" }))).toEqual([]);
  });
});

describe("search", () => {
  test("search matches a prefix of the first name", async () => {
    expect(ids(await list({ search: "Fra" }))).toEqual([people.frank.contactId]);
    // "Ali" starts alice's first name and erin's last name
    expect(ids(await list({ search: "Ali" }))).toEqual([people.erin.contactId, people.alice.contactId]);
  });

  test("search matches a prefix of any word of the names", async () => {
    // "Ann" is the second word of carol's first name; "Alis" starts erin's last name
    expect(ids(await list({ search: "Ann" }))).toEqual([people.carol.contactId]);
    expect(ids(await list({ search: "Alis" }))).toEqual([people.erin.contactId]);
  });

  test("search matches a prefix of the last name", async () => {
    expect(ids(await list({ search: "Quix" }))).toEqual([people.bob.contactId]);
  });

  test("search matches a prefix of the business name", async () => {
    expect(ids(await list({ search: "Davec" }))).toEqual([people.dave.contactId]);
  });

  test("search matches a prefix of the whole email", async () => {
    expect(ids(await list({ search: "alice.z@exa" }))).toEqual([people.alice.contactId]);
    expect(ids(await list({ search: "frank@example.com" }))).toEqual([people.frank.contactId]);
  });

  test("search matches a prefix of the contactId", async () => {
    // The project holds CR-1 … CR-6 only: "CR-6" is frank's whole id, "CR-" a prefix of all six.
    expect(people.frank.contactId).toBe("CR-6");
    expect(ids(await list({ search: "CR-6" }))).toEqual([people.frank.contactId]);
    expect(ids(await list({ search: "CR-" }))).toHaveLength(6);
  });

  test("search is case-insensitive", async () => {
    expect(ids(await list({ search: "qUIX" }))).toEqual([people.bob.contactId]);
    expect(ids(await list({ search: "CAROL@EX" }))).toEqual([people.carol.contactId]);
    expect(ids(await list({ search: people.frank.contactId.toLowerCase() }))).toEqual([people.frank.contactId]);
  });

  test("search does not match inside a word (no infix match)", async () => {
    expect(ids(await list({ search: "lice" }))).toEqual([]);
    // Two edits from "quixote": beyond the one typo forgiven (docs/api.md §11.6).
    expect(ids(await list({ search: "ixote" }))).toEqual([]);
    expect(ids(await list({ search: "ylo" }))).toEqual([]);
  });
});

describe("limit and pagination", () => {
  test("limit sets the page size", async () => {
    const res = await list({ limit: 2 });
    expectStatus(res, 200);
    expect(res.json.data).toHaveLength(2);
    expect(res.json.pagination.hasMore).toBe(true);
    expect(typeof res.json.pagination.nextCursor).toBe("string");
  });

  test("limit=1 gives one contact and more to come; limit=200 gives all six", async () => {
    const one = await list({ limit: "1" });
    expectStatus(one, 200);
    expect(ids(one)).toEqual([people.frank.contactId]);
    expect(one.json.pagination.hasMore).toBe(true);
    const all = await list({ limit: "200" });
    expectStatus(all, 200);
    expect(all.json.data).toHaveLength(6);
    expect(all.json.pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  test.each([["0"], ["201"], ["-1"], ["abc"], ["1.5"], [""]])("limit=%s is 422 limit", async (limit) => {
    expectError(await list({ limit }), "ERR_FORM_VALIDATION", "limit");
  });

  test("walking every page with limit 3 yields every contact once, in order, and the last page has hasMore false and nextCursor null", async () => {
    const all = await list({ limit: 200 });
    const { items, pages } = await walk(api, "/contacts", { limit: 3 });
    expect(items.map((c) => c.contactId)).toEqual(ids(all));
    expect(new Set(items.map((c) => c.contactId)).size).toBe(items.length);
    const last = pages[pages.length - 1];
    expect(last.pagination).toEqual({ nextCursor: null, hasMore: false });
    for (const page of pages.slice(0, -1)) {
      expect(page.data).toHaveLength(3);
      expect(page.pagination.hasMore).toBe(true);
      expect(typeof page.pagination.nextCursor).toBe("string");
    }
  });

  test("a page that takes exactly the last item says hasMore false and nextCursor null", async () => {
    // newsletter: alice, carol, erin -> limit 3 takes them all, limit 1 walk ends on the third
    const one = await list({ tag: "newsletter", limit: 3 });
    expect(one.json.data).toHaveLength(3);
    expect(one.json.pagination).toEqual({ nextCursor: null, hasMore: false });
    const first = await list({ tag: "newsletter", limit: 2 });
    expect(first.json.pagination.hasMore).toBe(true);
    const second = await list({ tag: "newsletter", limit: 2, cursor: first.json.pagination.nextCursor });
    expect(second.json.data).toHaveLength(1);
    expect(second.json.pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  test("the default page size is 50", async () => {
    const q = await srv.newProject();
    for (let i = 0; i < 51; i++) expectStatus(await q.api("POST", "/contacts", { body: { firstName: `P${i}` } }), 201);
    const res = await q.api("GET", "/contacts");
    expect(res.json.data).toHaveLength(50);
    expect(res.json.pagination.hasMore).toBe(true);
    const rest = await q.api("GET", "/contacts", { query: { cursor: res.json.pagination.nextCursor } });
    expect(rest.json.data).toHaveLength(1);
    expect(rest.json.pagination).toEqual({ nextCursor: null, hasMore: false });
    const seen = new Set([...res.json.data, ...rest.json.data].map((c: any) => c.contactId));
    expect(seen.size).toBe(51);
  });

  test("pagination under a filter walks only matching contacts without gaps", async () => {
    const { items } = await walk(api, "/contacts", { tag: "vip", limit: 1 });
    expect(items.map((c) => c.contactId)).toEqual([people.erin.contactId, people.bob.contactId, people.alice.contactId]);
  });

  test.each([["garbage"], ["eyJmb28iOiJiYXIifQ"], ["0"]])("a cursor the service never issued (%s) is 422 cursor", async (cursor) => {
    expectError(await list({ cursor }), "ERR_FORM_VALIDATION", "cursor");
  });

  test("a cursor reused with other filters is 422 cursor", async () => {
    const first = await list({ tag: "vip", limit: 1 });
    const cursor = first.json.pagination.nextCursor;
    expectError(await list({ tag: "newsletter", limit: 1, cursor }), "ERR_FORM_VALIDATION", "cursor");
    expectError(await list({ limit: 1, cursor }), "ERR_FORM_VALIDATION", "cursor");
    expectError(await list({ tag: "vip", search: "a", limit: 1, cursor }), "ERR_FORM_VALIDATION", "cursor");
  });
});

describe("duplicateSignal", () => {
  let d: ProjectInfo;
  const made: Record<string, any> = {};
  beforeAll(async () => {
    d = await srv.newProject();
    const mk = async (name: string, body: any) => {
      const r = await d.api("POST", "/contacts", { body });
      expectStatus(r, 201);
      made[name] = r.json;
    };
    await mk("a", { firstName: "A", email: "dup@example.com", phone: "+1 (415) 555-0142" });
    await mk("b", { firstName: "B", email: "DUP@Example.COM", phone: "+14155550142" });
    await mk("c", { firstName: "C", email: "other@example.com", phone: "415-555-0142" });
    await mk("d", { firstName: "D", email: "dup@example.com" });
    await mk("e", { firstName: "E" });
  }, 60_000);

  test("GET of one contact counts other contacts with the same email case-insensitively", async () => {
    const res = await d.api("GET", `/contacts/${made.a.contactId}`);
    expect(res.json.duplicateSignal.emailMatches).toBe(2);
  });

  test("GET of one contact counts other contacts with the same phone format-insensitively", async () => {
    const res = await d.api("GET", `/contacts/${made.a.contactId}`);
    expect(res.json.duplicateSignal).toEqual({ emailMatches: 2, phoneMatches: 2 });
    const c = await d.api("GET", `/contacts/${made.c.contactId}`);
    expect(c.json.duplicateSignal).toEqual({ emailMatches: 0, phoneMatches: 2 });
  });

  test("the duplicateSignal email match ignores surrounding whitespace", async () => {
    const r = await d.api("POST", "/contacts", { body: { firstName: "W", email: "  white@example.com " } });
    expectStatus(r, 201);
    const s = await d.api("POST", "/contacts", { body: { firstName: "W2", email: "WHITE@example.com" } });
    expectStatus(s, 201);
    const res = await d.api("GET", `/contacts/${s.json.contactId}`);
    expect(res.json.duplicateSignal.emailMatches).toBe(1);
  });

  test("a contact without email or phone has duplicateSignal 0/0", async () => {
    const res = await d.api("GET", `/contacts/${made.e.contactId}`);
    expect(res.json.duplicateSignal).toEqual({ emailMatches: 0, phoneMatches: 0 });
  });

  test("duplicateSignal is not part of list items or PATCH answers", async () => {
    const l = await d.api("GET", "/contacts");
    for (const c of l.json.data) expect("duplicateSignal" in c).toBe(false);
    const pt = await d.api("PATCH", `/contacts/${made.e.contactId}`, { body: { lastName: "X" } });
    expect("duplicateSignal" in pt.json).toBe(false);
  });

  test("duplicates do not block creation", async () => {
    const first = await d.api("POST", "/contacts", { body: { firstName: "F", email: "nonblocking@example.com" } });
    const second = await d.api("POST", "/contacts", { body: { firstName: "F", email: "nonblocking@example.com" } });
    expectStatus(first, 201);
    expectStatus(second, 201);
    expect((await d.api("GET", `/contacts/${second.json.contactId}`)).json.duplicateSignal).toEqual({ emailMatches: 1, phoneMatches: 0 });
  });
});

describe("GET /contacts/{contactId}", () => {
  test("GET of an unknown contact is 404 ERR_NOT_FOUND", async () => {
    expectError(await api("GET", "/contacts/CR-999999"), "ERR_NOT_FOUND");
  });

  test("GET of a malformed contactId is 404 ERR_NOT_FOUND", async () => {
    expectError(await api("GET", "/contacts/not-an-id"), "ERR_NOT_FOUND");
  });
});
