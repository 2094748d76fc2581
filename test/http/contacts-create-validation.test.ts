/**
 * POST /contacts: what a body must be (docs/api.md §2.1, §7): the identity fields, each
 * field's type, size and format, the bounds on both sides (the largest accepted value, the
 * first refused one), fields that are not writable or not known. A scenario table
 * (test/helpers/scenarios.ts), one test per row, against the service in-process. The rest of
 * creation (defaults, tags, custom fields, quota): contacts-create.test.ts.
 */
import { beforeAll, expect } from "bun:test";
import { ADDRESS_KEYS } from "../helpers/expect.ts";
import { inProcessService, scenarios, type Scenario } from "../helpers/scenarios.ts";

const svc = inProcessService();
/** The id of a text custom field of the project. */
let textField: string;

beforeAll(async () => {
  const { server, project } = svc();
  textField = (await server.cli(["custom-field", "create", "--project", project.id, "--title", "Field text Title", "--type", "text"])).id;
}, 60_000);

/** POST /contacts with `body`: 201 (and `expect`), or 422 ERR_FORM_VALIDATION naming `fieldName`. */
const accepted = (name: string, body: Scenario["body"], expect?: Scenario["expect"]): Scenario => ({ name, method: "POST", path: "/contacts", body, status: 201, expect });
const refused = (name: string, body: Scenario["body"], fieldName: string | (() => string)): Scenario => ({
  name,
  method: "POST",
  path: "/contacts",
  body,
  status: 422,
  error: { code: "ERR_FORM_VALIDATION", fieldName },
});

const x = (n: number, c = "x") => c.repeat(n);
const email254 = "a".repeat(64) + "@" + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(57) + ".com";
const email255 = "a".repeat(64) + "@" + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(58) + ".com";
const urlOf = (len: number) => {
  const prefix = "https://example.com/";
  return prefix + "p".repeat(len - prefix.length);
};
const tagsOf = (n: number) => Array.from({ length: n }, (_, i) => `bulk-${i}`);

scenarios("required fields", svc, [
  ...(
    [
      ["an empty body", {}],
      ["only notes", { notes: "x" }],
      ["only a website", { website: "https://a.example.com" }],
      ["only tags", { tags: ["lonely"] }],
      ["identity fields all null", { firstName: null, lastName: null, email: null, phone: null, businessName: null }],
    ] as const
  ).map(([what, body]) => refused(`a body without firstName, lastName, email, phone or businessName is 422 firstName (${what})`, body, "firstName")),
  ...(
    [
      ["firstName", { firstName: "A" }],
      ["lastName", { lastName: "B" }],
      ["email", { email: "only@example.com" }],
      ["phone", { phone: "+14155550111" }],
      ["businessName", { businessName: "Only Inc" }],
    ] as const
  ).map(([field, body]) => accepted(`${field} alone is enough to create a contact`, body)),
]);

scenarios("identityType and subscriptions", svc, [
  refused("identityType personal with a businessName is 422 identityType", { businessName: "Acme Ltd", identityType: "personal" }, "identityType"),
  refused("an identityType other than personal or business is 422 identityType", { firstName: "X", identityType: "robot" }, "identityType"),
  refused("a non-boolean subscribed is 422 naming it", { firstName: "Sub", subscribed: "yes" }, "subscribed"),
  refused("a non-boolean smsSubscribed is 422 naming it", { firstName: "Sub", smsSubscribed: "yes" }, "smsSubscribed"),
  refused("an unknown contactTypeId is 422 contactTypeId", { firstName: "X", contactTypeId: "ct_doesnotexist" }, "contactTypeId"),
]);

scenarios("bounds of contact fields", svc, [
  ...["firstName", "lastName", "businessName"].flatMap((field) => [
    accepted(`${field} of exactly 255 characters is accepted`, { email: "b@example.com", [field]: x(255) }, (res) => expect(res.json[field]).toBe(x(255))),
    refused(`${field} of 256 characters is 422 naming it`, { email: "b@example.com", [field]: x(256) }, field),
  ]),
  ...ADDRESS_KEYS.flatMap((part) => [
    accepted(`address.${part} of exactly 255 characters is accepted`, { firstName: "A", address: { [part]: x(255, "y") } }, (res) => expect(res.json.address[part]).toBe(x(255, "y"))),
    refused(`address.${part} of 256 characters is 422 address.<part>`, { firstName: "A", address: { [part]: x(256, "y") } }, `address.${part}`),
  ]),
  accepted("an email of exactly 254 characters is accepted", { email: email254 }, () => expect(email254.length).toBe(254)),
  refused("an email of 255 characters is 422 email", { email: email255 }, "email"),
  ...["not-an-email", "a@", "@example.com", "two@@example.com", "spa ce@example.com"].map((email) =>
    refused(`a syntactically invalid email (${email}) is 422 email`, { firstName: "E", email }, "email"),
  ),
  accepted("a phone of exactly 32 characters is accepted", { phone: x(32, "1") }),
  refused("a phone of 33 characters is 422 phone", { phone: x(33, "1") }, "phone"),
  accepted("a website of exactly 2048 characters is accepted", { firstName: "W", website: urlOf(2048) }, (res) => expect(res.json.website).toBe(urlOf(2048))),
  refused("a website of 2049 characters is 422 website", { firstName: "W", website: urlOf(2049) }, "website"),
  ...["http://example.com", "https://example.com/a?b=c"].map((website) => accepted(`an http(s) website (${website}) is accepted`, { firstName: "W", website })),
  ...["ftp://example.com", "example.com", "not a url", "javascript:alert(1)"].map((website) =>
    refused(`a website that is not an http(s) URL (${website}) is 422 website`, { firstName: "W", website }, "website"),
  ),
  accepted("notes of exactly 65,535 characters are accepted", { firstName: "N", notes: x(65_535, "n") }, (res) => expect(res.json.notes.length).toBe(65_535)),
  refused("notes of 65,536 characters are 422 notes", { firstName: "N", notes: x(65_536, "n") }, "notes"),
  accepted("a tag name of exactly 64 characters is accepted", { firstName: "T", tags: [x(64, "t")] }, (res) => expect(res.json.tags.map((t: any) => t.name)).toEqual([x(64, "t")])),
  refused("a tag name of 65 characters is 422 tags", { firstName: "T", tags: ["ok", x(65, "t")] }, "tags"),
  refused("an empty tag name is 422 tags", { firstName: "T", tags: ["ok", ""] }, "tags"),
  accepted("exactly 100 tags on a contact are accepted", { firstName: "T", tags: tagsOf(100) }, (res) => expect(res.json.tags.length).toBe(100)),
  refused("101 tags on a contact are 422 tags", { firstName: "T", tags: tagsOf(101) }, "tags"),
  accepted("a text custom value of exactly 10,000 characters is accepted", () => ({ firstName: "C", customFields: { [textField]: x(10_000, "v") } }), (res) =>
    expect(res.json.customFields[textField]).toBe(x(10_000, "v")),
  ),
  refused("a text custom value of 10,001 characters is 422 customFields.<id>", () => ({ firstName: "C", customFields: { [textField]: x(10_001, "v") } }), () => `customFields.${textField}`),
]);

scenarios("body validation", svc, [
  refused("an unknown body field is 422 with fieldName = that key", { firstName: "U", favouriteColour: "blue" }, "favouriteColour"),
  ...(
    [
      ["contactId", "CR-999999"],
      ["createdAt", "2020-01-01T00:00:00Z"],
      ["updatedAt", "2020-01-01T00:00:00Z"],
      ["duplicateSignal", { emailMatches: 0, phoneMatches: 0 }],
    ] as const
  ).map(([field, value]) => refused(`a field not writable on creation (${field}) is 422 naming it`, { firstName: "U", [field]: value }, field)),
  refused("an unknown address key is 422 address.<key>", { firstName: "U", address: { planet: "Mars" } }, "address.planet"),
  ...(
    [
      ["firstName", 5],
      ["lastName", true],
      ["email", 42],
      ["phone", 4155550100],
      ["notes", { a: 1 }],
      ["tags", "vip"],
      ["customFields", ["x"]],
      ["address", "1 Main St"],
      ["contactTypeId", 7],
    ] as const
  ).map(([field, value]) => {
    const body: Record<string, unknown> = { firstName: "Typed", [field]: value };
    if (field === "firstName") body.lastName = "L";
    return refused(`a wrongly typed ${field} is 422 naming it`, body, field);
  }),
]);
