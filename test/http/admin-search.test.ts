/**
 * The console's contacts list searches as the API does (docs/admin.md §3, docs/api.md §11.6):
 * an accent-free name, phone digits typed another way, the last 4 digits, an email domain
 * and one typo find the same contacts, in the same order, in both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signedInAdmin, type AdminClient, type AdminPage } from "../helpers/admin.ts";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;
let p: ProjectInfo;
let list: string;
const id: Record<string, string> = {};

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  ({ client: admin } = await signedInAdmin(srv.origin, srv.env));
  p = await srv.newProject({ name: "console-search" });
  list = `/admin/projects/${p.id}/contacts`;
  for (const [key, body] of [
    ["jose", { firstName: "José", lastName: "Núñez", email: "jose@correo.example.es" }],
    ["muller", { firstName: "Anna", lastName: "Müller", phone: "+49 30 1234567" }],
    ["ada", { firstName: "Ada", lastName: "Lovelace", email: "ada@analytical.example.com", phone: "(202) 555-0143" }],
    ["grace", { firstName: "Grace", lastName: "Hopper", email: "grace@navy.example.com", phone: "+1 202 555 0199" }],
    ["soren", { firstName: "Søren", lastName: "Kierkegaard", email: "sk@analytical.example.com" }],
  ] as const) {
    const r = await p.api("POST", "/contacts", { body });
    expectStatus(r, 201);
    id[key] = r.json.contactId;
  }
}, 60_000);
afterAll(() => srv?.stop());

/** The contacts the list page links to, in its order (as test/http/admin-contacts.test.ts reads them). */
const shown = (page: AdminPage) => [...page.text.matchAll(/<a href="[^"]*\/contacts\/(CR-\d+)">/g)].map((m) => m[1]!);

async function consoleFinds(search: string): Promise<string[]> {
  const page = await admin.get(`${list}?search=${encodeURIComponent(search)}&limit=200`);
  expect(page.status, page.text.slice(0, 500)).toBe(200);
  return shown(page);
}

async function apiFinds(search: string): Promise<string[]> {
  const res = await p.api("GET", "/contacts", { query: { search, limit: 200 } });
  expectStatus(res, 200);
  return res.json.data.map((c: any) => c.contactId as string);
}

describe("the console's contacts list searches as the API does (docs/admin.md §3, docs/api.md §11.6)", () => {
  test.each([
    ["jose nunez", "an accent-free name", ["jose"]],
    ["soren", "an accent-free name with ø", ["soren"]],
    ["MULLER", "an accent-free name in capitals", ["muller"]],
    ["+1 202 555 0143", "phone digits in another format than stored", ["ada"]],
    ["030 1234", "a German number as dialled at home", ["muller"]],
    ["202.555", "a phone prefix with dots, matching two", ["grace", "ada"]],
    ["0143", "the last 4 digits", ["ada"]],
    ["analytical.example.com", "an email domain", ["soren", "ada"]],
    ["navy", "an email domain's label", ["grace"]],
    ["lovelase", "one typo", ["ada"]],
    ["hoper grace", "one typo, words in another order", ["grace"]],
    ["202", "3 digits: no phone match", []],
  ])("%p (%s)", async (search, _what, expected) => {
    const want = (expected as string[]).map((k) => id[k]!);
    // Both checked at once: a failure shows what each surface found.
    expect({ api: await apiFinds(search), console: await consoleFinds(search) }).toEqual({ api: want, console: want });
  });
});
