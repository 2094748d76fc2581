/**
 * `crm export` and the console's Export action (docs/import-export.md §2) against a running server:
 * contacts are written through the API, exported by the CLI and downloaded from the console,
 * and each export is compared with what the API answers; the CSV is imported into a second
 * project and its contacts compared with the first project's. CSV cells a spreadsheet would
 * run as formulas carry a leading `'` unless --raw (docs/security.md §8).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCsv } from "../../src/transfer/csv.ts";
import { neutraliseFormula } from "../../src/transfer/spreadsheet.ts";
import { AdminClient, pageText, signedInAdmin } from "../helpers/admin.ts";
import { BUN, REPO_ROOT } from "../helpers/spawn.ts";
import { startServer, walk, type Api, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

setDefaultTimeout(120_000);

let srv: ServerHandle;
let dir: string;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  dir = mkdtempSync(join(tmpdir(), "crm-export-test-"));
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

async function exportOf(projectId: string, ...extra: string[]) {
  const r = await srv.cliRaw(["export", "--project", projectId, ...extra]);
  if (r.exitCode !== 0) throw new Error(`export failed (${r.exitCode}): ${r.stderr}`);
  return r;
}

async function* once(text: string) {
  yield text;
}

async function parsed(text: string): Promise<string[][]> {
  const out: string[][] = [];
  for await (const record of parseCsv(once(text))) out.push(record);
  return out;
}

const withoutSignal = ({ duplicateSignal: _, ...contact }: any) => contact;
const contactNumber = (c: { contactId: string }) => Number(c.contactId.slice(3));

/** Custom fields of the source project, in creation order: [title, type, options]. */
const FIELDS: Array<[string, string, string?]> = [
  ["Nickname", "text"],
  ["Bio", "textarea"],
  ["Score", "number"],
  ["Partner", "checkbox"],
  ["Plan", "select", "Gold plan,silver"],
  ["Size", "radio", "S,M,L"],
  ["Colors", "multiselect", "red,green,blue"],
  ["Birthday", "date"],
  ["Homepage", "url"],
  ["Alt Email", "email"],
  ["Fax", "phone"],
  // Reads as a contact field's alias: the export writes it as customFields.City.
  ["City", "text"],
  // Read-only: its column is always empty.
  ["Photo", "image"],
];
const EXPECTED_HEADER = [
  "contactId", "identityType", "source", "firstName", "lastName", "email", "phone", "businessName", "website", "contactType",
  "subscribed", "smsSubscribed", "notes", "createdAt", "updatedAt",
  "address.line1", "address.line2", "address.city", "address.state", "address.zip", "address.country", "tags",
  "Nickname", "Bio", "Score", "Partner", "Plan", "Size", "Colors", "Birthday", "Homepage", "Alt Email", "Fax", "customFields.City", "Photo",
];
const PARTNER_TYPE = "Partner, Inc.";

/** A project with FIELDS and a contact type named PARTNER_TYPE; returns the field ids by title and the type's id. */
async function prepareProject(name: string) {
  const p = await srv.newProject({ name, rateLimitPerMinute: 1_000_000, contactCreatesPerHour: 1_000_000 });
  const cf: Record<string, string> = {};
  for (const [title, type, options] of FIELDS) {
    const args = ["custom-field", "create", "--project", p.id, "--title", title, "--type", type, "--json"];
    cf[title] = (await srv.cli(options ? [...args, "--options", options] : args)).id;
  }
  const typeId: string = (await srv.cli(["contact-type", "create", "--project", p.id, "--category", "Customer", "--name", PARTNER_TYPE, "--json"])).id;
  return { p, cf, typeId };
}

/** The contacts of the source project: every field, and values that test the quoting. */
function sourceBodies(cf: Record<string, string>, typeId: string): any[] {
  return [
    {
      identityType: "business",
      source: "web form",
      firstName: "Ada",
      lastName: 'O"Brien, Jr.',
      email: "ada@example.com",
      phone: "+1 415 555 0100",
      businessName: "Acme, Inc.",
      website: "https://example.com/a?b=1,2",
      address: { line1: "1 Main St\nSuite 2", line2: "c/o \"Front desk\"", city: "Zürich", state: "ZH", zip: "8001", country: "CH" },
      contactTypeId: typeId,
      tags: ["vip", "Früh", "a,b"],
      subscribed: true,
      smsSubscribed: true,
      notes: 'Line one\r\nline two, "quoted"\nline three',
      customFields: {
        [cf.Nickname!]: "  spaced  ",
        [cf.Bio!]: "multi\nline; with semicolon",
        [cf.Score!]: -0.5,
        [cf.Partner!]: true,
        [cf.Plan!]: "Gold plan",
        [cf.Size!]: "M",
        [cf.Colors!]: ["blue", "red"],
        [cf.Birthday!]: "1815-12-10",
        [cf.Homepage!]: "https://ada.example.com/",
        [cf["Alt Email"]!]: "ada.alt@example.com",
        [cf.Fax!]: "+44 20 7946 0000",
        [cf.City!]: "Custom city",
      },
    },
    { firstName: "  Bob  ", email: "bob@example.com", customFields: { [cf.Partner!]: false, [cf.Score!]: 1e21 } },
    // Formula-like cells: neutralised by default, exact with --raw (docs/security.md §8).
    { firstName: "=1+2", lastName: "-Minus", businessName: "@corp", notes: "+plus", customFields: { [cf.Score!]: 0.1 + 0.2 } },
    { firstName: "Zoë", lastName: "名前 😀", tags: ["日本"], phone: "030 1234567", customFields: { [cf.Colors!]: ["green"] } },
    { lastName: "Solo", smsSubscribed: true, address: { city: " leading space" } },
  ];
}

describe("crm export (docs/import-export.md §2)", () => {
  let source: Awaited<ReturnType<typeof prepareProject>>;
  let api: Api;
  /** The source project's contacts as GET /contacts/{contactId} answers them, in contact-number order. */
  let shown: any[];
  let csvText: string;
  let rawText: string;
  let jsonlText: string;

  beforeAll(async () => {
    source = await prepareProject("Export Source");
    api = source.p.api;
    const ids: string[] = [];
    for (const body of sourceBodies(source.cf, source.typeId)) {
      const res = await api("POST", "/contacts", { body });
      expect(res.status).toBe(201);
      ids.push(res.json.contactId);
    }
    // Contact-number order, not creation order: the second contact becomes CR-100.
    expect((await api("PATCH", `/contacts/${ids[1]}`, { body: { contactId: "CR-100" } })).status).toBe(200);
    ids[1] = "CR-100";
    shown = [];
    for (const id of ids) {
      const res = await api("GET", `/contacts/${id}`);
      expect(res.status).toBe(200);
      shown.push(res.json);
    }
    shown.sort((a, b) => contactNumber(a) - contactNumber(b));
    csvText = (await exportOf(source.p.id)).stdout;
    rawText = (await exportOf(source.p.id, "--raw")).stdout;
    jsonlText = (await exportOf(source.p.id, "--format", "jsonl")).stdout;
  }, 120_000);

  test("jsonl: one line per contact, exactly GET /contacts/{contactId} without duplicateSignal, in contact-number order", () => {
    expect(shown.map((c) => c.contactId)).toEqual(["CR-1", "CR-3", "CR-4", "CR-5", "CR-100"]);
    expect(jsonlText.endsWith("\n")).toBe(true);
    const lines = jsonlText.slice(0, -1).split("\n");
    expect(lines).toEqual(shown.map((c) => JSON.stringify(withoutSignal(c))));
  });

  test("csv: the header names contactId, every field, address.*, tags and the custom fields by title", async () => {
    const [header] = await parsed(csvText);
    expect(header).toEqual(EXPECTED_HEADER);
    expect(csvText.startsWith(`${EXPECTED_HEADER.join(",")}\r\n`)).toBe(true);
  });

  test("csv: each row, parsed back, is what the API shows, cell by cell (--raw exactly, by default with formulas neutralised)", async () => {
    const [, ...rows] = await parsed(rawText);
    const titles = FIELDS.map(([title]) => title);
    const list = (values: string[]) => values.join("; ");
    const cell = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "string" ? v : Array.isArray(v) ? list(v) : String(v));
    const expected = shown.map((c) => [
      c.contactId, c.identityType, c.source, c.firstName, c.lastName, c.email, c.phone, c.businessName, c.website, c.contactType?.name,
      c.subscribed, c.smsSubscribed, c.notes, c.createdAt, c.updatedAt,
      c.address.line1, c.address.line2, c.address.city, c.address.state, c.address.zip, c.address.country,
      list(c.tags.map((t: any) => t.name)),
      ...titles.map((title) => c.customFields[source.cf[title]!]),
    ].map(cell));
    expect(rows).toEqual(expected);
    // Spot checks of the values the quoting has to carry.
    const ada = rows[0]!;
    expect(ada[EXPECTED_HEADER.indexOf("lastName")]).toBe('O"Brien, Jr.');
    expect(ada[EXPECTED_HEADER.indexOf("notes")]).toBe('Line one\r\nline two, "quoted"\nline three');
    expect(ada[EXPECTED_HEADER.indexOf("contactType")]).toBe(PARTNER_TYPE);
    expect(ada[EXPECTED_HEADER.indexOf("tags")]!.split("; ").sort()).toEqual(["Früh", "a,b", "vip"]);
    expect(ada[EXPECTED_HEADER.indexOf("Colors")]).toBe("blue; red");
    expect(ada[EXPECTED_HEADER.indexOf("Nickname")]).toBe("  spaced  ");
    expect(ada[EXPECTED_HEADER.indexOf("Partner")]).toBe("true");
    expect(rows[4]![EXPECTED_HEADER.indexOf("Score")]).toBe("1e+21");
    expect(rows[4]![EXPECTED_HEADER.indexOf("Partner")]).toBe("false");
    expect(rows[1]![EXPECTED_HEADER.indexOf("firstName")]).toBe("=1+2");
    expect(rawText).toContain('\r\nCR-3,business,api,=1+2,-Minus,,,@corp,');
    // The default: the same cells, each formula trigger behind a `'`; nothing else differs.
    const [header, ...neutralised] = await parsed(csvText);
    expect(header).toEqual(EXPECTED_HEADER);
    expect(neutralised).toEqual(expected.map((row) => row.map(neutraliseFormula)));
    expect(csvText).toContain("\r\nCR-3,business,api,'=1+2,'-Minus,,,'@corp,");
    expect(neutralised[0]![EXPECTED_HEADER.indexOf("phone")]).toBe("'+1 415 555 0100");
    expect(neutralised[0]![EXPECTED_HEADER.indexOf("Score")]).toBe("'-0.5");
  });

  test("--output writes FILE (owner-only), nothing on stdout, one summary line on stderr, no .partial left", async () => {
    const file = join(dir, "out.csv");
    writeFileSync(file, "an older file\n");
    const r = await exportOf(source.p.id, "--output", file);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`exported 5 contacts of ${source.p.id} to ${file}\n`);
    expect(readFileSync(file, "utf8")).toBe(csvText);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(`${file}.partial`)).toBe(false);
    const jsonl = join(dir, "out.jsonl");
    await exportOf(source.p.id, "--format", "jsonl", "--output", jsonl);
    expect(readFileSync(jsonl, "utf8")).toBe(jsonlText);
  });

  test("an unknown project or format exits 2 naming the valid ones; an unwritable FILE exits 2 leaving nothing", async () => {
    const unknown = await srv.cliRaw(["export", "--project", "prj_nope"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain("no project prj_nope");
    expect(unknown.stderr).toContain(`${source.p.id} (Export Source)`);
    const format = await srv.cliRaw(["export", "--project", source.p.id, "--format", "xml"]);
    expect(format.exitCode).toBe(2);
    expect(format.stdout).toBe("");
    expect(format.stderr).toContain("csv, jsonl");
    const target = join(dir, "missing-folder", "out.csv");
    const unwritable = await srv.cliRaw(["export", "--project", source.p.id, "--output", target]);
    expect(unwritable.exitCode).toBe(2);
    expect(unwritable.stderr).toContain("cannot write");
    expect(existsSync(target) || existsSync(`${target}.partial`)).toBe(false);
  });

  test("round trip: the CSV imported into a second project gives the same contacts (ids, times and reference ids aside)", async () => {
    const target = await prepareProject("Export Target");
    const file = join(dir, "round-trip.csv");
    writeFileSync(file, csvText);
    const r = await srv.cliRaw(["import", file, "--project", target.p.id, "--json"]);
    expect({ exitCode: r.exitCode, stderr: r.stderr }).toMatchObject({ exitCode: 0 });
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ created: 5, skippedCount: 0 });
    const { items } = await walk(target.p.api, "/contacts", { limit: 200 });
    const imported = [...items].sort((a, b) => contactNumber(a) - contactNumber(b));
    const titleOf = (cf: Record<string, string>) => Object.fromEntries(Object.entries(cf).map(([title, id]) => [id, title]));
    const comparable = (c: any, titles: Record<string, string>) => {
      const { contactId: _, createdAt: __, updatedAt: ___, duplicateSignal: ____, version: _____, tags, contactType, customFields, ...rest } = c;
      return {
        ...rest,
        tags: tags.map((t: any) => t.name),
        contactType: contactType && { name: contactType.name, category: contactType.category },
        customFields: Object.fromEntries(Object.entries(customFields).map(([id, v]) => [titles[id], v])),
      };
    };
    expect(imported.map((c) => comparable(c, titleOf(target.cf)))).toEqual(shown.map((c) => comparable(c, titleOf(source.cf))));
  });

  test("console: the Export page shows the count and both downloads, which equal the CLI's output", async () => {
    const { client } = await signedInAdmin(srv.origin, srv.env);
    const base = `/admin/projects/${source.p.id}/export`;
    const page = await client.get(base);
    expect(page.status).toBe(200);
    expect(pageText(page.text)).toContain("This project has 5 contacts");
    expect(page.text).toContain(`href="${base}.csv"`);
    expect(page.text).toContain(`href="${base}.csv?raw=1"`);
    expect(page.text).toContain(`href="${base}.jsonl"`);
    expect(page.text).toMatch(new RegExp(`<a href="${base}" aria-current="page">Export</a>`));

    const day = new Date().toISOString().slice(0, 10);
    const csv = await client.get(`${base}.csv`);
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(csvText);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="export-source-contacts-${day}.csv"`);
    expect(csv.headers.get("cache-control")).toBe("no-store");
    const raw = await client.get(`${base}.csv?raw=1`);
    expect(raw.status).toBe(200);
    expect(raw.text).toBe(rawText);
    expect(raw.headers.get("content-disposition")).toBe(`attachment; filename="export-source-contacts-${day}-raw.csv"`);
    const jsonl = await client.get(`${base}.jsonl`);
    expect(jsonl.status).toBe(200);
    expect(jsonl.text).toBe(jsonlText);
    expect(jsonl.headers.get("content-type")).toBe("application/x-ndjson");
    expect(jsonl.headers.get("content-disposition")).toBe(`attachment; filename="export-source-contacts-${day}.jsonl"`);
  });

  test("console: without a session the downloads are refused (sent to sign in, no contact data)", async () => {
    const anonymous = new AdminClient(srv.origin);
    for (const path of ["export", "export.csv", "export.csv?raw=1", "export.jsonl"]) {
      const res = await anonymous.get(`/admin/projects/${source.p.id}/${path}`);
      expect(res.status).toBe(303);
      expect(res.location).toStartWith("/admin/sign-in");
      expect(res.text).not.toContain("ada@example.com");
    }
  });
});

describe("CSV exports neutralise spreadsheet formulas (docs/security.md §8)", () => {
  /** A custom text field, and one whose title itself starts with a trigger (the header's cell). */
  const PLANTED = { firstName: '=HYPERLINK("http://x")', phone: "+1 202 555 0100", notes: "-1+2", handle: "@SUM(A1)", total: -3 };
  let projectId: string;
  let fieldIds: Record<string, string>;
  let contactId: string;
  let csvText: string;
  let rawText: string;

  async function fieldsOf(id: string) {
    const ids: Record<string, string> = {};
    for (const [title, type] of [["Handle", "text"], ["=Total", "number"]] as const) {
      ids[title] = (await srv.cli(["custom-field", "create", "--project", id, "--title", title, "--type", type, "--json"])).id;
    }
    return ids;
  }

  /** What the API shows of the planted values, custom fields by title. */
  async function planted(api: Api, id: string, ids: Record<string, string>) {
    const res = await api("GET", `/contacts/${id}`);
    expect(res.status).toBe(200);
    const c = res.json;
    return { firstName: c.firstName, phone: c.phone, notes: c.notes, handle: c.customFields[ids.Handle!], total: c.customFields[ids["=Total"]!] };
  }

  /** The one data row of an export, by header. */
  async function rowOf(text: string) {
    const [header, row, ...rest] = await parsed(text);
    expect(rest).toEqual([]);
    return Object.fromEntries(header!.map((h, i) => [h, row![i]!]));
  }

  beforeAll(async () => {
    const p = await srv.newProject({ name: "Formulas" });
    projectId = p.id;
    fieldIds = await fieldsOf(p.id);
    const { handle, total, ...fields } = PLANTED;
    const res = await p.api("POST", "/contacts", { body: { ...fields, customFields: { [fieldIds.Handle!]: handle, [fieldIds["=Total"]!]: total } } });
    expect(res.status).toBe(201);
    contactId = res.json.contactId;
    expect(await planted(p.api, contactId, fieldIds)).toEqual(PLANTED);
    csvText = (await exportOf(p.id, "--format", "csv")).stdout;
    rawText = (await exportOf(p.id, "--format", "csv", "--raw")).stdout;
  }, 60_000);

  test("crm export --format csv puts a ' before =, +, - and @ in every cell, the header's included", async () => {
    const row = await rowOf(csvText);
    expect(row).toMatchObject({
      firstName: "'=HYPERLINK(\"http://x\")",
      phone: "'+1 202 555 0100",
      notes: "'-1+2",
      Handle: "'@SUM(A1)",
      "'=Total": "'-3",
      contactId,
      email: "",
    });
    expect(csvText).toContain(`,'=Total\r\n`);
    expect(csvText).toContain(`'=HYPERLINK(""http://x"")`);
    expect(csvText).toContain(",'+1 202 555 0100,");
  });

  test("crm export --raw writes the cells exactly as stored", async () => {
    const row = await rowOf(rawText);
    expect(row).toMatchObject({ firstName: PLANTED.firstName, phone: PLANTED.phone, notes: PLANTED.notes, Handle: PLANTED.handle, "=Total": "-3" });
    expect(rawText).not.toContain("'");
    // JSON lines are not a spreadsheet format: unchanged, --raw or not.
    const jsonl = (await exportOf(projectId, "--format", "jsonl")).stdout;
    expect(JSON.parse(jsonl)).toMatchObject({ firstName: PLANTED.firstName, phone: PLANTED.phone, notes: PLANTED.notes });
    expect((await exportOf(projectId, "--format", "jsonl", "--raw")).stdout).toBe(jsonl);
  });

  test("the neutralised CSV imported with crm import gives back the same field values", async () => {
    const target = await srv.newProject({ name: "Formulas Back" });
    const ids = await fieldsOf(target.id);
    const file = join(dir, "formulas.csv");
    writeFileSync(file, csvText);
    const r = await srv.cliRaw(["import", file, "--project", target.id, "--json"]);
    expect({ exitCode: r.exitCode, stderr: r.stderr }).toMatchObject({ exitCode: 0 });
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ created: 1, skippedCount: 0 });
    expect(await planted(target.api, "CR-1", ids)).toEqual(PLANTED);
  });

  test("console: the CSV download is neutralised; the raw link gives the exact cells", async () => {
    const { client } = await signedInAdmin(srv.origin, srv.env);
    const base = `/admin/projects/${projectId}/export`;
    const page = await client.get(base);
    expect(page.status).toBe(200);
    expect(pageText(page.text)).toContain("gets a leading ' so it opens as text");
    const csv = await client.get(`${base}.csv`);
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(csvText);
    expect((await rowOf(csv.text)).firstName).toBe("'=HYPERLINK(\"http://x\")");
    const raw = await client.get(`${base}.csv?raw=1`);
    expect(raw.status).toBe(200);
    expect(raw.text).toBe(rawText);
    // Only raw=1 asks for it: any other value is the neutralised default.
    expect((await client.get(`${base}.csv?raw=0`)).text).toBe(csvText);
  });
});

describe("crm export across pages (docs/import-export.md §2: constant memory, keyset pages)", () => {
  let p: ProjectInfo;
  const COUNT = 1_234;

  beforeAll(async () => {
    p = await srv.newProject({ rateLimitPerMinute: 1_000_000, contactCreatesPerHour: 1_000_000 });
    let next = 0;
    const worker = async () => {
      while (next < COUNT) {
        const i = ++next;
        const res = await p.api("POST", "/contacts", { key: p.key, body: { firstName: `Person ${i}`, email: `p${i}@example.com`, tags: [`t${i % 3}`] } });
        if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${res.text}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    // CR-0 sorts first; CR-7 moves past the end.
    expect((await p.api("PATCH", "/contacts/CR-500", { key: p.key, body: { contactId: "CR-0" } })).status).toBe(200);
    expect((await p.api("PATCH", "/contacts/CR-7", { key: p.key, body: { contactId: "CR-5000" } })).status).toBe(200);
  }, 120_000);

  test("every contact once, in contact-number order, each as the API lists it", async () => {
    const { items } = await walk(p.api, "/contacts", { limit: 200 }, p.key);
    expect(items.length).toBe(COUNT);
    const byNumber = [...items].sort((a, b) => contactNumber(a) - contactNumber(b));
    const lines = (await exportOf(p.id, "--format", "jsonl")).stdout.trimEnd().split("\n");
    expect(lines.length).toBe(COUNT);
    expect(lines[0]).toStartWith('{"contactId":"CR-0",');
    expect(lines.at(-1)).toStartWith('{"contactId":"CR-5000",');
    expect(lines).toEqual(byNumber.map((c) => JSON.stringify(c)));
    const [, ...rows] = await parsed((await exportOf(p.id)).stdout);
    expect(rows.map((r) => r[0])).toEqual(byNumber.map((c) => c.contactId));
  });

  test("a reader that stops early (crm export | head) ends the export quietly", async () => {
    const proc = Bun.spawn([BUN, "src/main.ts", "export", "--project", p.id, "--format", "jsonl"], { cwd: REPO_ROOT, env: srv.env, stdout: "pipe", stderr: "pipe" });
    const reader = proc.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toStartWith('{"contactId":"CR-0",');
    await reader.cancel();
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });
});
