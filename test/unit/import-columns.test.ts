/**
 * Header matching of `crm import` and the console's import (docs/import-export.md §1):
 * src/transfer/import-columns.ts and the row builder's contact type by name (src/transfer/import-rows.ts).
 */
import { describe, expect, test } from "bun:test";
import { closestField, ColumnPlanError, editDistance, fieldOf, mapHeader, parseMapOption, planColumns } from "../../src/transfer/import-columns.ts";
import { buildRow, contactTypeNames } from "../../src/transfer/import-rows.ts";
import { customFieldHeader, EXPORT_COLUMNS, FIELD_ALIASES } from "../../src/transfer/csv-columns.ts";
import type { CustomField } from "../../src/reference/custom-fields.ts";

const FIELDS: CustomField[] = [
  { id: "cf_score", title: "Lead Score", type: "number", options: null },
  { id: "cf_city", title: "City", type: "text", options: null },
  { id: "cf_plan", title: "Plan", type: "select", options: ["gold", "silver"] },
];

/** The field each header fills (null: skipped or unknown). */
const fieldsOf = (header: string[], choices = {}) => planColumns(header, FIELDS, choices).matches.map((m) => (m.column ? fieldOf(m.column) : null));

/** The ColumnPlanError's message mapHeader throws. */
function refusal(header: string[], choices = {}): string {
  try {
    mapHeader(header, FIELDS, choices);
  } catch (error) {
    expect(error).toBeInstanceOf(ColumnPlanError);
    return (error as Error).message;
  }
  throw new Error("mapHeader did not refuse");
}

describe("headers are matched ignoring case, spaces, _, - and .", () => {
  test("field names in any case and punctuation", () => {
    expect(fieldsOf(["FIRSTNAME", "last_name", "E-Mail", "address.City", "Address Zip", "sms-subscribed", "contact type", "Tags"])).toEqual([
      "firstName", "lastName", "email", "address.city", "address.zip", "smsSubscribed", "contactType", "tags",
    ]);
  });

  test("every alias of docs/import-export.md §1 reaches its field, written oddly", () => {
    for (const [field, aliases] of Object.entries(FIELD_ALIASES)) {
      for (const alias of aliases) {
        const odd = `  ${alias.toUpperCase().replace(/ /g, "_")}.`;
        const expected = field === "address.city" && alias === "city" ? "customFields.cf_city" : field;
        expect([alias, fieldsOf([odd])[0]]).toEqual([alias, expected]);
      }
    }
  });

  test("custom fields by id, by title case-insensitively, by normalized title, and by customFields.<id or title>", () => {
    expect(fieldsOf(["cf_score", "lead score", "customFields.PLAN"])).toEqual(["customFields.cf_score", "customFields.cf_score", "customFields.cf_plan"]);
    expect(fieldsOf(["LEAD-SCORE"])).toEqual(["customFields.cf_score"]);
    expect(fieldsOf(["customFields.cf_city"])).toEqual(["customFields.cf_city"]);
  });

  test("a contact field name wins over a custom field's title; a custom field's title over an alias", () => {
    const fields: CustomField[] = [{ id: "cf_e", title: "Email", type: "text", options: null }, ...FIELDS];
    expect(planColumns(["email"], fields).matches[0]!.column).toEqual({ kind: "text", name: "email" });
    expect(fieldsOf(["City", "address.city"])).toEqual(["customFields.cf_city", "address.city"]);
  });

  test("contactId, createdAt and updatedAt are recognised and skipped as set by the service", () => {
    const plan = planColumns(["contact_id", "Created At", "updatedAt", "email"], FIELDS);
    expect(plan.matches.map((m) => m.skipped ?? null)).toEqual(["readOnly", "readOnly", "readOnly", null]);
    expect(plan.unknown).toEqual([]);
  });

  test("an export's header maps every column back (custom fields written by customFieldHeader)", () => {
    const header = [...EXPORT_COLUMNS, ...FIELDS.map((f) => customFieldHeader(f.title))];
    const plan = mapHeader(header, FIELDS);
    expect(plan.matches.filter((m) => m.skipped).map((m) => m.header)).toEqual(["contactId", "createdAt", "updatedAt"]);
    expect(plan.matches.find((m) => m.header === "customFields.City")!.column).toMatchObject({ kind: "custom", field: { id: "cf_city" } });
    expect(plan.matches.find((m) => m.header === "address.city")!.column).toEqual({ kind: "address", key: "city" });
  });
});

describe("unknown columns", () => {
  test("the closest field is the smallest edit distance, reported by its own name or title", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(closestField("Last Nme", FIELDS)).toBe("lastName");
    expect(closestField("Compnay", FIELDS)).toBe("businessName");
    expect(closestField("Leed Score", FIELDS)).toBe("Lead Score");
  });

  test("are refused all in one message naming each with its closest field and the ways out", () => {
    const message = refusal(["firstName", "Lead Source", "Last Nme"]);
    expect(message).toContain('unknown columns "Lead Source" (closest field: Lead Score), "Last Nme" (closest field: lastName)');
    expect(message).toContain('--map "Lead Source=field,Last Nme=field"');
    expect(message).toContain("--ignore-unknown");
  });

  test("a column without a name is named by its position", () => {
    expect(refusal(["email", ""])).toContain("unknown column column 2 (no name)");
  });

  test("--ignore-unknown skips them instead", () => {
    const plan = mapHeader(["email", "Lead Source"], FIELDS, { ignoreUnknown: true });
    expect(plan.matches[1]).toMatchObject({ column: null, skipped: "unknown" });
  });

  test("a repeated field is refused naming both columns", () => {
    expect(refusal(["Email", "E-mail Address"])).toBe('columns "Email" and "E-mail Address" both set email.');
    expect(refusal(["contactType", "contactTypeId"])).toContain('columns "contactType" and "contactTypeId" both set the contact type');
    expect(refusal(["Plan", "customFields.cf_plan"])).toContain('both set the custom field "Plan"');
  });
});

describe("--map", () => {
  test("parses Header=field entries; the header is what is before the last =", () => {
    expect(parseMapOption('Lead Source=notes, a=b=c ,Skip me=,')).toEqual([
      { header: "Lead Source", field: "notes" },
      { header: "a=b", field: "c" },
      { header: "Skip me", field: "" },
    ]);
    expect(() => parseMapOption("nothing")).toThrow(/--map entry "nothing" is not Header=field/);
    expect(parseMapOption(undefined)).toEqual([]);
  });

  test("names a column's field (a custom field too), matching the header as written or normalized; an empty field skips it", () => {
    const map = parseMapOption("lead status=Lead Score,Mobile Phone Number=phone,FAX=,Org=customFields.cf_plan");
    const plan = mapHeader(["Lead_Status", "Mobile Phone Number", "Fax", "Org"], FIELDS, { map });
    expect(plan.matches.map((m) => (m.column ? fieldOf(m.column) : m.skipped))).toEqual(["customFields.cf_score", "phone", "chosen", "customFields.cf_plan"]);
  });

  test("overrides the header's own match", () => {
    expect(fieldsOf(["Email"], { map: [{ header: "email", field: "notes" }] })).toEqual(["notes"]);
  });

  test("an unknown field, a header not in the file, or a read-only field is refused naming it", () => {
    expect(refusal(["email", "X"], { map: [{ header: "X", field: "colour" }] })).toContain('--map "X=colour": no field "colour" (closest field:');
    expect(refusal(["email"], { map: [{ header: "Y", field: "notes" }] })).toContain('--map names "Y", which is not a column of the file');
    expect(refusal(["email", "X"], { map: [{ header: "X", field: "createdAt" }] })).toContain("createdAt is set by the service");
  });

  test("a column mapped onto a field another column fills is a repeat", () => {
    expect(refusal(["email", "Work Email"], { map: [{ header: "Work Email", field: "email" }] })).toContain('columns "email" and "Work Email" both set email');
  });
});

describe("the console's choices", () => {
  test("a chosen field or skip per column index, over the header's match", () => {
    const plan = planColumns(["Lead Source", "Other", "email"], FIELDS, { chosen: new Map([[0, "notes"], [1, ""]]) });
    expect(plan.unknown).toEqual([]);
    expect(plan.matches.map((m) => (m.column ? fieldOf(m.column) : m.skipped))).toEqual(["notes", "chosen", "email"]);
  });

  test("without a choice an unknown column stays unknown, with its closest field", () => {
    const plan = planColumns(["Lead Source", "email"], FIELDS);
    expect(plan.unknown).toEqual([0]);
    expect(plan.matches[0]).toMatchObject({ column: null, closest: "Lead Score" });
  });
});

describe("contactType by name", () => {
  const types = contactTypeNames([
    { id: "ct_lead", name: "Lead" },
    { id: "ct_vip", name: "VIP" },
    { id: "ct_vip2", name: "vip" },
    { id: "ct_lead2", name: "Lead" },
  ]);
  const columns = mapHeader(["firstName", "contactType"], FIELDS).matches;

  test("a name in any case becomes the type's id; an exact name wins over one equal ignoring case; of equal names the first given", () => {
    expect(buildRow(columns, ["Ada", "lead"], types)).toMatchObject({ ok: true, input: { contactTypeId: "ct_lead" } });
    expect(buildRow(columns, ["Ada", "Lead"], types)).toMatchObject({ ok: true, input: { contactTypeId: "ct_lead" } });
    expect(buildRow(columns, ["Ada", "vip"], types)).toMatchObject({ ok: true, input: { contactTypeId: "ct_vip2" } });
    expect(buildRow(columns, ["Ada", "Vip"], types)).toMatchObject({ ok: true, input: { contactTypeId: "ct_vip" } });
    expect(buildRow(columns, ["Ada", ""], types)).toEqual({ ok: true, input: { firstName: "Ada" } });
  });

  test("an unknown name refuses the row on contactType, saying which names exist", () => {
    expect(buildRow(columns, ["Ada", "Partner"], types)).toEqual({
      ok: false,
      fieldName: "contactType",
      reason: 'contactType "Partner" is not a contact type of the project (its types: Lead, VIP, vip).',
    });
  });

  test("skipped columns are not read", () => {
    const plan = mapHeader(["contactId", "firstName", "Lead Source"], FIELDS, { ignoreUnknown: true });
    expect(buildRow(plan.matches, ["CR-9", "Ada", "hot"])).toEqual({ ok: true, input: { firstName: "Ada" } });
  });
});
