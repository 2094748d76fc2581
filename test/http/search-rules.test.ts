/**
 * The rules of `search` (docs/api.md §11.6), one test each, black-box over HTTP: folding of
 * case and accents, AND of words in any order, the terms of names, email and contactId,
 * phones typed in any format, one typo, and a contact searchable as soon as its write is
 * acknowledged. Every group works in a project of its own: the typo rule depends on what
 * else the project holds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, type Api, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
}, 60_000);
afterAll(() => server.stop());

interface Fixture {
  api: Api;
  /** contactId by the fixture's own names. */
  id: Record<string, string>;
  /** The contactIds `search` finds (every page of 200), sorted. */
  find: (search: string) => Promise<string[]>;
  create: (body: Record<string, unknown>) => Promise<string>;
}

/** A project of its own holding `people` (created in the order given). */
async function fixture(people: Record<string, Record<string, unknown>> = {}): Promise<Fixture> {
  const p = await server.newProject();
  // The project's one key: each fixture stays far below its 120 requests a minute.
  const api: Api = (method, path, opts = {}) => server.api(method, path, { ...opts, key: p.key });
  const create = async (body: Record<string, unknown>) => {
    const res = await api("POST", "/contacts", { body });
    expectStatus(res, 201);
    return res.json.contactId as string;
  };
  const find = async (search: string) => {
    const res = await api("GET", "/contacts", { query: { search, limit: 200 } });
    expectStatus(res, 200);
    expect(res.json.pagination.hasMore).toBe(false);
    return res.json.data.map((c: any) => c.contactId as string).sort();
  };
  const id: Record<string, string> = {};
  for (const [name, body] of Object.entries(people)) id[name] = await create(body);
  return { api, id, find, create };
}

const sorted = (...ids: (string | undefined)[]) => [...ids].map((x) => x!).sort();

describe("case and accents never matter (docs/api.md §11.6)", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({
      jose: { firstName: "José", lastName: "Álvarez" },
      muller: { firstName: "Anna", lastName: "Müller" },
      lukasz: { firstName: "Łukasz", lastName: "Nowak" },
      strasse: { firstName: "Greta", lastName: "Straße" },
      soren: { firstName: "Søren", lastName: "Kierkegaard" },
      renee: { firstName: "Renee", lastName: "Dupont" },
      other: { firstName: "Bob", lastName: "Stone" },
    });
  }, 60_000);

  test.each([
    ["jose", "jose"],
    ["JOSÉ", "jose"],
    ["alvarez", "jose"],
    ["muller", "muller"],
    ["MÜLLER", "muller"],
    ["lukasz", "lukasz"],
    ["łukasz", "lukasz"],
    ["ŁUK", "lukasz"],
    ["strasse", "strasse"],
    ["straße", "strasse"],
    ["STRASSE", "strasse"],
    ["soren", "soren"],
    ["SØREN", "soren"],
    ["renée", "renee"],
    ["DUPÔNT", "renee"],
  ])("%p finds only %s", async (query, who) => {
    expect(await f.find(query)).toEqual([f.id[who]!]);
  });
});

describe("every word must match, in any order (docs/api.md §11.6)", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({
      adaLovelace: { firstName: "Ada", lastName: "Lovelace" },
      adaByron: { firstName: "Ada", lastName: "Byron" },
      charlesBabbage: { firstName: "Charles", lastName: "Babbage" },
      loveJoy: { firstName: "Lovejoy", lastName: "Adler", businessName: "Lovejoy Ltd" },
    });
  }, 60_000);

  test('"ada love" and "love ada" find the contact holding both words, and only it', async () => {
    expect(await f.find("ada love")).toEqual([f.id.adaLovelace!]);
    expect(await f.find("love ada")).toEqual([f.id.adaLovelace!]);
    expect(await f.find("love")).toEqual(sorted(f.id.adaLovelace, f.id.loveJoy));
    expect(await f.find("ada lovel")).toEqual([f.id.adaLovelace!]);
    expect(await f.find("lovel ada")).toEqual([f.id.adaLovelace!]);
    expect(await f.find("  ada   lovelace  ")).toEqual([f.id.adaLovelace!]);
  });

  test("a word that only another contact holds makes no match (AND, not OR)", async () => {
    expect(await f.find("ada")).toEqual(sorted(f.id.adaLovelace, f.id.adaByron));
    expect(await f.find("babbage")).toEqual([f.id.charlesBabbage!]);
    expect(await f.find("ada babbage")).toEqual([]);
    expect(await f.find("charles byron")).toEqual([]);
    expect(await f.find("ada byron lovelace")).toEqual([]);
  });
});

describe("name words split at punctuation and hyphens (docs/api.md §11.6)", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({
      mj: { firstName: "Mary-Jane", lastName: "O'Brien", businessName: "Acme-Widgets, Ltd." },
      other: { firstName: "Bob", lastName: "Stone" },
    });
  }, 60_000);

  test.each([["mary"], ["jane"], ["mary-jane"], ["maryjane"], ["brien"], ["o'brien"], ["obrien"], ["widgets"], ["acme"], ["ltd"], ["JANE OBRI"]])(
    "%p finds Mary-Jane O'Brien of Acme-Widgets, Ltd.",
    async (query) => {
      expect(await f.find(query)).toEqual([f.id.mj!]);
    },
  );
});

describe("the email: whole, local part, domain and each label (docs/api.md §11.6)", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({
      ada: { firstName: "Zed", email: "ada.l@mail.example.co.uk" },
      other: { firstName: "Bob", email: "bob@another.org" },
    });
  }, 60_000);

  test.each([
    ["ada.l@mail.example.co.uk", "the whole email"],
    ["ADA.L@MAIL.EX", "a prefix of the whole email"],
    ["ada.l", "the local part"],
    ["ada", "a prefix of the local part"],
    ["mail.example.co.uk", "the domain"],
    ["mail.example.co", "a prefix of the domain"],
    ["mail", "the domain's first label"],
    ["example", "a label"],
    ["exam", "a prefix of a label"],
    ["co", "a two-letter label"],
    ["uk", "the last label"],
  ])("%p (%s) finds the contact", async (query) => {
    expect(await f.find(query)).toEqual([f.id.ada!]);
  });

  test("the other contact's domain finds it alone; text inside a label finds nothing", async () => {
    expect(await f.find("another.org")).toEqual([f.id.other!]);
    expect(await f.find("ample")).toEqual([]);
    expect(await f.find("l@mail")).toEqual([]);
  });
});

describe("the contactId (docs/api.md §11.6)", () => {
  test("the contactId whole, in any case, and by prefix", async () => {
    const f = await fixture();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await f.create({ firstName: `Idtest${String.fromCharCode(97 + i)}` }));
    for (const id of [ids[0]!, ids[11]!]) {
      expect(await f.find(id)).toContain(id);
      expect(await f.find(id.toLowerCase())).toContain(id);
    }
    const prefix = ids[0]!.toLowerCase();
    expect(await f.find(prefix)).toEqual(ids.filter((id) => id.toLowerCase().startsWith(prefix)).sort());
    expect(await f.find("cr-")).toEqual([...ids].sort());
    expect(await f.find("cr-999999")).toEqual([]);
  });

  test("a relabelled contact is found by its new contactId, not by its old one", async () => {
    const f = await fixture({ c: { firstName: "Relabel" }, other: { firstName: "Bob" } });
    const old = f.id.c!.toLowerCase();
    expectStatus(await f.api("PATCH", `/contacts/${f.id.c}`, { body: { contactId: "CR-4242" } }), 200);
    expect(await f.find("cr-4242")).toEqual(["CR-4242"]);
    expect("cr-4242".startsWith(old)).toBe(false);
    expect(await f.find(old)).not.toContain("CR-4242");
  });
});

describe("phones, typed in any format (docs/api.md §11.6)", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({
      us: { firstName: "Uma", phone: "+1 202 555 0143" },
      de: { firstName: "Dieter", phone: "+49 30 1234567" },
      denver: { firstName: "Dora", phone: "+1 303 555 0100" },
      nophone: { firstName: "Nolan", email: "nolan@example.com" },
    });
  }, 60_000);

  test.each([
    ["+1 202", "us", "E.164 digits with the country code"],
    ["1202555", "us", "E.164 digits run together"],
    ["+1 (202) 555-0143", "us", "the whole number, formatted"],
    ["(202) 555-0143", "us", "the national number in US format"],
    ["202.555.0143", "us", "the national number with dots"],
    ["202-555", "us", "a national prefix with a dash"],
    ["+49 30 123", "de", "German E.164 digits"],
    ["030 123", "de", "the German national number with its trunk prefix"],
    ["0301234567", "de", "the whole German national number with its trunk prefix"],
    ["30 1234", "de", "the German national number without its trunk prefix"],
    ["0143", "us", "the last 4 digits"],
    ["555-0143", "us", "the last 7 digits"],
    ["5550143", "us", "the last 7 digits run together"],
    ["4567", "de", "the German number's last 4 digits"],
  ])("%p (%s) finds it", async (query, who) => {
    expect(await f.find(query)).toEqual([f.id[who]!]);
  });

  test("the country code alone matches no phone (under 4 digits); with the area code it picks its phone", async () => {
    expect(await f.find("+1")).toEqual([]); // one digit: no phone matching
    expect(await f.find("+1 202 555 01")).toEqual([f.id.us!]);
    expect(await f.find("1 303 555")).toEqual([f.id.denver!]);
  });

  test("digits split by spaces are one phone query, and a phone query combines with name words (AND)", async () => {
    expect(await f.find("202 555 0143")).toEqual([f.id.us!]);
    expect(await f.find("+1 202 555 0143")).toEqual([f.id.us!]);
    expect(await f.find("uma 0143")).toEqual([f.id.us!]);
    expect(await f.find("0143 uma")).toEqual([f.id.us!]);
    expect(await f.find("dora 0143")).toEqual([]);
    expect(await f.find("dieter 030 123")).toEqual([f.id.de!]);
  });

  test("a query of 3 digits does not match phones", async () => {
    for (const query of ["202", "555", "143", "030", "+1 2", "(20)"]) expect(await f.find(query), query).toEqual([]);
  });

  test("digits in no phone's E.164 digits, national number or last digits find nothing", async () => {
    for (const query of ["2025550199", "1303555019", "0202555", "1234", "5550", "+44 30 1234"]) expect(await f.find(query), query).toEqual([]);
  });

  test("a phone query also matches a contact whose phone was stored in another format", async () => {
    const g = await fixture({
      parens: { firstName: "Pat", phone: "(617) 555-0123" },
      dots: { firstName: "Dot", phone: "617.555.0124" },
      e164: { firstName: "Eve", phone: "+16175550125" },
    });
    expect(await g.find("+1 617 555 0123")).toEqual([g.id.parens!]);
    expect(await g.find("16175550124")).toEqual([g.id.dots!]);
    expect(await g.find("(617) 555-0125")).toEqual([g.id.e164!]);
    expect(await g.find("617-555-012")).toEqual(sorted(g.id.parens, g.id.dots, g.id.e164));
    expect(await g.find("0124")).toEqual([g.id.dots!]);
  });

  test("a phone query also matches a name or email term starting with its digits", async () => {
    const g = await fixture({
      studio: { businessName: "2024 Studio" },
      mail: { firstName: "Mia", email: "20245@example.com" },
      phone: { firstName: "Phil", phone: "+1 202 555 0199" },
    });
    expect(await g.find("2024")).toEqual(sorted(g.id.studio, g.id.mail));
  });
});

describe("one typo is forgiven in a word of 5 or more letters (docs/api.md §11.6)", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({
      ada: { firstName: "Ada", lastName: "Lovelace" },
      grace: { firstName: "Grace", lastName: "Hopper" },
      jonathan: { firstName: "Jonathan", lastName: "Swift" },
      ivan: { firstName: "Ivan", lastName: "Kozlov" },
      mail: { firstName: "Mo", email: "mo@thunderbird.example" },
    });
  }, 60_000);

  test.each([
    ["lovelacse", "an insertion"],
    ["lovlace", "a deletion"],
    ["lovelase", "a substitution"],
    ["lovleace", "a transposition"],
  ])("%p (%s) finds Lovelace", async (query) => {
    expect(await f.find(query)).toEqual([f.id.ada!]);
  });

  test("a typo in a five-letter word, in a word of a longer query, and in an email label", async () => {
    expect(await f.find("grcae")).toEqual([f.id.grace!]);
    expect(await f.find("ivann")).toEqual([f.id.ivan!]); // a 5-letter query word reaches a 4-letter name
    expect(await f.find("grase hopper")).toEqual([f.id.grace!]);
    expect(await f.find("jonathon")).toEqual([f.id.jonathan!]);
    expect(await f.find("jon swfit")).toEqual([f.id.jonathan!]);
    expect(await f.find("thunderbrid")).toEqual([f.id.mail!]);
  });

  test("no typo is forgiven in a word of 4 letters", async () => {
    expect(await f.find("ivam")).toEqual([]);
    expect(await f.find("gace")).toEqual([]);
    expect(await f.find("kozlow")).toEqual([f.id.ivan!]); // the 6-letter word is forgiven
  });

  test("two typos are not forgiven", async () => {
    for (const query of ["lvoelase", "lovelacexx", "lovace", "jonathxx", "grasse"]) expect(await f.find(query), query).toEqual([]);
  });

  test("a word with a prefix match anywhere in the project is never typo-matched", async () => {
    const g = await fixture({ marten: { firstName: "Karl", lastName: "Marten" } });
    expect(await g.find("martin")).toEqual([g.id.marten!]); // one substitution: a typo match
    const martinez = await g.create({ firstName: "Lucia", lastName: "Martinez" });
    expect(await g.find("martin")).toEqual([martinez]); // now a prefix of Martinez: no typo
    // A contact in the trash is not in the project's search (docs/api.md §19.3): typos come back.
    expectStatus(await g.api("DELETE", `/contacts/${martinez}`), 204);
    expect(await g.find("martin")).toEqual([g.id.marten!]);
    expectStatus(await g.api("POST", `/contacts/${martinez}/restore`), 200);
    expect(await g.find("martin")).toEqual([martinez]);
    const martin = await g.create({ firstName: "Martin", lastName: "Berg" });
    expect(await g.find("martin")).toEqual(sorted(martinez, martin));
    expect(await g.find("marti")).toEqual(sorted(martinez, martin));
  });
});

describe("searchable as soon as the write is acknowledged (docs/api.md §11.6)", () => {
  test("a contact is found right after its POST, by name, email and phone", async () => {
    const f = await fixture({ other: { firstName: "Bob" } });
    const id = await f.create({ firstName: "Quintessa", lastName: "Vandermolen", email: "q@vandermolen.example", phone: "+1 202 555 0177" });
    expect(await f.find("quintessa")).toEqual([id]);
    expect(await f.find("vandermolen")).toEqual([id]);
    expect(await f.find("(202) 555-0177")).toEqual([id]);
  });

  test("after a PATCH of the name, the old name finds nothing and the new one finds the contact", async () => {
    const f = await fixture({ c: { firstName: "Ottoline", lastName: "Fairweather" }, other: { firstName: "Bob" } });
    const res = await f.api("PATCH", `/contacts/${f.id.c}`, { body: { firstName: "Philippa", lastName: "Stormcloud" } });
    expectStatus(res, 200);
    expect(await f.find("ottoline")).toEqual([]);
    expect(await f.find("fairweather")).toEqual([]);
    expect(await f.find("philippa stormcloud")).toEqual([f.id.c!]);
    expect(await f.find("storm")).toEqual([f.id.c!]);
    expect(await f.find("ottolina")).toEqual([]); // one typo from the old name
  });

  test("after a PATCH of the email, the old domain and local part find nothing and the new ones find the contact", async () => {
    const f = await fixture({ c: { firstName: "Bo", email: "rosalind@oldplace.example" }, other: { firstName: "Bob" } });
    expect(await f.find("oldplace")).toEqual([f.id.c!]);
    expectStatus(await f.api("PATCH", `/contacts/${f.id.c}`, { body: { email: "franklin@newplace.example" } }), 200);
    for (const query of ["oldplace", "rosalind", "rosalind@oldplace.example"]) expect(await f.find(query), query).toEqual([]);
    for (const query of ["newplace", "franklin", "franklin@newplace.example"]) expect(await f.find(query), query).toEqual([f.id.c!]);
  });

  test("after a PATCH of the phone, the old digits find nothing and the new ones find the contact in any format", async () => {
    const f = await fixture({ c: { firstName: "Callum", phone: "+1 202 555 0166" }, other: { firstName: "Bob" } });
    expect(await f.find("0166")).toEqual([f.id.c!]);
    const res = await f.api("PATCH", `/contacts/${f.id.c}`, { body: { phone: "(415) 555-0188" } });
    expectStatus(res, 200);
    expect(await f.find("0166")).toEqual([]);
    expect(await f.find("202 555")).toEqual([]);
    expect(await f.find("+1 415 555 0188")).toEqual([f.id.c!]);
    expect(await f.find("0188")).toEqual([f.id.c!]);
  });

  test("a contact in the trash is not found, and is found again after its restore", async () => {
    const f = await fixture({ c: { firstName: "Wilhelmina", email: "wil@trashcan.example", phone: "+1 202 555 0155" }, other: { firstName: "Bob" } });
    expectStatus(await f.api("DELETE", `/contacts/${f.id.c}`), 204);
    for (const query of ["wilhelmina", "trashcan", "0155", "wilhelmena"]) expect(await f.find(query), query).toEqual([]);
    expectStatus(await f.api("POST", `/contacts/${f.id.c}/restore`), 200);
    for (const query of ["wilhelmina", "trashcan", "0155", "wilhelmena"]) expect(await f.find(query), query).toEqual([f.id.c!]);
  });
});

describe("every other write keeps search current at once (docs/api.md §11.6, §18.2, §18.4, §20)", () => {
  test("batch create, batch update and batch upsert", async () => {
    const f = await fixture({ other: { firstName: "Bob" } });
    const created = await f.api("POST", "/contacts/batch", {
      body: { operation: "create", items: [{ firstName: "Evangelina", phone: "+1 202 555 0111" }, { firstName: "Florentyna", email: "flo@batchco.example" }] },
    });
    expectStatus(created, 200);
    const [eva, flo] = created.json.results.map((r: any) => r.contactId as string);
    expect(await f.find("evangelina")).toEqual([eva!]);
    expect(await f.find("0111")).toEqual([eva!]);
    expect(await f.find("batchco")).toEqual([flo!]);

    const updated = await f.api("POST", "/contacts/batch", { body: { operation: "update", items: [{ contactId: eva, firstName: "Wenceslas" }] } });
    expectStatus(updated, 200);
    expect(updated.json.results[0].status).toBe(200);
    expect(await f.find("evangelina")).toEqual([]);
    expect(await f.find("wenceslas 0111")).toEqual([eva!]);

    const upserted = await f.api("POST", "/contacts/batch", {
      body: { operation: "upsert", matchOn: "email", items: [{ email: "flo@batchco.example", lastName: "Quarrington" }, { email: "new@upsertco.example", firstName: "Gwendolyn" }] },
    });
    expectStatus(upserted, 200);
    const gwen = upserted.json.results[1].contactId as string;
    expect(await f.find("florentyna quarrington")).toEqual([flo!]);
    expect(await f.find("gwendolyn")).toEqual([gwen]);
    expect(await f.find("upsertco")).toEqual([gwen]);
  });

  test("PUT /contacts (upsert) creating and updating", async () => {
    const f = await fixture({ other: { firstName: "Bob" } });
    const made = await f.api("PUT", "/contacts", { query: { matchOn: "phone" }, body: { phone: "(202) 555-0122", firstName: "Ignatius" } });
    expectStatus(made, 201);
    expect(await f.find("+1 202 555 0122")).toEqual([made.json.contactId]);
    const changed = await f.api("PUT", "/contacts", { query: { matchOn: "phone" }, body: { phone: "+12025550122", firstName: "Leopoldine" } });
    expectStatus(changed, 200);
    expect(await f.find("ignatius")).toEqual([]);
    expect(await f.find("leopoldine 0122")).toEqual([made.json.contactId]);
  });

  test("a merge: the merged-away contact is found no more, the survivor by what it took; the undo brings both back", async () => {
    const f = await fixture({
      survivor: { firstName: "Clementine" },
      away: { firstName: "Bartholomew", lastName: "Ashcombe", phone: "+1 202 555 0131" },
      other: { firstName: "Bob" },
    });
    const merged = await f.api("POST", `/contacts/${f.id.survivor}/merge`, { body: { contactIds: [f.id.away] } });
    expectStatus(merged, 200);
    expect(await f.find("bartholomew")).toEqual([]);
    expect(await f.find("ashcombe")).toEqual([f.id.survivor!]);
    expect(await f.find("clementine ashcombe 0131")).toEqual([f.id.survivor!]);
    expectStatus(await f.api("POST", `/merges/${merged.json.merge.id}/undo`), 200);
    expect(await f.find("bartholomew ashcombe")).toEqual([f.id.away!]);
    expect(await f.find("0131")).toEqual([f.id.away!]);
    expect(await f.find("clementine")).toEqual([f.id.survivor!]);
  });
});
