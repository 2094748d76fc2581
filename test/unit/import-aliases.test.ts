/**
 * Other CRMs' headers (docs/import-export.md §1.2): HubSpot's, Pipedrive's and Google Contacts'
 * usual headers with no --map, second-choice columns, lifecycle-like columns as the contact
 * type, whole names, the `error` column; blank rows; the rejected rows' CSV and the preview's
 * check of values (src/transfer/import-columns.ts, import-rows.ts, rejected-rows.ts, import-check.ts).
 */
import { describe, expect, test } from "bun:test";
import { fieldOf, mapHeader, planColumns } from "../../src/transfer/import-columns.ts";
import { buildRow, contactTypeNames, isBlankRecord } from "../../src/transfer/import-rows.ts";
import { CONTACT_TYPE_ALIASES, FALLBACK_ALIASES } from "../../src/transfer/csv-columns.ts";
import { parseCsv } from "../../src/transfer/csv.ts";
import { RejectedRows } from "../../src/transfer/rejected-rows.ts";
import { checkRows } from "../../src/transfer/import-check.ts";
import type { CustomField } from "../../src/reference/custom-fields.ts";

async function* chunks<T>(...parts: T[]) {
  yield* parts;
}

const FIELDS: CustomField[] = [{ id: "cf_plan", title: "Plan", type: "select", options: ["gold", "silver"] }];
const fieldsOf = (header: string[]) => planColumns(header, FIELDS).matches.map((m) => (m.column ? fieldOf(m.column) : `(${m.skipped ?? "unknown"})`));
const TYPES = contactTypeNames([
  { id: "ct_lead", name: "Lead" },
  { id: "ct_customer", name: "Customer" },
  { id: "ct_mql", name: "Marketing Qualified Lead" },
]);

const HUBSPOT = [
  "First Name", "Last Name", "Email", "Phone Number", "Mobile Phone Number", "Company Name", "Website URL", "Street Address",
  "City", "State/Region", "Postal Code", "Country/Region", "Lifecycle Stage", "Lead Status",
];

describe("the usual headers of HubSpot, Pipedrive and Google Contacts need no --map", () => {
  test("HubSpot's contact export", () => {
    expect(fieldsOf(HUBSPOT)).toEqual([
      "firstName", "lastName", "email", "phone", "phone", "businessName", "website", "address.line1",
      "address.city", "address.state", "address.zip", "address.country", "contactType", "(taken)",
    ]);
    const plan = mapHeader(HUBSPOT, FIELDS);
    expect(plan.matches[4]!.fallback).toBe(0);
    expect(plan.matches.filter((m) => m.lifecycle).map((m) => m.header)).toEqual(["Lifecycle Stage", "Lead Status"]);
  });

  test("Pipedrive's people export, with and without the Person - prefix", () => {
    expect(fieldsOf(["Person - Name", "Person - Email", "Person - Phone", "Organization - Name", "Person - Label", "Person - Note"])).toEqual([
      "fullName", "email", "phone", "businessName", "tags", "notes",
    ]);
    expect(fieldsOf(["Name", "First name", "Last name", "Email - Work", "Email - Home", "Phone - Work", "Phone - Mobile", "Organization", "Label"])).toEqual([
      "(taken)", "firstName", "lastName", "email", "email", "phone", "phone", "businessName", "tags",
    ]);
  });

  test("Google Contacts' CSV, current and older forms", () => {
    expect(
      fieldsOf([
        "First Name", "Last Name", "Organization Name", "E-mail 1 - Value", "Phone 1 - Value", "Labels", "Notes", "Website 1 - Value",
        "Address 1 - Street", "Address 1 - Extended Address", "Address 1 - City", "Address 1 - Region", "Address 1 - Postal Code", "Address 1 - Country",
      ]),
    ).toEqual([
      "firstName", "lastName", "businessName", "email", "phone", "tags", "notes", "website",
      "address.line1", "address.line2", "address.city", "address.state", "address.zip", "address.country",
    ]);
    expect(fieldsOf(["Given Name", "Family Name", "Organization 1 - Name", "Group Membership"])).toEqual(["firstName", "lastName", "businessName", "tags"]);
  });

  test("every second-choice and lifecycle-like header is matched ignoring case and punctuation", () => {
    for (const [field, aliases] of Object.entries(FALLBACK_ALIASES)) for (const a of aliases) expect(fieldsOf([a.toUpperCase().replaceAll(" ", "_")])).toEqual([field]);
    for (const a of CONTACT_TYPE_ALIASES) expect(fieldsOf([a.toUpperCase()])).toEqual(["contactType"]);
  });
});

describe("columns sharing a field", () => {
  test("a second-choice column fills the field only where the first one's cell is empty, whatever their order", () => {
    const plan = mapHeader(["Mobile Phone Number", "firstName", "Phone Number"], FIELDS);
    expect(buildRow(plan.matches, ["+44 20 7946 0001", "Ada", "+44 20 7946 0002"])).toMatchObject({ ok: true, input: { phone: "+44 20 7946 0002" } });
    expect(buildRow(plan.matches, ["+44 20 7946 0001", "Ada", " "])).toMatchObject({ ok: true, input: { phone: "+44 20 7946 0001" } });
  });

  test("of second-choice columns alone, the one listed first in the aliases fills first", () => {
    const plan = mapHeader(["Phone - Home", "Phone - Mobile", "firstName"], FIELDS);
    // "Phone - Mobile" is listed before "Phone - Home" (docs/import-export.md §1.2): the home phone is its fallback.
    expect(plan.matches.map((m) => m.fallback)).toEqual([0, undefined, undefined]);
    expect(buildRow(plan.matches, ["1", "2", "Ada"])).toMatchObject({ input: { phone: "2" } });
  });

  test("two columns matched as firsts still are a repeat, named both", () => {
    expect(() => mapHeader(["Email", "E-mail Address"], FIELDS)).toThrow('columns "Email" and "E-mail Address" both set email');
  });

  test("a contactType column takes the contact type; lifecycle-like columns are then skipped", () => {
    expect(fieldsOf(["contactType", "Lifecycle Stage", "Type"])).toEqual(["contactType", "(taken)", "(taken)"]);
    expect(fieldsOf(["Stage", "Contact Type"])).toEqual(["(taken)", "contactType"]);
  });

  test("a --map onto the contact type wins over the lifecycle-like header", () => {
    expect(planColumns(["Lifecycle Stage", "Lead Status"], FIELDS, { map: [{ header: "Lead Status", field: "contactType" }] }).matches.map((m) => m.skipped ?? fieldOf(m.column!))).toEqual(["taken", "contactType"]);
  });

  test("a whole name splits at the first space, unless a first or last name column exists", () => {
    const plan = mapHeader(["Person - Name", "email"], FIELDS);
    expect(buildRow(plan.matches, ["Ada King Lovelace", ""])).toEqual({ ok: true, input: { firstName: "Ada", lastName: "King Lovelace" } });
    expect(buildRow(plan.matches, ["Madonna", ""])).toEqual({ ok: true, input: { firstName: "Madonna" } });
    expect(fieldsOf(["Name", "Last name"])).toEqual(["(taken)", "lastName"]);
  });

  test("an error column is always skipped, as the rejected rows' reason", () => {
    expect(planColumns(["email", "error"], FIELDS).matches[1]).toMatchObject({ column: null, skipped: "error" });
  });
});

describe("lifecycle values name contact types", () => {
  const columns = mapHeader(["firstName", "Lifecycle Stage"], FIELDS).matches;

  test("by name, in any case, spaces and punctuation aside", () => {
    expect(buildRow(columns, ["Ada", "customer"], TYPES)).toMatchObject({ ok: true, input: { contactTypeId: "ct_customer" } });
    expect(buildRow(columns, ["Ada", "marketingqualifiedlead"], TYPES)).toMatchObject({ ok: true, input: { contactTypeId: "ct_mql" } });
  });

  test("an unknown value rejects the row naming the column and the value", () => {
    expect(buildRow(columns, ["Ada", "Evangelist"], TYPES)).toEqual({
      ok: false,
      fieldName: "contactType",
      reason: 'Lifecycle Stage "Evangelist" is not a contact type of the project (its types: Lead, Customer, Marketing Qualified Lead).',
    });
  });
});

describe("blank rows, the rejected rows' CSV and the check of values", () => {
  test("a row of empty or blank cells is blank; a row with one value is not", () => {
    expect(isBlankRecord(["", " ", "\t"])).toBe(true);
    expect(isBlankRecord([""])).toBe(true);
    expect(isBlankRecord(["", "x"])).toBe(false);
  });

  test("the rejected rows' CSV holds the header, the rows' cells in row order and an error column, formulas guarded, and reads back", async () => {
    const rejected = new RejectedRows(2);
    rejected.header(["firstName", "email"]);
    rejected.add(7, ["Bob", "=1+1"], "email must be a valid email address.");
    rejected.add(3, ["Ann", "'=x"], "email must be a valid email address.");
    rejected.add(9, ["Cy", "c@"], "kept out: past the bound");
    expect(rejected.count).toBe(3);
    const csv = rejected.csv()!;
    expect(csv).toBe("firstName,email,error\r\nAnn,'=x,email must be a valid email address.\r\nBob,'=1+1,email must be a valid email address.\r\n");
    const records: string[][] = [];
    for await (const r of parseCsv(chunks(csv))) records.push(r);
    const plan = mapHeader(records[0]!, FIELDS);
    expect(plan.matches.map((m) => m.skipped ?? null)).toEqual([null, null, "error"]);
    // Read back, each cell is what the first import read: `'=x` and `=1+1` alike become `=…`.
    expect(buildRow(plan.matches, records[1]!)).toMatchObject({ ok: false, fieldName: "email" });
    expect(new RejectedRows().csv()).toBeNull();
  });

  test("the check counts rows that would fail by reason with their first rows, blank rows apart, the quota included", async () => {
    const csv =
      "First Name,Email,Lifecycle Stage,Plan\n" +
      "Ada,ada@example.com,Lead,gold\n" +
      "Bob,not-an-email,,\n" +
      ",,,\n" +
      "Cy,cy@example.com,Evangelist,\n" +
      "Dee,dee@example.com,,platinum\n" +
      "Eve,eve-at-example,,\n" +
      "Fay,fay@example.com,customer,\n" +
      "Gus,gus@example.com,,\n";
    const plan = mapHeader(["First Name", "Email", "Lifecycle Stage", "Plan"], FIELDS);
    const report = await checkRows(chunks(new TextEncoder().encode(csv)), plan, { fields: FIELDS, types: TYPES, typeIds: new Set(["ct_lead", "ct_customer", "ct_mql"]), quotaLeft: 2 });
    expect(report).toMatchObject({ rows: 8, blankRows: 1, passing: 2, failing: 5, otherReasons: 0, failure: null });
    expect(report.reasons.map((g) => [g.fieldName, g.count, g.rows])).toEqual([
      ["email", 2, [2, 6]],
      ["contactType", 1, [4]],
      ["customFields.cf_plan", 1, [5]],
      [undefined, 1, [8]],
    ]);
    expect(report.reasons[3]!.reason).toBe("contact quota exhausted");
  });
});
