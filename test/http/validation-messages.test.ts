/**
 * Validation messages (docs/api.md §4.3, §4), black box: every 422
 * ERR_FORM_VALIDATION names the field in `fieldName` and says, in a message that names the
 * field once, what is wrong with the value: a wrong type ("firstName must be a string."), a
 * missing field ("url is required."), a value outside an enum ("identityType must be one of
 * personal, business."), a size or range, a format, an unknown field. Never zod's own text.
 * Bodies and queries of every route, through the real service started in-process (SQLite, or
 * PostgreSQL under CRM_TEST_BACKEND=postgres); the cases are scenario tables
 * (test/helpers/scenarios.ts), one test per row. The wording's convention: src/http/validation.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { inProcessService, scenarios, type Scenario } from "../helpers/scenarios.ts";
import type { ApiResponse } from "../helpers/server.ts";

const svc = inProcessService();
let contactId: string;
let webhookId: string;
let seats: string;
let size: string;
let formId: string;

/** A public address literal: a production server accepts it without a DNS lookup. */
const HOOK_URL = "https://93.184.216.34/crm-hook";
const ISO_MESSAGE = "must be an ISO 8601 timestamp, such as 2024-05-01T10:00:00Z or 2024-05-01.";
const LIMIT_MESSAGE = "limit must be an integer from 1 to 200.";
const EVENTS = "contact.created, contact.updated, contact.deleted, contact.restored, contact.erased, contact.merged, interaction_log.created, web_form.submitted, *";

beforeAll(async () => {
  const { api, server, project } = svc();
  const c = await api("POST", "/contacts", { body: { firstName: "Val" } });
  expectStatus(c, 201);
  contactId = c.json.contactId;
  const w = await api("POST", "/webhooks", { body: { url: HOOK_URL, events: ["*"] } });
  expectStatus(w, 201);
  webhookId = w.json.id;
  const field = (title: string, type: string, options?: string) =>
    server.cli(["custom-field", "create", "--project", project.id, "--title", title, "--type", type, ...(options ? ["--options", options] : [])]);
  seats = (await field("Seats", "number")).id;
  size = (await field("Size", "select", "S,M,L")).id;
  formId = (await server.cli(["form", "create", "--project", project.id, "--name", "Val", "--fields", `email,firstName,address.city,${size}`])).id;
}, 60_000);

/** Zod's own phrases (its English locale): none may reach a client. */
const ZOD_PHRASES = [
  /invalid input/i,
  /expected \w+, received/i,
  /received (undefined|number|string|boolean|object|array|null|nan)/i,
  /too big/i,
  /too small/i,
  /invalid option/i,
  /invalid (string|key|value|element|discriminator|email|url|uuid|number)\b/i,
  /unrecognized key/i,
];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/**
 * How often the field's name stands in the message as a name of its own (not inside a longer
 * one). "email must be a valid email address." names the field once: the second word is the
 * kind of value (docs/api.md §16 and the issue's own example), so "email address" is not counted.
 */
const occurrences = (message: string, name: string) =>
  message.split(new RegExp(`(?<![\\w.])${escapeRe(name)}(?![\\w])(?! address)`)).length - 1;

/** What is wrong with a validation message, if anything: zod's text, or the field named other than once. */
function faultsOf(res: ApiResponse): string[] {
  const { message, fieldName } = res.json ?? {};
  const faults = ZOD_PHRASES.filter((p) => p.test(message)).map((p) => `zod's text ${p}`);
  const n = typeof fieldName === "string" ? occurrences(message, fieldName) : -1;
  if (n !== 1) faults.push(`fieldName ${fieldName} named ${n} times`);
  return faults;
}

/** 422 ERR_FORM_VALIDATION with exactly this fieldName and message. */
function expectMessage(res: ApiResponse, fieldName: string, message: string) {
  expectError(res, "ERR_FORM_VALIDATION", fieldName);
  expect(res.json.message).toBe(message);
  expect(faultsOf(res)).toEqual([]);
}

type Case = [kind: string, body: unknown, fieldName: string, message: string];

/** `{"a":1}`, cut to 80 characters: a row's name stays readable when its value is long. */
const shown = (v: unknown) => {
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
};

/** A row: the request is 422 with exactly this fieldName and message, neither zod's text nor the field named twice. */
function messageRow(method: string, path: () => string, request: { body?: unknown; query?: Record<string, string | string[]>; key?: null }, kind: string, fieldName: string | (() => string), message: string | (() => string)): Scenario {
  const given = request.body !== undefined ? request.body : request.query;
  const name = typeof fieldName === "string" && typeof message === "string" ? `${kind}: ${shown(given)} is 422 ${fieldName} "${message}"` : kind;
  return {
    name,
    method,
    path,
    ...request,
    status: 422,
    expect: (res) => expectMessage(res, typeof fieldName === "string" ? fieldName : fieldName(), typeof message === "string" ? message : message()),
  };
}

/** One test per case: `<kind>: <body> is 422 <fieldName> "<message>"`. */
function bodyCases(title: string, method: string, path: () => string, cases: Case[]) {
  scenarios(title, svc, cases.map(([kind, body, fieldName, message]) => messageRow(method, path, { body }, kind, fieldName, message)));
}

type QueryCase = [kind: string, query: Record<string, string | string[]>, fieldName: string, message: string];

function queryCases(title: string, path: () => string, cases: QueryCase[]) {
  scenarios(title, svc, cases.map(([kind, query, fieldName, message]) => messageRow("GET", path, { query }, kind, fieldName, message)));
}

const long = (n: number) => "x".repeat(n);

describe("POST /contacts: body messages", () => {
  bodyCases("built-in fields", "POST", () => "/contacts", [
    ["wrong type (string)", { firstName: 5 }, "firstName", "firstName must be a string."],
    ["wrong type (boolean)", { firstName: "A", subscribed: "yes" }, "subscribed", "subscribed must be true or false."],
    ["wrong type (object)", { firstName: "A", address: "London" }, "address", "address must be an object."],
    ["wrong type (array)", { firstName: "A", tags: "vip" }, "tags", "tags must be an array."],
    ["wrong type (record)", { firstName: "A", customFields: ["x"] }, "customFields", "customFields must be an object."],
    ["wrong type (nested)", { firstName: "A", address: { city: 5 } }, "address.city", "address.city must be a string."],
    ["wrong type (array item)", { firstName: "A", tags: [5] }, "tags", "each item of tags must be a string."],
    ["wrong type (body)", [], "body", "body must be an object."],
    ["missing (none of the identity fields)", { notes: "n" }, "firstName", "At least one of firstName, lastName, email, phone or businessName is required."],
    ["enum", { firstName: "A", identityType: "robot" }, "identityType", "identityType must be one of personal, business."],
    ["range (string max)", { firstName: long(256) }, "firstName", "firstName must be at most 255 characters."],
    ["range (phone max)", { phone: `+1 ${"5".repeat(30)}` }, "phone", "phone must be at most 32 characters."],
    ["range (nested string max)", { firstName: "A", address: { city: long(256) } }, "address.city", "address.city must be at most 255 characters."],
    ["range (array max)", { firstName: "A", tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, "tags", "tags must have at most 100 items."],
    ["range (array item min)", { firstName: "A", tags: ["ok", ""] }, "tags", "each item of tags must be 1–64 characters."],
    ["range (array item max)", { firstName: "A", tags: [long(65)] }, "tags", "each item of tags must be 1–64 characters."],
    ["format (email)", { email: "nope" }, "email", "email must be a valid email address."],
    ["format (url)", { firstName: "A", website: "ftp://example.com" }, "website", "website must be an http(s) URL."],
    ["unknown field", { firstName: "A", role: "admin" }, "role", "Unknown field role."],
    ["unknown field (nested)", { firstName: "A", address: { planet: "Mars" } }, "address.planet", "Unknown field address.planet."],
  ]);

  scenarios("custom fields", svc, [
    messageRow("POST", () => "/contacts", { body: () => ({ firstName: "A", customFields: { [seats]: "many" } }) }, "custom field, wrong type: 422 customFields.<id> naming the field and its title", () => `customFields.${seats}`, () => `customFields.${seats} (Seats) must be a number.`),
    messageRow("POST", () => "/contacts", { body: { firstName: "A", customFields: { Size: "XL" } } }, "custom field, enum: a value outside the options lists them", () => `customFields.${size}`, () => `customFields.${size} (Size) must be one of S, M, L.`),
    messageRow("POST", () => "/contacts", { body: { firstName: "A", customFields: { Shoe: 42 } } }, "custom field, unknown: 422 customFields.<key>", () => "customFields.Shoe", () => "customFields.Shoe is not a custom field of this project (by id or title)."),
  ]);
});

describe("PATCH /contacts/{contactId}: body messages", () => {
  bodyCases("fields", "PATCH", () => `/contacts/${contactId}`, [
    ["wrong type", { lastName: 5 }, "lastName", "lastName must be a string."],
    ["wrong type (boolean)", { smsSubscribed: "no" }, "smsSubscribed", "smsSubscribed must be true or false."],
    ["enum", { identityType: "company" }, "identityType", "identityType must be one of personal, business."],
    ["range (string max)", { notes: long(65_536) }, "notes", "notes must be at most 65535 characters."],
    ["format (email)", { email: "ada@" }, "email", "email must be a valid email address."],
    ["format (contactId)", { contactId: "X-1" }, "contactId", "contactId must be CR- followed by digits, such as CR-1001."],
    ["range (contactId)", { contactId: "CR-1000000000000" }, "contactId", "contactId must be CR-<n> with n at most 999999999999."],
    ["rule (identityType)", { identityType: "personal", businessName: "Acme" }, "identityType", "identityType cannot be personal for a contact with a businessName."],
    ["unknown field", { createdAt: "2024-01-01" }, "createdAt", "Unknown field createdAt."],
  ]);
});

describe("POST /contacts/{contactId}/interactions: body messages", () => {
  const fields51 = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
  bodyCases("fields", "POST", () => `/contacts/${contactId}/interactions`, [
    ["wrong type", { type: "note", note: 5 }, "note", "note must be a string."],
    ["wrong type (record value)", { type: "note", fields: { bad: 5 } }, "fields.bad", "fields.bad must be a string."],
    ["wrong type (record)", { type: "note", fields: ["a"] }, "fields", "fields must be an object."],
    ["missing", { note: "n" }, "interactionTypeId", 'interactionTypeId or type "note" is required, but not both.'],
    ["enum", { type: "call" }, "type", 'type must be "note".'],
    ["range (string min)", { type: "note", uniqueIdentifier: "" }, "uniqueIdentifier", "uniqueIdentifier must not be empty."],
    ["range (string max)", { type: "note", uniqueIdentifier: long(256) }, "uniqueIdentifier", "uniqueIdentifier must be at most 255 characters."],
    ["range (record value max)", { type: "note", fields: { long: long(2001) } }, "fields.long", "fields.long must be at most 2000 characters."],
    ["range (record key max)", { type: "note", fields: { [long(65)]: "v" } }, `fields.${long(65)}`, `fields.${long(65)} must have a name of 1–64 characters.`],
    ["range (record size)", { type: "note", fields: fields51 }, "fields", "fields must have at most 50 entries."],
    ["format (ISO time)", { type: "note", date: "yesterday" }, "date", `date ${ISO_MESSAGE}`],
    ["unknown field", { type: "note", colour: "red" }, "colour", "Unknown field colour."],
  ]);
});

describe("POST /webhooks: body messages", () => {
  bodyCases("fields", "POST", () => "/webhooks", [
    ["missing", { events: ["*"] }, "url", "url is required."],
    ["missing (array)", { url: HOOK_URL }, "events", "events is required."],
    ["wrong type", { url: 5, events: ["*"] }, "url", "url must be a string."],
    ["wrong type (null)", { url: null, events: ["*"] }, "url", "url must be a string."],
    ["wrong type (array)", { url: HOOK_URL, events: "*" }, "events", "events must be an array."],
    ["enum (array item)", { url: HOOK_URL, events: ["contact.archived"] }, "events", `each item of events must be one of ${EVENTS}.`],
    ["range (array min)", { url: HOOK_URL, events: [] }, "events", 'events must have at least 1 item; ["*"] means every event.'],
    ["range (string max)", { url: `https://example.com/${long(2040)}`, events: ["*"] }, "url", "url must be at most 2048 characters."],
    ["rule (events)", { url: HOOK_URL, events: ["*", "contact.created"] }, "events", 'events must not mix "*" with other values.'],
    ["format (url: HTTPS)", { url: "http://93.184.216.34/hook", events: ["*"] }, "url", "url must use https."],
    ["format (url)", { url: "not a url", events: ["*"] }, "url", "url is not a valid URL."],
    ["unknown field", { url: HOOK_URL, events: ["*"], secret: "mine" }, "secret", "Unknown field secret."],
  ]);
});

describe("PATCH /webhooks/{id} and POST /webhooks/{id}/redeliver: body messages", () => {
  bodyCases("PATCH", "PATCH", () => `/webhooks/${webhookId}`, [
    ["enum", { status: "paused" }, "status", "status must be one of active, disabled."],
    ["wrong type", { description: 5 }, "description", "description must be a string."],
    ["range (string max)", { description: long(1001) }, "description", "description must be at most 1000 characters."],
    ["enum (array item)", { events: ["contact.created", 7] }, "events", `each item of events must be one of ${EVENTS}.`],
    ["unknown field", { enabled: true }, "enabled", "Unknown field enabled."],
  ]);
  bodyCases("redeliver", "POST", () => `/webhooks/${webhookId}/redeliver`, [
    ["missing", {}, "eventIds", "eventIds or since is required, but not both."],
    ["range (array min)", { eventIds: [] }, "eventIds", "eventIds must have at least 1 item."],
    ["format (ISO time)", { since: "yesterday" }, "since", `since ${ISO_MESSAGE}`],
    ["rule (until)", { eventIds: ["evt_x"], until: "2024-01-01" }, "until", "until requires since."],
  ]);
});

describe("GET /contacts: query messages", () => {
  queryCases("parameters", () => "/contacts", [
    ["wrong type (limit)", { limit: "abc" }, "limit", LIMIT_MESSAGE],
    ["wrong type (limit not an integer)", { limit: "1.5" }, "limit", LIMIT_MESSAGE],
    ["range (limit min)", { limit: "0" }, "limit", LIMIT_MESSAGE],
    ["range (limit max)", { limit: "500" }, "limit", LIMIT_MESSAGE],
    ["repeated (limit)", { limit: ["10", "20"] }, "limit", "limit must be given once."],
    ["repeated (email)", { email: ["a@example.com", "b@example.com"] }, "email", "email must be given once."],
    ["enum (contactTypeCategory)", { contactTypeCategory: "Boss" }, "contactTypeCategory", "contactTypeCategory must be one of Lead, Customer, Personnel, Other."],
    ["format (ISO time)", { updatedSince: "yesterday" }, "updatedSince", `updatedSince ${ISO_MESSAGE}`],
    ["range (search min)", { search: "" }, "search", "search must not be empty."],
    ["range (search max)", { search: long(256) }, "search", "search must be at most 255 characters."],
    ["range (tag count)", { tag: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "tag", "tag must be given at most 20 times."],
    ["range (cursor min)", { cursor: "" }, "cursor", "cursor must not be empty."],
  ]);
});

describe("GET /contacts/{contactId}/interactions: query messages", () => {
  queryCases("parameters", () => `/contacts/${contactId}/interactions`, [
    ["format (since)", { since: "yesterday" }, "since", `since ${ISO_MESSAGE}`],
    ["format (until)", { until: "2024-02-30" }, "until", `until ${ISO_MESSAGE}`],
    ["range (limit max)", { limit: "201" }, "limit", LIMIT_MESSAGE],
    ["repeated (since)", { since: ["2024-01-01", "2024-02-01"] }, "since", "since must be given once."],
  ]);
});

describe("GET /events, /webhooks and reference data: query messages", () => {
  queryCases("/events", () => "/events", [
    ["format (since)", { since: "yesterday" }, "since", `since ${ISO_MESSAGE}`],
    ["range (limit max)", { limit: "201" }, "limit", LIMIT_MESSAGE],
    ["wrong type (limit)", { limit: "ten" }, "limit", LIMIT_MESSAGE],
  ]);
  scenarios("other lists", svc, ([
    ["/webhooks", { limit: "0" }, "limit", LIMIT_MESSAGE],
    ["/webhooks/:id/attempts", { limit: "abc" }, "limit", LIMIT_MESSAGE],
    ["/tags", { limit: "500" }, "limit", LIMIT_MESSAGE],
    ["/contact-types", { limit: "0" }, "limit", LIMIT_MESSAGE],
    ["/interaction-types", { limit: "-1" }, "limit", LIMIT_MESSAGE],
    ["/custom-fields", { cursor: "" }, "cursor", "cursor must not be empty."],
  ] as Array<[string, Record<string, string>, string, string]>).map(([path, query, fieldName, message]) => ({
    ...messageRow("GET", () => path.replace(":id", webhookId), { query }, "", fieldName, message),
    name: `GET ${path} ${shown(query)} is 422 ${fieldName} "${message}"`,
  })));
});

describe("POST /forms/{formId}/submissions (JSON): messages name the form's field", () => {
  const submit = (kind: string, body: unknown, fieldName: string | (() => string), message: string | (() => string)) =>
    messageRow("POST", () => `/forms/${formId}/submissions`, { body, key: null }, kind, fieldName, message);
  scenarios("form fields", svc, [
    submit("wrong type", { firstName: 5 }, "firstName", "firstName must be a string."),
    submit("wrong type (body)", ["email"], "body", "body must be an object of field values."),
    submit("range (string max)", { firstName: "A", "address.city": long(256) }, "address.city", "address.city must be at most 255 characters."),
    submit("format (email)", { email: "nope" }, "email", "email must be a valid email address."),
    submit("unknown field", { email: "a@example.com", role: "admin" }, "role", "Unknown field role: this form does not take it."),
    {
      ...submit("enum (custom field): a value outside the options is 422 <field id>, listing them", undefined, () => size, () => `${size} must be one of S, M, L.`),
      body: () => ({ email: "a@example.com", [size]: "XL" }),
    },
  ]);
});

describe("sweep: no message shows zod's text or names its field other than once", () => {
  const BAD: unknown[] = [5, -1, 1.5, true, null, {}, [], [5], [""], "", " ", "x", long(300), long(70_000), { a: 1 }];

  test("every field of every body, given each of many bad values", async () => {
    const contactFields = ["firstName", "lastName", "email", "phone", "businessName", "website", "address", "contactTypeId", "tags", "customFields", "notes", "subscribed", "smsSubscribed", "source", "identityType", "contactId"];
    const requests: Array<[string, string, unknown]> = [];
    for (const field of contactFields) for (const value of BAD) {
      if (field !== "contactId") requests.push(["POST", "/contacts", { firstName: "Sweep", [field]: value }]);
      requests.push(["PATCH", `/contacts/${contactId}`, { [field]: value }]);
    }
    for (const value of BAD) requests.push(["POST", "/contacts", { firstName: "Sweep", address: { city: value } }]);
    for (const field of ["interactionTypeId", "type", "note", "date", "fields", "uniqueIdentifier"]) {
      for (const value of BAD) requests.push(["POST", `/contacts/${contactId}/interactions`, { type: "note", [field]: value }]);
    }
    for (const value of BAD) requests.push(["POST", `/contacts/${contactId}/interactions`, { type: "note", fields: { k: value } }]);
    for (const field of ["url", "events", "description"]) {
      for (const value of BAD) requests.push(["POST", "/webhooks", { url: HOOK_URL, events: ["*"], [field]: value }]);
    }
    for (const field of ["url", "events", "description", "status"]) {
      for (const value of BAD) requests.push(["PATCH", `/webhooks/${webhookId}`, { [field]: value }]);
    }
    for (const field of ["eventIds", "since", "until"]) {
      for (const value of BAD) requests.push(["POST", `/webhooks/${webhookId}/redeliver`, { [field]: value }]);
    }
    for (const body of BAD) requests.push(["POST", "/contacts", body]);

    const failures: string[] = [];
    let refused = 0;
    for (const [method, path, body] of requests) {
      const res = await svc().api(method, path, { body });
      if (res.json?.code !== "ERR_FORM_VALIDATION") continue;
      refused++;
      const faults = faultsOf(res);
      if (faults.length > 0) failures.push(`${method} ${path} ${JSON.stringify(body).slice(0, 80)} → ${res.json.fieldName}: "${res.json.message.slice(0, 160)}" (${faults.join("; ")})`);
    }
    expect(failures).toEqual([]);
    expect(refused).toBeGreaterThan(300);
  }, 120_000);

  test("every query parameter of every list, given each of many bad values", async () => {
    const lists: Array<[string, string[]]> = [
      ["/contacts", ["email", "phone", "contactTypeId", "contactTypeCategory", "tag", "updatedSince", "search", "limit", "cursor"]],
      [`/contacts/${contactId}/interactions`, ["interactionTypeId", "since", "until", "limit", "cursor"]],
      ["/events", ["since", "limit", "cursor"]],
      ["/webhooks", ["limit", "cursor"]],
      [`/webhooks/${webhookId}/attempts`, ["limit", "cursor"]],
      ["/tags", ["limit", "cursor"]],
      ["/contact-types", ["limit", "cursor"]],
      ["/interaction-types", ["limit", "cursor"]],
      ["/custom-fields", ["limit", "cursor"]],
    ];
    const values: Array<string | string[]> = ["", " ", "abc", "0", "-1", "1.5", "1e9", "201", "yesterday", "2024-13-01", long(300), ["1", "2"], Array.from({ length: 21 }, (_, i) => `v${i}`)];
    const failures: string[] = [];
    let refused = 0;
    for (const [path, params] of lists) for (const param of params) for (const value of values) {
      const res = await svc().api("GET", path, { query: { [param]: value } });
      if (res.json?.code !== "ERR_FORM_VALIDATION") continue;
      refused++;
      const faults = faultsOf(res);
      if (faults.length > 0) failures.push(`GET ${path} ${param}=${JSON.stringify(value).slice(0, 60)} → ${res.json.fieldName}: "${res.json.message.slice(0, 160)}" (${faults.join("; ")})`);
    }
    expect(failures).toEqual([]);
    expect(refused).toBeGreaterThan(100);
  }, 120_000);

  test("the checks themselves: zod's text and a name given twice are caught", () => {
    const res = (message: string, fieldName: string) => ({ json: { message, fieldName } }) as ApiResponse;
    expect(faultsOf(res("limit: limit must be an integer from 1 to 200.", "limit"))).toEqual(["fieldName limit named 2 times"]);
    expect(faultsOf(res("firstName: Invalid input: expected string, received number", "firstName")).length).toBeGreaterThan(0);
    expect(faultsOf(res("tags: Too big: expected array to have <=100 items", "tags")).length).toBeGreaterThan(0);
    expect(faultsOf(res("identityType: Invalid option: expected one of \"personal\"|\"business\"", "identityType")).length).toBeGreaterThan(0);
    expect(faultsOf(res("Unknown field planet.", "address.planet"))).toEqual(["fieldName address.planet named 0 times"]);
    expect(faultsOf(res("address.city must be at most 255 characters.", "address.city"))).toEqual([]);
    expect(faultsOf(res("address must be an object.", "address"))).toEqual([]);
  });
});
