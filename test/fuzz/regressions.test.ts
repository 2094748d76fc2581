/**
 * Requests found by the fuzzers (test/fuzz, `npm run stress`), kept as fixed cases, plus a
 * few hand-picked hostile bodies that must keep answering a 4xx envelope.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { violations } from "./invariants.ts";
import type { FuzzRequest } from "./requests.ts";

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer({ env: "sandbox" });
});

afterAll(async () => {
  await server?.stop();
});

async function check(req: Omit<FuzzRequest, "family" | "auth">) {
  const headers: Record<string, string> = { Authorization: `Bearer ${server.key}`, ...req.headers };
  const res = await fetch(server.origin + req.path, { method: req.method, headers, body: req.body as BodyInit | undefined });
  const answer = { status: res.status, headers: res.headers, text: await res.text() };
  const problems = violations({ ...req, family: "regression", auth: "a" }, answer);
  expect(problems, `${req.method} ${req.path.slice(0, 120)} → ${answer.status} ${answer.text.slice(0, 200)}`).toEqual([]);
  expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
  return answer;
}

const json = { "Content-Type": "application/json" };

// Finding F2 (fuzz): two search terms that differ only in lone surrogates are distinct JS
// strings (so searchTerms' Set keeps both) but the same text once SQLite stores them as
// UTF-8 (each lone surrogate becomes U+FFFD): the insert into contact_search_terms breaks
// its UNIQUE (project_id, term, contact_id) and the request answers 500 ERR_INTERNAL
// (log: "SQLiteError: UNIQUE constraint failed: contact_search_terms..." at
// replaceSearchTerms, src/contacts/repository.ts, from createContact / the PATCH path).
test("F2: POST /contacts with lone surrogates in two name terms is not a 5xx", async () => {
  await check({ route: "POST /contacts", method: "POST", path: "/v1/contacts", headers: json, body: '{"firstName":"\\ud800","lastName":"\\udfff"}' });
  await check({ route: "POST /contacts", method: "POST", path: "/v1/contacts", headers: json, body: '{"firstName":"\\ud800 \\udc00"}' });
});

test("F2: PATCH /contacts/{id} with lone surrogates in two name terms is not a 5xx", async () => {
  const created = await check({ route: "POST /contacts", method: "POST", path: "/v1/contacts", headers: json, body: '{"firstName":"Sur"}' });
  const id = JSON.parse(created.text).contactId;
  await check({ route: "PATCH /contacts/{contactId}", method: "PATCH", path: `/v1/contacts/${id}`, headers: json, body: '{"lastName":"\\udbff x \\udc01"}' });
  // A stored lone surrogate comes back as U+FFFD, so one more lone surrogate collides with it.
  const other = await check({ route: "POST /contacts", method: "POST", path: "/v1/contacts", headers: json, body: '{"lastName":"\\udfff"}' });
  const otherId = JSON.parse(other.text).contactId;
  await check({ route: "PATCH /contacts/{contactId}", method: "PATCH", path: `/v1/contacts/${otherId}`, headers: json, body: '{"firstName":"\\ud800"}' });
});

test("F2: a JSON form submission with lone surrogates in two name terms is not a 5xx", async () => {
  const form = await server.cli(["form", "create", "--project", server.projectId, "--name", "F2", "--fields", "firstName,lastName,businessName", "--json"]);
  await check({ route: "POST /forms/{formId}/submissions", method: "POST", path: `/v1/forms/${form.id}/submissions`, headers: json, body: '{"businessName":" \\udc00 \\udfff","lastName":""}' });
});

/** What a hostile body must get: the status, and the error's code and fieldName or the stored firstName. */
interface Expected {
  status: number;
  code?: string;
  fieldName?: string;
  firstName?: string;
}

const invalidUtf8 = Uint8Array.from([0x7b, 0x22, 0x66, 0x69, 0x72, 0x73, 0x74, 0x4e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x22, 0x7d]);
/** `{"notes":"xxx…"}` of exactly `bytes` bytes. */
const notesBody = (bytes: number) => JSON.stringify({ notes: "x".repeat(bytes - '{"notes":""}'.length) });

const hostile: [name: string, body: string | Uint8Array, expected: Expected][] = [
  // Valid JSON that is not an object (docs/decisions.md: fieldName body).
  ["200,000 nested arrays", "[".repeat(200_000) + "]".repeat(200_000), { status: 422, code: "ERR_FORM_VALIDATION", fieldName: "body" }],
  // An object whose only key is unknown (docs/api.md §3: 422 naming the key).
  ["100,000 nested objects", '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000), { status: 422, code: "ERR_FORM_VALIDATION", fieldName: "a" }],
  ["unclosed nesting", "[".repeat(50_000), { status: 422, code: "ERR_INVALID_JSON", fieldName: "body" }],
  ["__proto__ key", '{"__proto__":{"polluted":1},"firstName":"a"}', { status: 422, code: "ERR_FORM_VALIDATION", fieldName: "__proto__" }],
  ["number past 2^64", '{"firstName":"a","subscribed":123456789012345678901234567890}', { status: 422, code: "ERR_FORM_VALIDATION", fieldName: "subscribed" }],
  // The body cap is exactly 1 MiB (docs/api.md §3): a body of 1,048,576 bytes is read (and its notes are too long), one more byte is 413.
  ["a body of exactly 1 MiB", notesBody(1_048_576), { status: 422, code: "ERR_FORM_VALIDATION", fieldName: "notes" }],
  ["a body of 1 MiB + 1 byte", notesBody(1_048_577), { status: 413, code: "ERR_PAYLOAD_TOO_LARGE" }],
  // Where the spec is silent, what the service does: a leading BOM is skipped; a repeated key's last value wins (as JSON.parse);
  // a lone surrogate is stored as U+FFFD (docs/decisions.md); NUL is kept; invalid UTF-8 is decoded with U+FFFD.
  ["BOM before the object", '\ufeff{"firstName":"Ada"}', { status: 201, firstName: "Ada" }],
  ["duplicate keys with a wrong-typed repeat", '{"firstName":"Ada","firstName":{"x":[1]},"firstName":"Ada"}', { status: 201, firstName: "Ada" }],
  ["escaped lone surrogate", '{"firstName":"\\ud800"}', { status: 201, firstName: "\ufffd" }],
  ["NUL in a name", '{"firstName":"a\\u0000b"}', { status: 201, firstName: "a\u0000b" }],
  ["invalid UTF-8 bytes", invalidUtf8, { status: 201, firstName: JSON.parse(new TextDecoder().decode(invalidUtf8)).firstName }],
];

for (const [name, body, expected] of hostile) {
  const outcome = expected.status === 201 ? `201, firstName ${JSON.stringify(expected.firstName)}` : `${expected.status} ${expected.code} ${expected.fieldName ?? ""}`.trim();
  test(`POST /contacts with ${name}: ${outcome}`, async () => {
    const answer = await check({ route: "POST /contacts", method: "POST", path: "/v1/contacts", headers: json, body });
    const got = JSON.parse(answer.text);
    if (expected.status === 201) expect({ status: answer.status, firstName: got.firstName }).toEqual({ status: 201, firstName: expected.firstName });
    else expect({ status: answer.status, code: got.code, fieldName: got.fieldName }).toEqual({ status: expected.status, code: expected.code, fieldName: expected.fieldName });
  });
}

test("PATCH relabel to a contactId past 2^63 is 422 contactId and leaves the counter where it was", async () => {
  const created = await check({ route: "POST /contacts", method: "POST", path: "/v1/contacts", headers: json, body: '{"firstName":"Big"}' });
  const id = JSON.parse(created.text).contactId;
  for (const target of ["CR-9223372036854775807", "CR-9223372036854775808", "CR-1000000000000000000000000000"]) {
    const answer = await check({ route: "PATCH /contacts/{contactId}", method: "PATCH", path: `/v1/contacts/${id}`, headers: json, body: JSON.stringify({ contactId: target }) });
    const got = JSON.parse(answer.text);
    expect({ status: answer.status, code: got.code, fieldName: got.fieldName }, target).toEqual({ status: 422, code: "ERR_FORM_VALIDATION", fieldName: "contactId" });
  }
  // The refused relabels did not move the id counter (docs/api.md §11.4): the next create is the next number.
  const after = await check({ route: "POST /contacts", method: "POST", path: "/v1/contacts", headers: json, body: '{"firstName":"After"}' });
  expect(JSON.parse(after.text).contactId).toBe(`CR-${Number(id.slice(3)) + 1}`);
});
