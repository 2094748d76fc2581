/**
 * The error envelope (docs/api.md §4, §3, §16): `{ success: false, statusCode,
 * error, code, message, fieldName? }` with `error` the HTTP reason phrase, a closed code →
 * status map, fieldName only on errors that name a field (dotted for nested fields), the zod
 * hook's mapping of a validation failure, and the one error handler of createApp: 404 and 405
 * (with Allow) for unknown routes, 415 and 422 for bodies the framework refused, 429 when the
 * write queue is full, and a plain 500 that never shows a stack or SQL. In-process, no server.
 */
import { describe, expect, test } from "bun:test";
import { z } from "@hono/zod-openapi";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { createApp } from "../../src/app.ts";
import { generateApiKey } from "../../src/auth/key-format.ts";
import type { Caller } from "../../src/auth/keys.ts";
import { RateLimiter } from "../../src/auth/rate-limiter.ts";
import { loadConfig } from "../../src/config.ts";
import { WriteQueueFull } from "../../src/storage/sqlite/group-commit.ts";
import { ApiError, envelope, errorResponse, errorStatus, notFound, UNAUTHORIZED_MESSAGE, validationError, type ErrorCode } from "../../src/errors.ts";
import type { AppDeps } from "../../src/http/env.ts";
import { validationFailure } from "../../src/http/validation.ts";
import { Metrics } from "../../src/metrics/registry.ts";

const CODES: Array<[ErrorCode, number, string]> = [
  ["ERR_UNAUTHORIZED", 401, "Unauthorized"],
  ["ERR_QUOTA_EXCEEDED", 402, "Payment Required"],
  ["ERR_FORBIDDEN", 403, "Forbidden"],
  ["ERR_NOT_FOUND", 404, "Not Found"],
  ["ERR_METHOD_NOT_ALLOWED", 405, "Method Not Allowed"],
  ["ERR_CONFLICT", 409, "Conflict"],
  ["ERR_AMBIGUOUS_MATCH", 409, "Conflict"],
  ["ERR_CONTACT_MERGED", 409, "Conflict"],
  ["ERR_CURSOR_EXPIRED", 410, "Gone"],
  ["ERR_UNDO_EXPIRED", 410, "Gone"],
  ["ERR_PRECONDITION_FAILED", 412, "Precondition Failed"],
  ["ERR_PAYLOAD_TOO_LARGE", 413, "Payload Too Large"],
  ["ERR_UNSUPPORTED_MEDIA_TYPE", 415, "Unsupported Media Type"],
  ["ERR_IDEMPOTENCY_KEY_REUSED", 422, "Unprocessable Entity"],
  ["ERR_FORM_VALIDATION", 422, "Unprocessable Entity"],
  ["ERR_INVALID_JSON", 422, "Unprocessable Entity"],
  ["ERR_BATCH_REJECTED", 422, "Unprocessable Entity"],
  ["ERR_RATE_LIMITED", 429, "Too Many Requests"],
  ["ERR_INTERNAL", 500, "Internal Server Error"],
];

describe("codes, statuses and reason phrases (docs/api.md §4)", () => {
  test("the code set is closed: exactly the codes of docs/api.md §4", () => {
    expect(Object.keys(errorStatus).sort()).toEqual(CODES.map(([code]) => code).sort());
  });

  for (const [code, status, reason] of CODES)
    test(`${code} is ${status} with error "${reason}"`, () => {
      const e = new ApiError(code, "Something specific.");
      expect(e.status).toBe(status);
      expect(envelope(e)).toEqual({ success: false, statusCode: status, error: reason, code, message: "Something specific." });
    });

  test("a status outside the map still gets a string error: error is always present", () => {
    const odd = Object.assign(new ApiError("ERR_CONFLICT", "x"), { status: 418 });
    expect(envelope(odd).error).toBe("Error");
  });
});

describe("fieldName appears only when the error names a field", () => {
  test("a validation error names its field, dotted for nested ones", () => {
    expect(envelope(validationError("address.city", "address.city: at most 255 characters."))).toEqual({
      success: false,
      statusCode: 422,
      error: "Unprocessable Entity",
      code: "ERR_FORM_VALIDATION",
      message: "address.city: at most 255 characters.",
      fieldName: "address.city",
    });
  });

  test("an error without a field has no fieldName key at all (not null, not undefined)", () => {
    for (const e of [new ApiError("ERR_CONFLICT", "Taken."), notFound("Contact"), new ApiError("ERR_INTERNAL", "Internal server error.")]) {
      expect(Object.keys(envelope(e))).toEqual(["success", "statusCode", "error", "code", "message"]);
      expect(JSON.parse(JSON.stringify(envelope(e)))).not.toHaveProperty("fieldName");
    }
  });

  test("notFound says what was not found, as a 404", () => {
    expect(envelope(notFound("Contact"))).toEqual({ success: false, statusCode: 404, error: "Not Found", code: "ERR_NOT_FOUND", message: "Contact not found." });
  });

  test("the 401 message is one fixed opaque sentence", () => {
    expect(UNAUTHORIZED_MESSAGE).toBe("Invalid or missing API key.");
  });
});

describe("errorResponse", () => {
  const answer = (error: ApiError) => new Hono().get("/", (c) => errorResponse(c, error)).request("/");

  test("answers the envelope as JSON with the error's status", async () => {
    const res = await answer(new ApiError("ERR_CONFLICT", "contactId CR-5 is already in use.", "contactId"));
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(await res.json()).toEqual({
      success: false,
      statusCode: 409,
      error: "Conflict",
      code: "ERR_CONFLICT",
      message: "contactId CR-5 is already in use.",
      fieldName: "contactId",
    });
  });

  test("carries the error's headers (Retry-After of a 429)", async () => {
    const res = await answer(new ApiError("ERR_RATE_LIMITED", "Slow down.", undefined, { "Retry-After": "7", "RateLimit-Remaining": "0" }));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
  });
});

describe("validationFailure: the zod hook's 422 (docs/api.md §4, §3, §16)", () => {
  const Body = z.strictObject({
    firstName: z.string().max(3, "must be at most 3 characters.").optional(),
    email: z.string(),
    address: z.strictObject({ city: z.string().max(2, "must be at most 2 characters.").nullable().optional() }).optional(),
    tags: z.array(z.string().min(1, "must be 1–64 characters.")).optional(),
  });
  const fail = (input: unknown) => {
    const parsed = Body.safeParse(input);
    if (parsed.success) throw new Error("expected a validation failure");
    return validationFailure(parsed.error);
  };

  test("a missing field: `<field> is required.`, naming it", () => {
    const e = fail({});
    expect([e.code, e.status, e.fieldName, e.message]).toEqual(["ERR_FORM_VALIDATION", 422, "email", "email is required."]);
  });

  test("a schema's message is a predicate: `<field> <predicate>`, the field named once", () => {
    const e = fail({ email: "a@b.c", firstName: "Adalbert" });
    expect([e.fieldName, e.message]).toEqual(["firstName", "firstName must be at most 3 characters."]);
  });

  test("a wrong type is 422 naming the field", () => {
    const e = fail({ email: 42 });
    expect([e.code, e.fieldName]).toEqual(["ERR_FORM_VALIDATION", "email"]);
  });

  test("a present value of the wrong type reads `<field> must be a string`, not `is required` (docs/api.md §16)", () => {
    expect(fail({ email: 42 }).message).toMatch(/^email must be a string\.?$/);
  });

  test("a value of the wrong type reads with its article: `address must be an object`", () => {
    const e = validationFailure(z.object({ address: z.object({ city: z.string() }) }).safeParse({ address: "London" }).error!);
    expect([e.fieldName, e.message]).toEqual(["address", "address must be an object."]);
  });

  test("a value outside an enum reads `<field> must be one of a, b`, never zod's raw text (docs/api.md §16)", () => {
    const e = validationFailure(z.object({ identityType: z.enum(["personal", "business"]) }).safeParse({ identityType: "robot" }).error!);
    expect(e.message).toMatch(/^identityType must be one of personal, business\.?$/);
  });

  test("a nested field is named with a dotted path", () => {
    const e = fail({ email: "a@b.c", address: { city: "London" } });
    expect([e.fieldName, e.message]).toEqual(["address.city", "address.city must be at most 2 characters."]);
  });

  test("positions in arrays are left out: `tags`, not `tags.1`; the message speaks of each item", () => {
    const e = fail({ email: "a@b.c", tags: ["ok", ""] });
    expect([e.fieldName, e.message]).toEqual(["tags", "each item of tags must be 1–64 characters."]);
  });

  test("an unknown field is named itself: `Unknown field <key>.`", () => {
    const e = fail({ email: "a@b.c", role: "admin" });
    expect([e.code, e.fieldName, e.message]).toEqual(["ERR_FORM_VALIDATION", "role", "Unknown field role."]);
  });

  test("an unknown field inside an object is named with its path, in fieldName and message", () => {
    const e = fail({ email: "a@b.c", address: { planet: "Mars" } });
    expect([e.fieldName, e.message]).toEqual(["address.planet", "Unknown field address.planet."]);
  });

  test("a body that is not an object at all is named `body`", () => {
    expect(fail("just text").fieldName).toBe("body");
    expect(fail(undefined).message).toBe("body is required.");
  });

  // With the input the hook passes, missing and wrong type are told apart by the value, not zod's text.
  const failWith = (schema: z.ZodType, input: unknown, target = "json") => {
    const parsed = schema.safeParse(input);
    if (parsed.success) throw new Error("expected a validation failure");
    return validationFailure(parsed.error, { input, target });
  };

  test.each([
    ["absent", {}, "email is required."],
    ["null", { email: null }, "email must be a string."],
    ["a number", { email: 5 }, "email must be a string."],
    ["an array", { email: ["a"] }, "email must be a string."],
  ])("with the input: a field that is %s reads %j", (_kind, input, message) => {
    expect(failWith(Body, input).message).toBe(message);
  });

  test("a schema's own message never hides a missing field: `<field> is required.`", () => {
    const schema = z.object({ limit: z.number({ error: "must be an integer from 1 to 200." }) });
    expect(failWith(schema, {}).message).toBe("limit is required.");
    expect(failWith(schema, { limit: "x" }).message).toBe("limit must be an integer from 1 to 200.");
  });

  test("a query parameter given twice reads `<field> must be given once.`", () => {
    const schema = z.object({ since: z.string().optional(), status: z.enum(["a", "b"]).optional() });
    expect(failWith(schema, { since: ["x", "y"] }, "query").message).toBe("since must be given once.");
    expect(failWith(schema, { status: ["a", "b"] }, "query").message).toBe("status must be given once.");
  });

  test.each([
    ["a number too big", z.object({ n: z.number().max(5) }), { n: 6 }, "n must be at most 5."],
    ["a number too small", z.object({ n: z.number().min(1) }), { n: 0 }, "n must be at least 1."],
    ["not an integer", z.object({ n: z.number().int() }), { n: 1.5 }, "n must be an integer."],
    ["an empty string", z.object({ s: z.string().min(1) }), { s: "" }, "s must not be empty."],
    ["a long string", z.object({ s: z.string().max(2) }), { s: "abc" }, "s must be at most 2 characters."],
    ["a short array", z.object({ a: z.array(z.string()).min(1) }), { a: [] }, "a must have at least 1 item."],
    ["a long array", z.object({ a: z.array(z.string()).max(2) }), { a: ["x", "y", "z"] }, "a must have at most 2 items."],
    ["an email", z.object({ e: z.email() }), { e: "nope" }, "e must be a valid email address."],
    ["a URL", z.object({ u: z.url() }), { u: "nope" }, "u must be a valid URL."],
    ["a literal", z.object({ t: z.literal("note") }), { t: "call" }, 't must be "note".'],
    ["an item's type", z.object({ a: z.array(z.string()) }), { a: [1] }, "each item of a must be a string."],
    ["a record", z.object({ r: z.record(z.string(), z.string()) }), { r: [] }, "r must be an object."],
    ["a refinement without a message", z.object({ x: z.string().refine(() => false) }), { x: "y" }, "x is not valid."],
  ])("zod's own text is replaced by the issue's kind: %s", (_kind, schema, input, message) => {
    expect(failWith(schema, input).message).toBe(message);
  });
});

describe("createApp's one error handler", () => {
  const T = 1_767_225_600_000;
  const KEY = generateApiKey("production");
  const caller: Caller = { keyId: "key_1", projectId: "prj_1", scopes: ["contacts:read"] as Caller["scopes"], rateLimitPerMinute: 120, contactCreatesPerHour: 600, batchItemsPerHour: 60_000 };

  function app() {
    const errors: Array<[string, Record<string, unknown>]> = [];
    const deps = {
      config: loadConfig({}),
      clock: { now: () => T },
      db: new Proxy({}, { get: () => () => Promise.reject(new Error("no database in this test")) }),
      keys: { knows: () => false, verify: async (key: string) => (key === KEY ? caller : null) },
      limiter: new RateLimiter(() => T),
      metrics: new Metrics(),
      log: { debug() {}, info() {}, warn() {}, error: (message: string, fields: Record<string, unknown>) => errors.push([message, fields]) },
    } as unknown as AppDeps;
    const a = createApp(deps);
    a.get("/test/api-error", () => {
      throw new ApiError("ERR_CONFLICT", "Already there.", "contactId", { "X-Extra": "1" });
    });
    a.get("/test/queue-full", () => {
      throw new WriteQueueFull("queue full");
    });
    a.get("/test/http/:status", (c) => {
      const status = Number(c.req.param("status")) as 400 | 415 | 401;
      throw new HTTPException(status, { message: c.req.query("message") ?? "" });
    });
    a.get("/test/status-400", () => {
      throw Object.assign(new Error("upstream answered 400"), { status: 400 });
    });
    a.get("/test/crash", () => {
      throw new Error("SQLITE_CONSTRAINT: UNIQUE constraint failed: contacts.email_key (INSERT INTO contacts VALUES (?))");
    });
    return { app: a, errors };
  }
  const authed = { headers: { Authorization: `Bearer ${KEY}` } };

  test("an ApiError is answered as itself, with its headers and X-Request-Id", async () => {
    const res = await app().app.request("/test/api-error");
    expect(res.status).toBe(409);
    expect(res.headers.get("x-extra")).toBe("1");
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(await res.json()).toEqual({ success: false, statusCode: 409, error: "Conflict", code: "ERR_CONFLICT", message: "Already there.", fieldName: "contactId" });
  });

  test("a full write queue is 429 with Retry-After: 1", async () => {
    const res = await app().app.request("/test/queue-full");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({
      success: false,
      statusCode: 429,
      error: "Too Many Requests",
      code: "ERR_RATE_LIMITED",
      message: "Too many writes are waiting; retry after the time in Retry-After.",
    });
  });

  test("a body of another content type is 415 ERR_UNSUPPORTED_MEDIA_TYPE", async () => {
    const res = await app().app.request("/test/http/415");
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({
      success: false,
      statusCode: 415,
      error: "Unsupported Media Type",
      code: "ERR_UNSUPPORTED_MEDIA_TYPE",
      message: "Send the body as application/json.",
    });
  });

  test("a body that is not JSON is 422 ERR_INVALID_JSON with fieldName body", async () => {
    const res = await app().app.request("/test/http/400?message=Malformed%20JSON%20in%20request%20body");
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      success: false,
      statusCode: 422,
      error: "Unprocessable Entity",
      code: "ERR_INVALID_JSON",
      message: "The body is not valid JSON.",
      fieldName: "body",
    });
  });

  test("a form post that is not form data is 422 ERR_FORM_VALIDATION with fieldName body", async () => {
    const res = await app().app.request("/test/http/400?message=Malformed%20FormData%20request.");
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: "ERR_FORM_VALIDATION", message: "The body is not valid form data.", fieldName: "body" });
  });

  test("the words of that message elsewhere are still invalid JSON: it must start the message", async () => {
    const res = await app().app.request("/test/http/400?message=Bad%3A%20Malformed%20FormData");
    expect(await res.json()).toMatchObject({ code: "ERR_INVALID_JSON" });
  });

  test("any other framework error is a plain 500, whatever its message says", async () => {
    for (const path of ["/test/http/401?message=nope", "/test/http/401?message=Malformed%20FormData%20request."]) {
      const res = await app().app.request(path);
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ code: "ERR_INTERNAL" });
    }
  });

  test("an error of our own code that carries a status is not taken for the framework's: a plain 500", async () => {
    const res = await app().app.request("/test/status-400");
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ code: "ERR_INTERNAL", message: "Internal server error." });
  });

  test("an unexpected error is a plain 500 with no stack or SQL, logged with the request id and the cause", async () => {
    const { app: a, errors } = app();
    const res = await a.request("/test/crash");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ success: false, statusCode: 500, error: "Internal Server Error", code: "ERR_INTERNAL", message: "Internal server error." });
    for (const leak of ["SQLITE", "INSERT", "contacts", "at ", ".ts"]) expect(text).not.toContain(leak);
    expect(errors).toHaveLength(1);
    const [message, fields] = errors[0]!;
    expect(message).toBe("unhandled error");
    expect(fields.requestId).toBe(res.headers.get("x-request-id")!);
    expect(String(fields.error)).toContain("UNIQUE constraint failed");
    expect(String(fields.error)).toContain("errors.test.ts");
  });

  test("expected errors are not logged as unhandled", async () => {
    const { app: a, errors } = app();
    for (const path of ["/test/api-error", "/test/queue-full", "/test/http/415", "/test/http/400"]) await a.request(path);
    expect(errors).toEqual([]);
  });

  test("an unknown path is 404 with the envelope", async () => {
    for (const path of ["/nothing", "/v1/nothing", "/v1/contacts/CR-1/deeper/still"]) {
      const res = await app().app.request(path, authed);
      expect(res.status).toBe(404);
      expect(res.headers.get("allow")).toBeNull();
      expect(await res.json()).toEqual({ success: false, statusCode: 404, error: "Not Found", code: "ERR_NOT_FOUND", message: "No such resource." });
    }
  });

  test("a known path with another method is 405, and Allow lists the methods it takes", async () => {
    const res = await app().app.request("/v1/contacts", { method: "DELETE", ...authed });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")!.split(", ").sort()).toEqual(["GET", "POST", "PUT"]);
    expect(await res.json()).toEqual({
      success: false,
      statusCode: 405,
      error: "Method Not Allowed",
      code: "ERR_METHOD_NOT_ALLOWED",
      message: "DELETE is not allowed here.",
    });
  });

  test("path templates match one segment per parameter, with or without a trailing slash", async () => {
    const one = await app().app.request("/v1/contacts/CR-1", { method: "PUT", ...authed });
    expect(one.status).toBe(405);
    expect(one.headers.get("allow")!.split(", ").sort()).toEqual(["DELETE", "GET", "PATCH"]);
    const slash = await app().app.request("/v1/contacts/", { method: "DELETE", ...authed });
    expect(slash.status).toBe(405);
    const prefixed = await app().app.request("/v1/xcontacts", { method: "DELETE", ...authed });
    expect(prefixed.status).toBe(404);
  });
});
