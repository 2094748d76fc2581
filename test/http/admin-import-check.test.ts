/**
 * The console's import of another CRM's export, start to finish (docs/import-export.md §1.6,
 * §1.11): a HubSpot-style upload whose every column has a field with no choice, lifecycle-like
 * columns offered as the contact type, every row's values checked before the start (how many
 * would fail and why), blank rows skipped, the rejected rows downloaded as a CSV that imports
 * once fixed, and that CSV deleted on request or after 7 days.
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

/** Uploads `csv` as a browser does (multipart); the preview's location. */
async function upload(p: { id: string }, csv: string, name = "contacts.csv") {
  await admin.get(importPath(p));
  const form = new FormData();
  form.append("_csrf", admin.csrf);
  form.append("file", new File([csv], name, { type: "text/csv" }));
  const posted = await admin.request("POST", importPath(p), { body: form, headers: { Origin: server.origin } });
  expect(posted.status, posted.text.slice(0, 300)).toBe(303);
  return posted.location!;
}

/** The <select> values the page posts as they are: each column's selected choice. */
const selectedChoices = (html: string) =>
  Object.fromEntries(
    [...html.matchAll(/<select id="f-(col-\d+)"[\s\S]*?<\/select>/g)].map((m) => [m[1]!, /<option value="([^"]*)" selected=""/.exec(m[0])?.[1] ?? ""]),
  );

async function finished(location: string): Promise<AdminPage> {
  return until(
    async () => {
      const page = await admin.get(location);
      expect(page.status).toBe(200);
      return !/<meta http-equiv="refresh"/.test(page.text) && page;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: `import ${location} to finish` },
  );
}

const summary = (page: AdminPage, name: string) => new RegExp(`<dt>${name}</dt><dd>(.*?)</dd>`).exec(page.text)?.[1]?.replace(/<[^>]+>/g, "");

const HEADER = "First Name,Last Name,Email,Phone Number,Mobile Phone Number,Company Name,Website URL,Street Address,City,State/Region,Postal Code,Country/Region,Lifecycle Stage,Lead Status";
const ROWS = [
  "Grace,Hopper,grace@example.com,+1 212 555 0100,,Navy,https://navy.example.com,1 Main St,Arlington,VA,22201,United States,Customer,Open",
  "Bob,Babbage,bob-at-example,,,,,,,,,,Lead,New",
  ",,,,,,,,,,,,,",
  'Ada,Lovelace,ada@example.com,,,"Engines, Ltd",,,,,,,Evangelist,',
  "Cy,Young,cy@,,+1 310 555 0100,,,,,,,,,",
  "Dee,Dee,dee@example.com,,+44 20 7946 0001,,,,London,,,UK,lead,",
];

describe("a HubSpot export in the console: preview, check, start, rejected rows, fix, import again", () => {
  let p: ProjectInfo;
  let preview: string;
  let page: AdminPage;
  let done: AdminPage;
  let rejectedCsv: string;

  beforeAll(async () => {
    p = await server.newProject();
    preview = await upload(p, `${HEADER}\n${ROWS.join("\n")}\n`, "hubspot.csv");
    page = await admin.get(preview);
    expect(page.status).toBe(200);
  });

  test("the preview gives every column a field with no choice needed; lifecycle-like columns offer the contact type, by name", () => {
    const rows = tableRows(page.text, "Columns");
    expect(rows.map((r) => r[0])).toEqual(HEADER.split(","));
    expect(rows.slice(0, 12).map((r) => r[1])).toEqual([
      "firstName", "lastName", "email", "phone", "phone (second choice: where another column leaves it empty)", "businessName", "website", "address.line1", "address.city", "address.state", "address.zip", "address.country",
    ]);
    expect(rows[12]![1]).toStartWith("lifecycle-like: its values name the project's contact types");
    expect(rows[13]![1]).toStartWith("lifecycle-like");
    expect(page.text).not.toContain("closest: firstName");
    expect(page.text).not.toContain("unknown —");
    expect(selectedChoices(page.text)).toEqual({ "col-12": "contactType", "col-13": "skip" });
  });

  test("before the start, the values are checked: how many rows would fail, why, and their first rows; the blank row apart", () => {
    expect(pageText(page.text)).toContain("Of 6 rows, 2 would be created and 3 would be rejected; 1 blank row would be skipped.");
    expect(tableRows(page.text, "Rows that would be rejected")).toEqual([
      ["email must be a valid email address.", "email", "2", "2, 5"],
      [expect.stringMatching(/^Lifecycle Stage "Evangelist" is not a contact type of the project \(its types: .*Customer/), "contactType", "1", "4"],
    ]);
    expect(page.text.indexOf('id="values"')).toBeLessThan(page.text.indexOf("Start import</button>"));
  });

  test("Check again checks with the choices made, writing nothing", async () => {
    const again = await admin.post(preview, { "col-12": "skip", "col-13": "skip" });
    expect(again.status).toBe(200);
    expect(pageText(again.text)).toContain("Of 6 rows, 3 would be created and 2 would be rejected");
    expect(selectedChoices(again.text)).toEqual({ "col-12": "skip", "col-13": "skip" });
    expect((await p.api("GET", "/contacts")).json.data).toEqual([]);
  });

  test("started, the summary counts the rows, the created, the rejected and the blank rows skipped", async () => {
    await admin.get(preview);
    const started = await admin.post(`${preview}/start`, selectedChoices(page.text));
    expect(started.status, pageText(started.text).slice(0, 300)).toBe(303);
    done = await finished(started.location!);
    expect([summary(done, "Status"), summary(done, "Rows"), summary(done, "Created"), summary(done, "Skipped"), summary(done, "Blank rows skipped")]).toEqual([
      "Done", "6", "2", "3", "1",
    ]);
    expect(tableRows(done.text, "Rejected rows").map((r) => r[0])).toEqual(["2", "4", "5"]);
    const { items } = await walk(p.api, "/contacts");
    const types = Object.fromEntries((await p.api("GET", "/contact-types")).json.data.map((t: any) => [t.name, t.id]));
    const dee = items.find((c: any) => c.firstName === "Dee");
    expect(dee).toMatchObject({ phone: "+44 20 7946 0001", contactType: { id: types.Lead }, address: { city: "London", country: "UK" } });
  });

  test("the rejected rows download as a CSV: the header, each rejected row's own cells in order (formulas guarded), and an error column", async () => {
    const link = /href="([^"]+\/rejected\.csv)"/.exec(done.text)?.[1];
    expect(link).toBeDefined();
    const res = await admin.get(link!);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/csv");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="rejected-imp-[A-Za-z0-9]+\.csv"$/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    rejectedCsv = res.text;
    const lines = rejectedCsv.split("\r\n");
    expect(lines[0]).toBe(`${HEADER},error`);
    expect(lines[1]).toBe(`${ROWS[1]},email must be a valid email address.`);
    expect(lines[2]).toStartWith(`${ROWS[3]},"Lifecycle Stage ""Evangelist"" is not a contact type of the project (its types: `);
    // A cell a spreadsheet would take for a formula gets a ' (docs/security.md §8), which the import takes off again.
    expect(lines[3]).toBe(`${ROWS[4]!.replace("+1 310", "'+1 310")},email must be a valid email address.`);
    expect(lines.slice(4)).toEqual([""]);
  });

  test("fixed, the rejected rows' CSV imports: its error column is skipped, and every row is created", async () => {
    const fixed = rejectedCsv.replace("bob-at-example", "bob@example.com").replace("cy@,", "cy@example.com,").replace(",Evangelist,", ",Customer,");
    const again = await upload(p, fixed, "fixed.csv");
    const check = await admin.get(again);
    expect(tableRows(check.text, "Columns").at(-1)!.slice(0, 2)).toEqual(["error", "skipped: a rejected row's reason"]);
    expect(pageText(check.text)).toContain("Of 3 rows, 3 would be created and 0 would be rejected.");
    const started = await admin.post(`${again}/start`, selectedChoices(check.text));
    expect(started.status).toBe(303);
    const second = await finished(started.location!);
    expect([summary(second, "Created"), summary(second, "Skipped")]).toEqual(["3", "0"]);
    expect(second.text).not.toContain("rejected.csv");
    const { items } = await walk(p.api, "/contacts");
    expect(items.map((c: any) => c.firstName).sort()).toEqual(["Ada", "Bob", "Cy", "Dee", "Grace"]);
    expect(JSON.stringify(items)).not.toContain("valid email");
  });

  test("Delete rejected rows asks first, then the CSV is gone (404) and the page says so", async () => {
    const location = new URL(/href="([^"]+\/rejected\.csv)"/.exec(done.text)![1]!, server.origin).pathname.replace(/\/rejected\.csv$/, "");
    await admin.get(location);
    const asked = await admin.post(`${location}/rejected/delete`);
    expect(asked.status).toBe(200);
    expect(pageText(asked.text)).toContain("Delete the rejected rows of hubspot.csv?");
    expect((await admin.get(`${location}/rejected.csv`)).status).toBe(200);
    const deleted = await admin.post(`${location}/rejected/delete`, { confirm: "yes" });
    expect(deleted.status).toBe(303);
    expect((await admin.get(`${location}/rejected.csv`)).status).toBe(404);
    expect(pageText((await admin.get(location)).text)).toContain("The rejected rows' CSV is no longer kept");
  });
});

describe("the rejected rows are kept 7 days", () => {
  test("past 7 days after the import ended, the next upload's sweep deletes them", async () => {
    const p = await server.newProject();
    const preview = await upload(p, "firstName,email\nEve,eve-at-example\n");
    await admin.get(preview);
    const started = await admin.post(`${preview}/start`);
    const done = await finished(started.location!);
    expect((await admin.get(`${started.location}/rejected.csv`)).status).toBe(200);
    const id = started.location!.split("/").pop();
    const db = await openSideDatabase(server.env);
    try {
      await db.run("UPDATE admin_imports SET updated_at = ? WHERE id = ?", new Date(Date.now() - 8 * 24 * 60 * 60_000).toISOString(), id);
    } finally {
      await db.close();
    }
    expect(summary(done, "Skipped")).toBe("1");
    await upload(p, "firstName\nNext\n");
    expect((await admin.get(`${started.location}/rejected.csv`)).status).toBe(404);
  });
});
