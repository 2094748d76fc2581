/**
 * The error envelope and the answers every route shares (docs/api.md §7): unknown paths and
 * methods, bodies that are not JSON objects, media types, sizes, X-Request-Id. The 4xx cases
 * are a scenario table (test/helpers/scenarios.ts) run against the service in-process.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { inProcessService, scenarios, type Scenario } from "../helpers/scenarios.ts";

const svc = inProcessService();
let contactId: string;

beforeAll(async () => {
  const c = await svc().api("POST", "/contacts", { body: { firstName: "Err" } });
  expectStatus(c, 201);
  contactId = c.json.contactId;
}, 60_000);

const withId = (path: string) => () => path.replace(":id", contactId);
const JSON_TYPE = { "Content-Type": "application/json" };

/** A body of exactly `bytes` bytes: a contact whose notes fill it. */
function bodyOf(bytes: number): string {
  const prefix = '{"firstName":"Big","notes":"';
  const suffix = '"}';
  const raw = prefix + "n".repeat(bytes - prefix.length - suffix.length) + suffix;
  expect(new TextEncoder().encode(raw).length).toBe(bytes);
  return raw;
}

scenarios("unknown paths and methods", svc, [
  { name: "an unknown path under /v1 is 404 ERR_NOT_FOUND in the envelope", method: "GET", path: "/no-such-thing", status: 404, error: { code: "ERR_NOT_FOUND" } },
  {
    name: "an unknown path outside /v1 is 404 ERR_NOT_FOUND in the envelope, without a key",
    method: "GET",
    path: () => `${svc().origin}/no-such-thing`,
    key: null,
    status: 404,
    error: { code: "ERR_NOT_FOUND" },
  },
  { name: "the API is not served outside /v1", method: "GET", path: () => `${svc().origin}/contacts`, status: 404, error: { code: "ERR_NOT_FOUND" } },
  { name: "GET of an unknown contact is 404 ERR_NOT_FOUND in the envelope", method: "GET", path: "/contacts/CR-424242", status: 404, error: { code: "ERR_NOT_FOUND" } },
  ...(
    [
      ["DELETE", "/contacts"],
      ["PATCH", "/contacts"],
      ["POST", "/contacts/:id"],
      ["PUT", "/contacts/:id"],
      ["DELETE", "/contacts/:id/interactions"],
      ["POST", "/tags"],
      ["POST", "/ping"],
    ] as const
  ).map(
    ([method, path]): Scenario => ({
      name: `${method} ${path} (a known path, wrong method) is 405 ERR_METHOD_NOT_ALLOWED`,
      method,
      path: withId(path),
      body: method === "DELETE" ? undefined : { firstName: "x" },
      status: 405,
      error: { code: "ERR_METHOD_NOT_ALLOWED" },
    }),
  ),
]);

scenarios("request bodies", svc, [
  { name: "malformed JSON is 422 ERR_INVALID_JSON with fieldName body", method: "POST", path: "/contacts", rawBody: '{"firstName": "x",', headers: JSON_TYPE, status: 422, error: { code: "ERR_INVALID_JSON", fieldName: "body" } },
  { name: "malformed JSON on PATCH is 422 ERR_INVALID_JSON with fieldName body", method: "PATCH", path: withId("/contacts/:id"), rawBody: "{nope}", headers: JSON_TYPE, status: 422, error: { code: "ERR_INVALID_JSON", fieldName: "body" } },
  {
    name: "malformed JSON on POST interactions is 422 ERR_INVALID_JSON with fieldName body",
    method: "POST",
    path: withId("/contacts/:id/interactions"),
    rawBody: "[",
    headers: JSON_TYPE,
    status: 422,
    error: { code: "ERR_INVALID_JSON", fieldName: "body" },
  },
  ...["[]", '"text"', "42", "null"].map(
    (raw): Scenario => ({
      name: `a JSON body that is not an object (${raw}) is 422 ERR_FORM_VALIDATION with fieldName body (docs/decisions.md)`,
      method: "POST",
      path: "/contacts",
      rawBody: raw,
      headers: JSON_TYPE,
      status: 422,
      error: { code: "ERR_FORM_VALIDATION", fieldName: "body" },
    }),
  ),
  ...(
    [
      ["text/plain", "POST", "/contacts"],
      ["application/x-www-form-urlencoded", "POST", "/contacts"],
      ["multipart/form-data; boundary=x", "POST", "/contacts"],
      ["text/plain", "PATCH", "/contacts/:id"],
      ["text/plain", "POST", "/contacts/:id/interactions"],
    ] as const
  ).map(
    ([type, method, path]): Scenario => ({
      name: `a ${type} body on ${method} ${path} is 415 ERR_UNSUPPORTED_MEDIA_TYPE`,
      method,
      path: withId(path),
      rawBody: '{"firstName":"x"}',
      headers: { "Content-Type": type },
      status: 415,
      error: { code: "ERR_UNSUPPORTED_MEDIA_TYPE" },
    }),
  ),
  {
    name: "application/json with a charset parameter is accepted",
    method: "POST",
    path: "/contacts",
    rawBody: JSON.stringify({ firstName: "Charset" }),
    headers: { "Content-Type": "application/json; charset=utf-8" },
    status: 201,
  },
  // The body is read, parsed and validated: notes is too long.
  { name: "a body of exactly 1,048,576 bytes is read (not 413)", method: "POST", path: "/contacts", rawBody: bodyOf(1_048_576), headers: JSON_TYPE, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "notes" } },
  { name: "a body of 1,048,577 bytes is 413 ERR_PAYLOAD_TOO_LARGE", method: "POST", path: "/contacts", rawBody: bodyOf(1_048_577), headers: JSON_TYPE, status: 413, error: { code: "ERR_PAYLOAD_TOO_LARGE" } },
  {
    name: "a body over 1 MiB on PATCH is 413 ERR_PAYLOAD_TOO_LARGE",
    method: "PATCH",
    path: withId("/contacts/:id"),
    rawBody: JSON.stringify({ notes: "n".repeat(2_000_000) }),
    headers: JSON_TYPE,
    status: 413,
    error: { code: "ERR_PAYLOAD_TOO_LARGE" },
  },
]);

scenarios("error envelope", svc, [
  {
    name: "a validation error has exactly success, statusCode, error, code, message and fieldName",
    method: "POST",
    path: "/contacts",
    body: { firstName: 5 },
    status: 422,
    expect: (res) => {
      expect(Object.keys(res.json).sort()).toEqual(["code", "error", "fieldName", "message", "statusCode", "success"]);
      expect(res.json).toMatchObject({ success: false, statusCode: 422, error: "Unprocessable Entity", code: "ERR_FORM_VALIDATION", fieldName: "firstName" });
    },
  },
  {
    name: "a 404 has exactly success, statusCode, error, code and message",
    method: "GET",
    path: "/contacts/CR-999999",
    status: 404,
    error: { code: "ERR_NOT_FOUND" },
    expect: (res) => expect(Object.keys(res.json).sort()).toEqual(["code", "error", "message", "statusCode", "success"]),
  },
  { name: "a query-parameter error is 422 ERR_FORM_VALIDATION naming the parameter", method: "GET", path: "/contacts", query: { limit: "many" }, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "limit" } },
]);

describe("X-Request-Id", () => {
  test("every answer carries a unique X-Request-Id: 200, 201, 401, 403, 404 (route and unknown path), 405, 415, 422, healthz", async () => {
    const { api, origin, server, project } = svc();
    const readKey = (await server.cli(["key", "create", "--project", project.id, "--scopes", "contacts:read"])).key as string;
    const answers = await Promise.all([
      api("GET", "/contacts"),
      api("POST", "/contacts", { body: { firstName: "Rid" } }),
      api("GET", "/contacts", { key: null }),
      api("POST", "/contacts", { key: readKey, body: { firstName: "x" } }),
      api("GET", "/contacts/CR-999999"),
      api("GET", `${origin}/nowhere`, { key: null }),
      api("DELETE", "/contacts"),
      api("POST", "/contacts", { rawBody: "x", headers: { "Content-Type": "text/plain" } }),
      api("POST", "/contacts", { body: {} }),
      api("GET", `${origin}/healthz`, { key: null }),
      api("GET", "/contacts"),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 201, 401, 403, 404, 404, 405, 415, 422, 200, 200]);
    const ids = answers.map((a) => a.headers.get("x-request-id"));
    for (const id of ids) {
      expect(typeof id).toBe("string");
      expect(id!.length).toBeGreaterThan(0);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("endpoints without a key", () => {
  // /healthz and /readyz without a key: test/http/auth.test.ts.
  test("GET /v1/openapi.json without a key is a valid OpenAPI document listing the contact paths", async () => {
    const res = await svc().api("GET", "/openapi.json", { key: null });
    expectStatus(res, 200);
    expect(res.headers.get("content-type") ?? "").toContain("json");
    expect(typeof (res.json.openapi ?? res.json.swagger)).toBe("string");
    const doc = await SwaggerParser.validate(structuredClone(res.json));
    expect(doc).toBeTruthy();
    const paths = Object.keys(res.json.paths).map((p) => p.replace(/^\/v1/, ""));
    const norm = paths.map((p) => p.replace(/\{[^}]+\}/g, "{}"));
    for (const expected of ["/contacts", "/contacts/{}", "/contacts/{}/interactions", "/ping"]) expect(norm).toContain(expected);
    const contacts = res.json.paths[Object.keys(res.json.paths).find((p) => p.replace(/^\/v1/, "") === "/contacts")!];
    expect(Object.keys(contacts)).toEqual(expect.arrayContaining(["get", "post"]));
  });
});
