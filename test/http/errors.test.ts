import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";

let srv: ServerHandle;
let contactId: string;

beforeAll(async () => {
  srv = await startServer();
  const c = await srv.api("POST", "/contacts", { body: { firstName: "Err" } });
  expectStatus(c, 201);
  contactId = c.json.contactId;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

describe("unknown paths and methods", () => {
  test("an unknown path under /v1 is 404 ERR_NOT_FOUND in the envelope", async () => {
    expectError(await srv.api("GET", "/no-such-thing"), "ERR_NOT_FOUND");
  });

  test("an unknown path outside /v1 is 404 ERR_NOT_FOUND in the envelope, without a key", async () => {
    expectError(await srv.api("GET", `${srv.origin}/no-such-thing`, { key: null }), "ERR_NOT_FOUND");
  });

  test("the API is not served outside /v1", async () => {
    expectError(await srv.api("GET", `${srv.origin}/contacts`), "ERR_NOT_FOUND");
  });

  test("GET of an unknown contact is 404 ERR_NOT_FOUND in the envelope", async () => {
    expectError(await srv.api("GET", "/contacts/CR-424242"), "ERR_NOT_FOUND");
  });

  test.each([
    ["DELETE", "/contacts"],
    ["PUT", "/contacts"],
    ["DELETE", "/contacts/:id"],
    ["PUT", "/contacts/:id"],
    ["DELETE", "/contacts/:id/interactions"],
    ["POST", "/tags"],
    ["POST", "/ping"],
  ])("%s %s (a known path, wrong method) is 405 ERR_METHOD_NOT_ALLOWED", async (method, path) => {
    expectError(await srv.api(method, path.replace(":id", contactId), { body: method === "DELETE" ? undefined : { firstName: "x" } }), "ERR_METHOD_NOT_ALLOWED");
  });
});

describe("request bodies", () => {
  test("malformed JSON is 422 ERR_INVALID_JSON with fieldName body", async () => {
    const res = await srv.api("POST", "/contacts", { rawBody: '{"firstName": "x",', headers: { "Content-Type": "application/json" } });
    expectError(res, "ERR_INVALID_JSON", "body");
  });

  test("malformed JSON on PATCH is 422 ERR_INVALID_JSON with fieldName body", async () => {
    const res = await srv.api("PATCH", `/contacts/${contactId}`, { rawBody: "{nope}", headers: { "Content-Type": "application/json" } });
    expectError(res, "ERR_INVALID_JSON", "body");
  });

  test("malformed JSON on POST interactions is 422 ERR_INVALID_JSON with fieldName body", async () => {
    const res = await srv.api("POST", `/contacts/${contactId}/interactions`, { rawBody: "[", headers: { "Content-Type": "application/json" } });
    expectError(res, "ERR_INVALID_JSON", "body");
  });

  test.each([["[]"], ['"text"'], ["42"], ["null"]])("a JSON body that is not an object (%s) is 422 ERR_FORM_VALIDATION with fieldName body (docs/decisions.md)", async (raw) => {
    const res = await srv.api("POST", "/contacts", { rawBody: raw, headers: { "Content-Type": "application/json" } });
    expectError(res, "ERR_FORM_VALIDATION", "body");
  });

  test.each([
    ["text/plain", "POST", "/contacts"],
    ["application/x-www-form-urlencoded", "POST", "/contacts"],
    ["multipart/form-data; boundary=x", "POST", "/contacts"],
    ["text/plain", "PATCH", "/contacts/:id"],
    ["text/plain", "POST", "/contacts/:id/interactions"],
  ])("a %s body on %s %s is 415 ERR_UNSUPPORTED_MEDIA_TYPE", async (type, method, path) => {
    const res = await srv.api(method, path.replace(":id", contactId), { rawBody: '{"firstName":"x"}', headers: { "Content-Type": type } });
    expectError(res, "ERR_UNSUPPORTED_MEDIA_TYPE");
  });

  test("application/json with a charset parameter is accepted", async () => {
    const res = await srv.api("POST", "/contacts", {
      rawBody: JSON.stringify({ firstName: "Charset" }),
      headers: { "Content-Type": "application/json; charset=utf-8" },
    });
    expectStatus(res, 201);
  });

  test("a body of exactly 1,048,576 bytes is read (not 413)", async () => {
    const prefix = '{"firstName":"Big","notes":"';
    const suffix = '"}';
    const raw = prefix + "n".repeat(1_048_576 - prefix.length - suffix.length) + suffix;
    expect(new TextEncoder().encode(raw).length).toBe(1_048_576);
    const res = await srv.api("POST", "/contacts", { rawBody: raw, headers: { "Content-Type": "application/json" } });
    // the body is parsed and validated: notes is too long
    expectError(res, "ERR_FORM_VALIDATION", "notes");
  });

  test("a body of 1,048,577 bytes is 413 ERR_PAYLOAD_TOO_LARGE", async () => {
    const prefix = '{"firstName":"Big","notes":"';
    const suffix = '"}';
    const raw = prefix + "n".repeat(1_048_577 - prefix.length - suffix.length) + suffix;
    expect(new TextEncoder().encode(raw).length).toBe(1_048_577);
    const res = await srv.api("POST", "/contacts", { rawBody: raw, headers: { "Content-Type": "application/json" } });
    expectError(res, "ERR_PAYLOAD_TOO_LARGE");
  });

  test("a body over 1 MiB on PATCH is 413 ERR_PAYLOAD_TOO_LARGE", async () => {
    const raw = JSON.stringify({ notes: "n".repeat(2_000_000) });
    const res = await srv.api("PATCH", `/contacts/${contactId}`, { rawBody: raw, headers: { "Content-Type": "application/json" } });
    expectError(res, "ERR_PAYLOAD_TOO_LARGE");
  });
});

describe("error envelope", () => {
  test("a validation error has exactly success, statusCode, error, code, message and fieldName", async () => {
    const res = await srv.api("POST", "/contacts", { body: { firstName: 5 } });
    expect(res.status).toBe(422);
    expect(Object.keys(res.json).sort()).toEqual(["code", "error", "fieldName", "message", "statusCode", "success"]);
    expect(res.json).toMatchObject({
      success: false,
      statusCode: 422,
      error: "Unprocessable Entity",
      code: "ERR_FORM_VALIDATION",
      fieldName: "firstName",
    });
  });

  test("a 404 has exactly success, statusCode, error, code and message", async () => {
    const res = await srv.api("GET", "/contacts/CR-999999");
    expectError(res, "ERR_NOT_FOUND");
    expect(Object.keys(res.json).sort()).toEqual(["code", "error", "message", "statusCode", "success"]);
  });

  test("a query-parameter error is 422 ERR_FORM_VALIDATION naming the parameter", async () => {
    expectError(await srv.api("GET", "/contacts", { query: { limit: "many" } }), "ERR_FORM_VALIDATION", "limit");
  });
});

describe("X-Request-Id", () => {
  test("every answer carries a unique X-Request-Id: 200, 201, 401, 403, 404 (route and unknown path), 405, 415, 422, healthz", async () => {
    const readKey = await srv.newKey(["contacts:read"]);
    const answers = await Promise.all([
      srv.api("GET", "/contacts"),
      srv.api("POST", "/contacts", { body: { firstName: "Rid" } }),
      srv.api("GET", "/contacts", { key: null }),
      srv.api("POST", "/contacts", { key: readKey, body: { firstName: "x" } }),
      srv.api("GET", "/contacts/CR-999999"),
      srv.api("GET", `${srv.origin}/nowhere`, { key: null }),
      srv.api("DELETE", "/contacts"),
      srv.api("POST", "/contacts", { rawBody: "x", headers: { "Content-Type": "text/plain" } }),
      srv.api("POST", "/contacts", { body: {} }),
      srv.api("GET", `${srv.origin}/healthz`, { key: null }),
      srv.api("GET", "/contacts"),
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
    const res = await srv.api("GET", "/openapi.json", { key: null });
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
