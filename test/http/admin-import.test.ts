/**
 * The admin console's CSV import over HTTP (docs/admin.md §3, docs/import-export.md §1): a multipart upload, the
 * preview of its columns (nothing written yet), the start, the import running in the
 * background of the server through the importer of `crm import`, its page polled until
 * done, then its summary; the contacts read back through the API.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AdminClient, pageText, signedInAdmin, tableRows, type AdminPage } from "../helpers/admin.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(120_000);

let server: ServerHandle;
let admin: AdminClient;

beforeAll(async () => {
  server = await startServer({ env: "sandbox" });
  admin = (await signedInAdmin(server.origin, server.env)).client;
}, 60_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

const importPath = (p: { id: string }) => `/admin/projects/${p.id}/import`;
/** POSTs `csv` as the form's file, multipart, as a browser does; `csrf: null` leaves the token out. */
async function upload(p: { id: string }, csv: string | Blob, opts: { name?: string; csrf?: string | null } = {}) {
  await admin.get(importPath(p));
  const form = new FormData();
  const csrf = opts.csrf === undefined ? admin.csrf : opts.csrf;
  if (csrf !== null) form.append("_csrf", csrf);
  form.append("file", new File([csv], opts.name ?? "contacts.csv", { type: "text/csv" }));
  return admin.request("POST", importPath(p), { body: form, headers: { Origin: server.origin } });
}

const uploadPath = (p: { id: string }) => new RegExp(`^${importPath(p)}/uploads/imp_[A-Za-z0-9]{22}$`);

/** Opens the upload's preview (for its form's token) and posts "Start import" with `choices` (col-N → field or "skip"). */
async function start(preview: string, choices: Record<string, string> = {}) {
  const page = await admin.get(preview);
  expect(page.status).toBe(200);
  return admin.post(`${preview}/start`, choices);
}

/** Upload, then start with no choice: the import's page location. */
async function uploadAndStart(p: { id: string }, csv: string | Blob, opts: { name?: string } = {}) {
  const posted = await upload(p, csv, opts);
  expect(posted.status, posted.text.slice(0, 300)).toBe(303);
  expect(posted.location).toMatch(uploadPath(p));
  const started = await start(posted.location!);
  expect(started.status, pageText(started.text).slice(0, 300)).toBe(303);
  return started.location!;
}

const refreshes = (page: AdminPage) => /<meta http-equiv="refresh" content="\d+"/.test(page.text);

/** Polls the import's page (as its meta refresh would) until it stops refreshing itself. */
async function finished(location: string): Promise<AdminPage> {
  return until(
    async () => {
      const page = await admin.get(location);
      expect(page.status).toBe(200);
      return !refreshes(page) && page;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: `import ${location} to finish` },
  );
}

/** The summary's value for `name` (Rows, Created, Skipped, Status). */
const summary = (page: AdminPage, name: string) => new RegExp(`<dt>${name}</dt><dd>(.*?)</dd>`).exec(page.text)?.[1]?.replace(/<[^>]+>/g, "");

describe("CSV import in the console (docs/admin.md §3, docs/import-export.md §1)", () => {
  let p: ProjectInfo;
  let done: AdminPage;

  beforeAll(async () => {
    p = await server.newProject();
    const csv = "firstName,lastName,email,tags\n" + "Ada,Lovelace,ada@example.com,vip\n" + "Bob,,not-an-email,\n" + "Cy,Young,cy@example.com,\n" + ",,,\n" + "Dee,,dee@example.com,vip;new\n";
    const location = await uploadAndStart(p, csv, { name: "people.csv" });
    expect(location).toMatch(new RegExp(`^${importPath(p)}/imp_[A-Za-z0-9]{22}$`));
    done = await finished(location);
  });

  test("the summary shows the rows, the 3 created, the rejected row with its reason and field, and the blank row skipped apart", () => {
    expect(done.text).toMatch(/<h1[^>]*>Import of people\.csv<\/h1>/);
    expect(summary(done, "Status")).toBe("Done");
    expect(summary(done, "Rows")).toBe("5");
    expect(summary(done, "Created")).toBe("3");
    expect(summary(done, "Skipped")).toBe("1");
    expect(summary(done, "Blank rows skipped")).toBe("1");
    expect(tableRows(done.text, "Rejected rows")).toEqual([["2", "email must be a valid email address.", "email"]]);
    expect(done.text).not.toContain("<progress");
  });

  test("the contacts are served by the API with source import, and no contact.created event was recorded", async () => {
    const { items } = await walk(p.api, "/contacts");
    expect(items.map((c: any) => c.firstName).sort()).toEqual(["Ada", "Cy", "Dee"]);
    expect(items.every((c: any) => c.source === "import")).toBe(true);
    expect(items.find((c: any) => c.firstName === "Dee").tags.map((t: any) => t.name).sort()).toEqual(["new", "vip"]);
    const { items: events } = await walk(p.api, "/events");
    // A project of its own: no event of any kind was recorded for it.
    expect(events.map((e: any) => e.event)).toEqual([]);
  });

  test("the import page lists the project's recent imports, each linking to its page", async () => {
    const page = await admin.get(importPath(p));
    expect(page.text).toMatch(/<h1[^>]*>Import<\/h1>/);
    expect(page.text).toContain('<label for="f-file">CSV file</label>');
    expect(page.text).toContain('<button type="submit">Upload</button>');
    expect(page.text).toContain('enctype="multipart/form-data"');
    const rows = tableRows(page.text, "Recent imports");
    expect(rows).toHaveLength(1);
    expect([rows[0]![0], ...rows[0]!.slice(2)]).toEqual(["people.csv", "Done", "5", "3", "1"]);
    const link = /href="([^"]+)">people\.csv<\/a>/.exec(page.text)![1]!;
    expect((await admin.get(link)).text).toMatch(/<h1[^>]*>Import of people\.csv<\/h1>/);
  });
});

describe("the columns of an upload are shown before it runs (docs/import-export.md §1)", () => {
  let p: ProjectInfo;
  let stage: string;
  const csv =
    "contactId,First Name,Last Nme,E-mail,Temperature,Fax\n" +
    "CR-4,Ada,Lovelace,ada@example.com,hot,111\n" +
    "CR-5,Bob,Babbage,bob@example.com,cold,222\n" +
    "CR-6,Cy,Young,cy@example.com,warm,333\n" +
    "CR-7,Dee,Dee,dee@example.com,new,444\n";

  beforeAll(async () => {
    p = await server.newProject();
    stage = (await server.cli(["custom-field", "create", "--project", p.id, "--title", "Stage", "--type", "text", "--json"])).id;
  });

  test("the preview lists each column's field, read-only ones skipped, unknown ones with their closest field, under the first 3 rows; nothing is written yet", async () => {
    const posted = await upload(p, csv, { name: "hubspot.csv" });
    expect(posted.status).toBe(303);
    expect(posted.location).toMatch(uploadPath(p));
    const page = await admin.get(posted.location!);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<h1[^>]*>Check the columns of hubspot\.csv<\/h1>/);
    const rows = tableRows(page.text, "Columns");
    expect(rows.map((r) => r[0])).toEqual(["contactId", "First Name", "Last Nme", "E-mail", "Temperature", "Fax"]);
    expect(rows[0]).toEqual(["contactId", "skipped: set by the service", "CR-4", "CR-5", "CR-6"]);
    expect(rows[1]).toEqual(["First Name", "firstName", "Ada", "Bob", "Cy"]);
    expect(rows[3]).toEqual(["E-mail", "email", "ada@example.com", "bob@example.com", "cy@example.com"]);
    expect(rows[2]![1]).toStartWith("unknown — closest: lastName Choose a field… Skip this column firstName lastName");
    expect(rows[2]![1]).toContain("Stage (custom field)");
    expect(page.text).toContain('<select id="f-col-2" name="col-2" aria-label="Field for column Last Nme"');
    expect(page.text).not.toContain("Dee");
    expect(page.text).toContain('<button type="submit">Start import</button>');
    expect((await p.api("GET", "/contacts")).json.data).toEqual([]);
    expect(tableRows((await admin.get(importPath(p))).text, "Recent imports")).toEqual([]);
  });

  test("a start with an unknown column left without a choice is refused (422), saying which; nothing is imported", async () => {
    const posted = await upload(p, csv);
    const refused = await start(posted.location!, { "col-2": "lastName", "col-5": "skip" });
    expect(refused.status).toBe(422);
    expect(pageText(refused.text)).toContain("There is a problem Choose the field of column “Temperature”, or skip it.");
    // The choices made are kept on the page, each column still with its closest field.
    expect(refused.text).toContain('<option value="lastName" selected="">lastName</option>');
    expect(tableRows(refused.text, "Columns")[2]![1]).toStartWith("unknown — closest: lastName");
    expect((await p.api("GET", "/contacts")).json.data).toEqual([]);
    expect((await admin.get(posted.location!)).status).toBe(200);
  });

  test("a choice that repeats a matched field is refused naming both columns", async () => {
    const posted = await upload(p, csv);
    const refused = await start(posted.location!, { "col-2": "email", "col-4": "skip", "col-5": "skip" });
    expect(refused.status).toBe(422);
    expect(pageText(refused.text)).toContain('columns "Last Nme" and "E-mail" both set email.');
  });

  test("started, it imports the matched columns and the unknown ones into the fields chosen; skipped ones are not imported; the upload is then gone", async () => {
    const posted = await upload(p, csv, { name: "chosen.csv" });
    const started = await start(posted.location!, { "col-2": "lastName", "col-4": `customFields.${stage}`, "col-5": "skip" });
    expect(started.status).toBe(303);
    const id = posted.location!.split("/").pop();
    expect(started.location).toBe(`${importPath(p)}/${id}`);
    const done = await finished(started.location!);
    expect(summary(done, "Status")).toBe("Done");
    expect(summary(done, "Created")).toBe("4");
    const { items } = await walk(p.api, "/contacts");
    const ada = items.find((c: any) => c.firstName === "Ada");
    expect(ada).toMatchObject({ lastName: "Lovelace", email: "ada@example.com", customFields: { [stage]: "hot" }, source: "import" });
    expect(items.map((c: any) => c.contactId).sort()).toEqual(["CR-1", "CR-2", "CR-3", "CR-4"]);
    // The skipped Fax column's values are in no field, nested ones included; timestamps and
    // generated ids are left out, custom fields' too (milliseconds or random characters may read "111").
    const fields = JSON.stringify(items, (key, value) => (/At$|^id$|Id$/.test(key) ? undefined : key === "customFields" ? Object.values(value) : value));
    expect(fields).toContain('"hot"');
    expect(["111", "222", "333", "444"].filter((fax) => fields.includes(fax))).toEqual([]);
    // Started once: its preview and a second start answer 404, and nothing more is imported.
    const again = await admin.post(`${posted.location}/start`, { "col-2": "lastName", "col-4": "skip", "col-5": "skip" });
    expect(again.status).toBe(404);
    expect(pageText(again.text)).toContain("This upload is gone");
    expect((await admin.get(posted.location!)).status).toBe(404);
    expect((await walk(p.api, "/contacts")).items).toHaveLength(4);
  });

  test("the start form needs its CSRF token: without it, 403 and nothing starts", async () => {
    const own = await server.newProject();
    const posted = await upload(own, "firstName\nMallory\n");
    await admin.get(posted.location!);
    const refused = await admin.post(`${posted.location}/start`, { _csrf: "x".repeat(43) });
    expect(refused.status).toBe(403);
    expect(tableRows((await admin.get(importPath(own))).text, "Recent imports")).toEqual([]);
    expect((await own.api("GET", "/contacts")).json.data).toEqual([]);
  });

  test("an upload older than an hour is gone: its preview and its start answer 404", async () => {
    const own = await server.newProject();
    const posted = await upload(own, "firstName\nLate\n");
    const id = posted.location!.split("/").pop();
    await admin.get(posted.location!);
    const db = await openSideDatabase(server.env);
    try {
      await db.run("UPDATE admin_import_uploads SET created_at = ? WHERE id = ?", new Date(Date.now() - 61 * 60_000).toISOString(), id);
    } finally {
      await db.close();
    }
    expect((await admin.get(posted.location!)).status).toBe(404);
    const refused = await admin.post(`${posted.location}/start`);
    expect(refused.status).toBe(404);
    expect(pageText(refused.text)).toContain("an upload is kept for an hour");
    expect((await own.api("GET", "/contacts")).json.data).toEqual([]);
    // The next upload (of any project) deletes it.
    expect((await upload(p, "firstName\nNext\n")).status).toBe(303);
    const side = await openSideDatabase(server.env, { readonly: true });
    try {
      expect(await side.get("SELECT count(*) AS n FROM admin_import_uploads WHERE id = ?", id)).toEqual({ n: 0 });
    } finally {
      await side.close();
    }
  });

  test("a file without a header row shows so, and cannot be started", async () => {
    const own = await server.newProject();
    const posted = await upload(own, "\n\n");
    const page = await admin.get(posted.location!);
    expect(pageText(page.text)).toContain("The file has no header row, so it cannot be imported.");
    expect(page.text).not.toContain("Start import</button>");
    const refused = await admin.post(`${posted.location}/start`);
    expect(refused.status).toBe(422);
  });
});

describe("what an import refuses or stops on", () => {
  test("a malformed record stops the import there; the rows before it are imported", async () => {
    const p = await server.newProject();
    const file = 'firstName,email\nAna,ana@example.com\n"Ben,ben@example.com\n';
    const preview = await admin.get((await upload(p, file)).location!);
    expect(pageText(preview.text)).toContain("The file has a malformed record, row 2: a quoted field is not closed at the end of the file. The import would stop there");
    const page = await finished(await uploadAndStart(p, file));
    expect(summary(page, "Status")).toBe("Failed");
    expect(pageText(page.text)).toContain("row 2: a quoted field is not closed at the end of the file. The rows before it were imported.");
    expect(summary(page, "Created")).toBe("1");
    expect((await p.api("GET", "/contacts")).json.data.map((c: any) => c.firstName)).toEqual(["Ana"]);
  });

  test("the project's contact quota is respected: rows past it are rejected", async () => {
    const p = await server.newProject({ contactQuota: 2 });
    const page = await finished(await uploadAndStart(p, "firstName\nA\nB\nC\nD\n"));
    expect(summary(page, "Created")).toBe("2");
    expect(tableRows(page.text, "Rejected rows")).toEqual([
      ["3", "contact quota exhausted", "—"],
      ["4", "contact quota exhausted", "—"],
    ]);
    expect((await p.api("GET", "/contacts")).json.data).toHaveLength(2);
  });

  test("a multipart POST without the CSRF field is refused 403 and starts nothing", async () => {
    const p = await server.newProject();
    const refused = await upload(p, "firstName\nMallory\n", { csrf: null });
    expect(refused.status).toBe(403);
    expect(pageText(refused.text)).toContain("Form refused");
    const wrong = await upload(p, "firstName\nMallory\n", { csrf: "x".repeat(43) });
    expect(wrong.status).toBe(403);
    expect(tableRows((await admin.get(importPath(p))).text, "Recent imports")).toEqual([]);
    expect((await p.api("GET", "/contacts")).json.data).toEqual([]);
  });

  test("no file chosen is a form error (422)", async () => {
    const p = await server.newProject();
    const empty = await upload(p, "", { name: "" });
    expect(empty.status).toBe(422);
    expect(pageText(empty.text)).toContain("Choose a CSV file");
  });

  test("a file over 20 MiB is refused with a 413 page", async () => {
    const p = await server.newProject();
    const big = new Blob(["firstName\n", "x".repeat(20 * 1024 * 1024)]);
    const res = await upload(p, big);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(pageText(res.text)).toContain("Too large");
  });

  test("while an import runs its page shows a progress bar and refreshes itself; a second upload or start waits for it; the API is still answered", async () => {
    const p = await server.newProject();
    const waiting = await upload(p, "firstName\nEarlier\n");
    expect(waiting.status).toBe(303);
    const rows = Array.from({ length: 4_000 }, (_, i) => `Person${i},person${i}@example.com`);
    const location = await uploadAndStart(p, `firstName,email\n${rows.join("\n")}\n`, { name: "many.csv" });
    const running = await admin.get(location);
    expect(summary(running, "Status")).toBe("Running");
    expect(refreshes(running)).toBe(true);
    expect(running.text).toMatch(/<progress max="\d+" value="\d+"/);
    const second = await upload(p, "firstName\nLater\n");
    expect(second.status).toBe(409);
    expect(pageText(second.text)).toContain("An import of this project is still running");
    const startedMeanwhile = await start(waiting.location!);
    expect(startedMeanwhile.status).toBe(409);
    expect(pageText(startedMeanwhile.text)).toContain("An import of this project is still running; start this one once it finishes.");
    // The import shares the API's write queue in short transactions: a write request gets
    // through meanwhile, so its contact number falls among the imported rows' (numbers are
    // given in commit order), not after the last of them.
    const meanwhile = await p.api("POST", "/contacts", { key: p.key, body: { firstName: "Meanwhile" } });
    expect(meanwhile.status).toBe(201);
    const page = await finished(location);
    expect(summary(page, "Created")).toBe("4,000");
    expect(Number(meanwhile.json.contactId.slice(3))).toBeLessThan(4_001);
    expect(summary(page, "Skipped")).toBe("0");
  });
});

describe("a server stopped during an import (docs/operations.md §3)", () => {
  test("the import stops after the rows it read are written, and its page says after which row, once the server is back", async () => {
    const first = await startServer({ env: "sandbox" });
    let second: ServerHandle | undefined;
    try {
      const own = (await signedInAdmin(first.origin, first.env)).client;
      const p = await first.newProject();
      const rows = Array.from({ length: 20_000 }, (_, i) => `Person${i},person${i}@example.com`);
      await own.get(importPath(p));
      const form = new FormData();
      form.append("_csrf", own.csrf);
      form.append("file", new File([`firstName,email\n${rows.join("\n")}\n`], "huge.csv"));
      const uploaded = await own.request("POST", importPath(p), { body: form, headers: { Origin: first.origin } });
      expect(uploaded.status).toBe(303);
      await own.get(uploaded.location!);
      const posted = await own.post(`${uploaded.location}/start`);
      expect(posted.status).toBe(303);
      // Some progress recorded: the import is under way when SIGTERM comes.
      await until(async () => Number(summary(await own.get(posted.location!), "Rows")?.replace(/,/g, "")) > 0, { timeoutMs: 60_000, what: "the import's first progress" });
      await first.stop(true);

      second = await startServer({ env: "sandbox", dir: first.dir, expectBootstrapKey: false });
      const again = (await signedInAdmin(second.origin, second.env)).client;
      const page = await again.get(posted.location!);
      expect(summary(page, "Status")).toBe("Failed");
      const reason = /The server stopped during the import, after row ([\d,]+): the rows up to it were imported or rejected/.exec(pageText(page.text));
      expect(reason).not.toBeNull();
      const stoppedAfter = Number(reason![1]!.replace(/,/g, ""));
      expect(stoppedAfter).toBeGreaterThan(0);
      expect(stoppedAfter).toBeLessThan(20_000);
      const created = Number(summary(page, "Created")!.replace(/,/g, ""));
      // Every row up to that one was written (no row is rejected here); none after it.
      expect(created).toBe(stoppedAfter);
      const api = second.client({ projectId: p.id });
      const { items } = await walk(api, "/contacts", { limit: 200 });
      expect(items.length).toBe(created);
    } finally {
      await second?.stop();
      await first.stop().catch(() => undefined);
    }
  });
});
