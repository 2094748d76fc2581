/**
 * `crm import` of other CRMs' exports as they are (docs/import-export.md §1.2, §1.7–§1.9): HubSpot's,
 * Pipedrive's and Google Contacts' usual headers with no --map, the lifecycle column as the
 * contact type by name, second-choice phone and email columns, whole names, an `error` column
 * skipped, and blank rows skipped rather than rejected. Runs against the live database; the
 * contacts are read back over the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let dir: string;

beforeAll(async () => {
  srv = await startServer();
  dir = mkdtempSync(join(tmpdir(), "crm-import-crms-"));
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
function csv(text: string): string {
  const path = join(dir, `f${++files}.csv`);
  writeFileSync(path, text);
  return path;
}

async function runImport(projectId: string, path: string, ...extra: string[]) {
  const r = await srv.cliRaw(["import", path, "--project", projectId, ...extra]);
  if (r.exitCode !== 0) throw new Error(`import failed (${r.exitCode}): ${r.stdout}\n${r.stderr}`);
  return r;
}
const json = async (projectId: string, path: string, ...extra: string[]) => JSON.parse((await runImport(projectId, path, "--json", ...extra)).stdout.trim());

async function byEmail(p: ProjectInfo) {
  const { items } = await walk(p.api, "/contacts");
  return Object.fromEntries(items.map((c: any) => [c.email ?? c.firstName, c]));
}

const HUBSPOT_HEADER =
  "Record ID,First Name,Last Name,Email,Phone Number,Mobile Phone Number,Company Name,Website URL,Street Address,City,State/Region,Postal Code,Country/Region,Lifecycle Stage,Lead Status";

describe("HubSpot's contact export imports with no --map", () => {
  let p: ProjectInfo;
  let out: any;
  let types: Record<string, string>;

  beforeAll(async () => {
    p = await srv.newProject();
    const { json: list } = await p.api("GET", "/contact-types");
    types = Object.fromEntries(list.data.map((t: any) => [t.name.toLowerCase(), t.id]));
    const file = csv(
      `${HUBSPOT_HEADER}\n` +
        "101,Grace,Hopper,grace@example.com,+1 212 555 0100,+1 212 555 0199,Navy,https://navy.example.com,1 Main St,Arlington,VA,22201,United States,Customer,Open\n" +
        "102,Alan,Turing,alan@example.com,,+44 161 555 0100,,,,Manchester,,,United Kingdom,lead,New\n" +
        ",,,,,,,,,,,,,,\n" +
        "103,Ada,Lovelace,ada@example.com,,,,,,,,,,Evangelist,\n",
    );
    // Record ID has no field (docs/import-export.md §1.7): skipped as unknown.
    out = await json(p.id, file, "--ignore-unknown");
  });

  test("every column but Record ID has a field with no --map; Lead Status gives way to Lifecycle Stage", () => {
    expect(out.columns.map((c: any) => c.field)).toEqual([
      null, "firstName", "lastName", "email", "phone", "phone", "businessName", "website", "address.line1", "address.city", "address.state", "address.zip",
      "address.country", "contactType", null,
    ]);
    expect(out.skippedColumns).toEqual(["Record ID", "Lead Status"]);
  });

  test("the lifecycle stage names the contact type in any case; an unknown one rejects its row naming the column and value; the blank row is skipped", async () => {
    expect(out).toMatchObject({ rows: 4, created: 2, skippedCount: 1, blankRows: 1 });
    expect(out.skipped).toEqual([
      { row: 4, fieldName: "contactType", reason: expect.stringMatching(/^Lifecycle Stage "Evangelist" is not a contact type of the project \(its types: /) },
    ]);
    const c = await byEmail(p);
    expect(c["grace@example.com"]).toMatchObject({
      firstName: "Grace", phone: "+1 212 555 0100", businessName: "Navy", website: "https://navy.example.com",
      address: { line1: "1 Main St", city: "Arlington", state: "VA", zip: "22201", country: "United States" },
      contactType: { id: types.customer },
    });
    // No "Phone Number" in this row: the mobile phone fills the phone.
    expect(c["alan@example.com"]).toMatchObject({ phone: "+44 161 555 0100", contactType: { id: types.lead }, address: { city: "Manchester" } });
  });

  test("the text summary says how many blank rows were skipped", async () => {
    const own = await srv.newProject();
    const r = await runImport(own.id, csv("firstName,email\nAda,a@example.com\n , \n,\nBob,nope\n"));
    expect(r.stdout).toContain("4 rows, 1 contacts created in");
    expect(r.stdout).toContain("1 skipped, 2 blank rows skipped.");
  });
});

describe("Pipedrive's and Google Contacts' exports import with no --map", () => {
  test("Pipedrive: a whole name is split; work email and phone first, the others where they are empty; labels become tags", async () => {
    const p = await srv.newProject();
    const out = await json(
      p.id,
      csv(
        "Person - Name,Person - Email - Work,Person - Email - Home,Person - Phone - Work,Person - Phone - Mobile,Organization - Name,Person - Label,error\n" +
          "Ada King Lovelace,ada@work.example.com,ada@home.example.com,,+44 20 7946 0001,Analytical Engines,Hot lead,left over from a fix\n" +
          "Cher,,cher@home.example.com,+1 310 555 0100,,,,\n",
      ),
    );
    expect(out).toMatchObject({ rows: 2, created: 2, skippedCount: 0, skippedColumns: ["error"] });
    const c = await byEmail(p);
    expect(c["ada@work.example.com"]).toMatchObject({ firstName: "Ada", lastName: "King Lovelace", phone: "+44 20 7946 0001", businessName: "Analytical Engines" });
    expect(c["ada@work.example.com"].tags.map((t: any) => t.name)).toEqual(["Hot lead"]);
    expect(c["cher@home.example.com"]).toMatchObject({ firstName: "Cher", lastName: null, phone: "+1 310 555 0100" });
    expect(JSON.stringify(c)).not.toContain("left over");
  });

  test("Google Contacts: organization, website and address columns of the current form", async () => {
    const p = await srv.newProject();
    const out = await json(
      p.id,
      csv(
        "First Name,Last Name,Organization Name,E-mail 1 - Value,Phone 1 - Value,Website 1 - Value,Address 1 - Street,Address 1 - Extended Address,Address 1 - City,Address 1 - Region,Address 1 - Postal Code,Address 1 - Country,Labels\n" +
          "Alan,Turing,Bletchley,alan@example.com,+44 161 555 0100,https://alan.example.com,2 Hut Rd,Hut 8,Bletchley,Bucks,MK3 6EB,UK,* myContacts ::: Work\n",
      ),
    );
    expect(out).toMatchObject({ created: 1, skippedColumns: [] });
    expect((await byEmail(p))["alan@example.com"]).toMatchObject({
      businessName: "Bletchley", website: "https://alan.example.com",
      address: { line1: "2 Hut Rd", line2: "Hut 8", city: "Bletchley", state: "Bucks", zip: "MK3 6EB", country: "UK" },
    });
  });
});
