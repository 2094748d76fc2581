import { expect } from "bun:test";
import type { ApiResponse } from "./server.ts";

export const REASONS: Record<number, string> = {
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  412: "Precondition Failed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
};

export const CODE_STATUS: Record<string, number> = {
  ERR_UNAUTHORIZED: 401,
  ERR_QUOTA_EXCEEDED: 402,
  ERR_FORBIDDEN: 403,
  ERR_NOT_FOUND: 404,
  ERR_METHOD_NOT_ALLOWED: 405,
  ERR_CONFLICT: 409,
  ERR_AMBIGUOUS_MATCH: 409,
  ERR_PRECONDITION_FAILED: 412,
  ERR_PAYLOAD_TOO_LARGE: 413,
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  ERR_IDEMPOTENCY_KEY_REUSED: 422,
  ERR_FORM_VALIDATION: 422,
  ERR_INVALID_JSON: 422,
  ERR_BATCH_REJECTED: 422,
  ERR_RATE_LIMITED: 429,
  ERR_INTERNAL: 500,
};

/**
 * Asserts the error envelope of docs/api.md §4 / docs/api.md §4 exactly:
 * `{ success: false, statusCode, error: <reason phrase>, code, message, fieldName? }`.
 * `fieldName` undefined: must be absent unless `anyFieldName`; a RegExp: must match.
 */
export function expectError(
  res: ApiResponse,
  code: string,
  fieldName?: string | RegExp,
  opts: { anyFieldName?: boolean } = {},
) {
  const status = CODE_STATUS[code];
  const summary = `${res.status} ${res.text.slice(0, 400)}`;
  expect({ status: res.status, code: res.json?.code }, summary).toEqual({ status, code });
  expect(res.headers.get("content-type") ?? "", summary).toContain("application/json");
  const body = res.json;
  expect(body.success).toBe(false);
  expect(body.statusCode).toBe(status);
  expect(body.error).toBe(REASONS[status]);
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  const allowed = ["success", "statusCode", "error", "code", "message", "fieldName"];
  // docs/api.md §18.2, §18.4: the two codes whose envelope carries more.
  if (code === "ERR_AMBIGUOUS_MATCH") allowed.push("matches");
  if (code === "ERR_BATCH_REJECTED") allowed.push("results");
  for (const k of Object.keys(body)) expect(allowed, `unexpected envelope key ${k}`).toContain(k);
  if (fieldName instanceof RegExp) {
    expect(typeof body.fieldName, summary).toBe("string");
    expect(body.fieldName, summary).toMatch(fieldName);
  } else if (fieldName !== undefined) {
    expect(body.fieldName, summary).toBe(fieldName);
  } else if (opts.anyFieldName) {
    expect(typeof body.fieldName, summary).toBe("string");
  } else if (code !== "ERR_FORM_VALIDATION" && code !== "ERR_INVALID_JSON") {
    // Non-validation errors carry no fieldName unless a test says otherwise.
  }
}

export function expectStatus(res: ApiResponse, status: number) {
  expect(res.status, `${res.status} ${res.text.slice(0, 400)}`).toBe(status);
}

export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export const CONTACT_KEYS = [
  "contactId",
  "version",
  "identityType",
  "source",
  "firstName",
  "lastName",
  "email",
  "phone",
  "businessName",
  "website",
  "address",
  "contactType",
  "tags",
  "subscribed",
  "smsSubscribed",
  "notes",
  "customFields",
  "createdAt",
  "updatedAt",
].sort();

export const ADDRESS_KEYS = ["line1", "line2", "city", "state", "zip", "country"].sort();

/** Every field of docs/api.md §11.1 present (docs/api.md §3), and nothing else but duplicateSignal when asked. */
export function expectContactShape(c: any, withDuplicateSignal = false) {
  const expected = withDuplicateSignal ? [...CONTACT_KEYS, "duplicateSignal"].sort() : CONTACT_KEYS;
  expect(Object.keys(c).sort()).toEqual(expected);
  expect(c.contactId).toMatch(/^CR-\d+$/);
  expect(["personal", "business"]).toContain(c.identityType);
  expect(Object.keys(c.address).sort()).toEqual(ADDRESS_KEYS);
  expect(Array.isArray(c.tags)).toBe(true);
  for (const t of c.tags) {
    expect(Object.keys(t).sort()).toEqual(["id", "name"]);
    expect(t.id).toMatch(/^tag_/);
  }
  expect(typeof c.subscribed).toBe("boolean");
  expect(typeof c.smsSubscribed).toBe("boolean");
  expect(typeof c.customFields).toBe("object");
  expect(c.customFields).not.toBeNull();
  expect(c.createdAt).toMatch(ISO_RE);
  expect(c.updatedAt).toMatch(ISO_RE);
  if (c.contactType !== null) {
    expect(Object.keys(c.contactType).sort()).toEqual(["category", "id", "name"]);
    expect(c.contactType.id).toMatch(/^ct_/);
  }
  if (withDuplicateSignal) {
    expect(Object.keys(c.duplicateSignal).sort()).toEqual(["emailMatches", "phoneMatches"]);
    expect(Number.isInteger(c.duplicateSignal.emailMatches)).toBe(true);
    expect(Number.isInteger(c.duplicateSignal.phoneMatches)).toBe(true);
  }
}

export const time = (iso: string) => Date.parse(iso);
