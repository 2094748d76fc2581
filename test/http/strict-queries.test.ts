/**
 * Strict input the document states (docs/api.md §3.3, §3.4), black box through the service
 * started in-process (SQLite, or PostgreSQL under CRM_TEST_BACKEND=postgres): an unknown
 * query parameter on any operation of the served document is 422 naming it and the valid
 * ones, after the key, the rate limit and the scope (docs/api.md §3.2); query integers are
 * plain digits; input timestamps carry an offset or are a date alone; a route without a
 * requestBody refuses a body; email and URLs are what `format: email` / `format: uri` allow.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { inProcessService, scenarios } from "../helpers/scenarios.ts";

const svc = inProcessService();
let contactId: string;
let webhookId: string;
let formId: string;
let readOnlyKey: string;

/** A public address literal: a production server accepts it without a DNS lookup. */
const HOOK_URL = "https://93.184.216.34/crm-hook";
const LIST_CONTACTS_PARAMETERS = "email, phone, contactTypeId, contactTypeCategory, tag, updatedSince, search, sort, limit, cursor";

beforeAll(async () => {
  const { api, server, project } = svc();
  const contact = await api("POST", "/contacts", { body: { firstName: "Strict" } });
  expectStatus(contact, 201);
  contactId = contact.json.contactId;
  const hook = await api("POST", "/webhooks", { body: { url: HOOK_URL, events: ["*"] } });
  expectStatus(hook, 201);
  webhookId = hook.json.id;
  formId = (await server.cli(["form", "create", "--project", project.id, "--name", "Strict", "--fields", "email,firstName"])).id;
  readOnlyKey = (await server.cli(["key", "create", "--project", project.id, "--scopes", "contacts:read"])).key;
}, 60_000);

describe("an unknown query parameter on every operation of the served document is 422 (docs/api.md §3.3)", () => {
  test("each operation names the parameter and the ones it takes", async () => {
    const { api, origin } = svc();
    const document = (await api("GET", "/openapi.json")).json;
    const failures: string[] = [];
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths) as [string, any][]) {
      for (const [method, operation] of Object.entries(item) as [string, any][]) {
        const url = path.replace("{contactId}", contactId).replace("{id}", webhookId).replace("{formId}", formId);
        const names = (operation.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name);
        const body = operation.requestBody ? { rawBody: "{}", headers: { "Content-Type": "application/json" } } : {};
        const res = await api(method.toUpperCase(), `${origin}/v1${url}?zzz=1`, body);
        const takes = names.length > 0 ? `this operation takes ${names.join(", ")}` : "this operation takes no query parameters";
        const message = `Unknown query parameter zzz; ${takes}.`;
        checked++;
        if (res.status !== 422 || res.json?.fieldName !== "zzz" || res.json?.message !== message) {
          failures.push(`${method.toUpperCase()} ${path}: ${res.status} ${res.text.slice(0, 200)} (wanted "${message}")`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});

scenarios("strict queries (docs/api.md §3.3)", svc, [
  {
    name: "GET /contacts?sort= takes updatedAt or relevance only (docs/api.md §11.6)",
    method: "GET",
    path: "/contacts",
    query: { search: "vip", sort: "name" },
    status: 422,
    error: { code: "ERR_FORM_VALIDATION", fieldName: "sort" },
  },
  ...["tags", "q", "page"].map((name) => ({
    name: `GET /contacts?${name}= is 422 ${name}, naming the filters it takes`,
    method: "GET",
    path: "/contacts",
    query: { [name]: name === "page" ? "2" : "vip" },
    status: 422,
    error: { code: "ERR_FORM_VALIDATION", fieldName: name, message: `Unknown query parameter ${name}; this operation takes ${LIST_CONTACTS_PARAMETERS}.` },
  })),
  {
    name: "GET /contacts/{contactId} takes no query parameters",
    method: "GET",
    path: () => `/contacts/${contactId}`,
    query: { expand: "tags" },
    status: 422,
    error: { code: "ERR_FORM_VALIDATION", fieldName: "expand", message: "Unknown query parameter expand; this operation takes no query parameters." },
  },
  {
    name: "a web-form submission takes no query parameters",
    method: "POST",
    path: () => `/forms/${formId}/submissions`,
    query: { utm_source: "x" },
    body: { email: "form@example.com" },
    key: null,
    status: 422,
    error: { code: "ERR_FORM_VALIDATION", fieldName: "utm_source" },
  },
  { name: "a repeated limit is 422 limit", method: "GET", path: "/contacts", query: { limit: [5, 6] }, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "limit", message: "limit must be given once." } },
  { name: "a repeated email is 422 email", method: "GET", path: "/contacts", query: { email: ["a@example.com", "b@example.com"] }, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "email" } },
  { name: "a repeated tag is a filter", method: "GET", path: "/contacts", query: { tag: ["a", "b"] }, status: 200 },
  { name: "without a key, an unknown parameter is 401 first", method: "GET", path: "/contacts", query: { q: "x" }, key: null, status: 401, error: { code: "ERR_UNAUTHORIZED" } },
  { name: "without the scope, an unknown parameter is 403 first", method: "POST", path: "/contacts", query: { q: "x" }, body: { firstName: "A" }, key: () => readOnlyKey, status: 403, error: { code: "ERR_FORBIDDEN" } },
  { name: "a body that is not JSON is 422 ERR_INVALID_JSON before an unknown parameter", method: "POST", path: "/contacts", query: { q: "x" }, rawBody: "{", headers: { "Content-Type": "application/json" }, status: 422, error: { code: "ERR_INVALID_JSON", fieldName: "body" } },
]);

scenarios("query integers are plain digits (docs/api.md §3.3, §5)", svc, [
  ...["1e1", "05", "5.0", "+5", " 5", "5 ", "0x5", "", "-1", "0", "201"].map((limit) => ({
    name: `limit=${JSON.stringify(limit)} is 422 limit`,
    method: "GET",
    path: "/contacts",
    query: { limit },
    status: 422,
    error: { code: "ERR_FORM_VALIDATION", fieldName: "limit", message: "limit must be an integer from 1 to 200." },
  })),
  { name: "limit=5 is a page of 5", method: "GET", path: "/events", query: { limit: "5" }, status: 200 },
  { name: "limit=200 is the largest page", method: "GET", path: "/tags", query: { limit: "200" }, status: 200 },
]);

scenarios("input timestamps: a date-time with its offset, or a date (docs/api.md §3.4)", svc, [
  ...["2020-01-01", "2020-01-01T10:00:00Z", "2020-01-01T10:00:00.5+02:00", "2020-01-01t10:00:00z"].map((updatedSince) => ({
    name: `updatedSince=${updatedSince} is taken`,
    method: "GET",
    path: "/contacts",
    query: { updatedSince },
    status: 200,
  })),
  ...["2020-01-01T10:00:00", "2020-01-01T10:00", "2020-01-01T10:00Z", "2020-02-30", "20200101"].map((since) => ({
    name: `since=${since} is 422 since`,
    method: "GET",
    path: "/events",
    query: { since },
    status: 422,
    error: { code: "ERR_FORM_VALIDATION", fieldName: "since" },
  })),
  {
    name: "an interaction date without an offset is 422 date",
    method: "POST",
    path: () => `/contacts/${contactId}/interactions`,
    body: { type: "note", note: "n", date: "2024-05-01T10:00:00" },
    status: 422,
    error: { code: "ERR_FORM_VALIDATION", fieldName: "date" },
  },
  {
    name: "an interaction date alone is its midnight UTC",
    method: "POST",
    path: () => `/contacts/${contactId}/interactions`,
    body: { type: "note", note: "n", date: "2024-05-01" },
    status: 201,
    expect: (res) => expect(res.json.date).toBe("2024-05-01T00:00:00.000Z"),
  },
]);

scenarios("formats as the document states them (docs/api.md §7.2, §7.4)", svc, [
  { name: "an email ajv-formats refuses is 422", method: "POST", path: "/contacts", body: { email: "ada.@example.com" }, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "email" } },
  { name: "a website with a space is 422", method: "POST", path: "/contacts", body: { firstName: "W", website: "https://example.com/a b" }, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "website" } },
  { name: "a webhook url with a space is 422", method: "POST", path: "/webhooks", body: { url: "https://93.184.216.34/a b", events: ["*"] }, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "url", message: "url is not a valid URL." } },
]);

describe("a route without a requestBody refuses a body (docs/api.md §3.3)", () => {
  test.each(["rotate-secret", "test"])("POST /webhooks/{id}/%s: empty is fine, {} is 422 body", async (action) => {
    const { api } = svc();
    const refused = await api("POST", `/webhooks/${webhookId}/${action}`, { body: {} });
    expectError(refused, "ERR_FORM_VALIDATION", "body");
    expect(refused.json.message).toBe("This operation takes no body.");
    const text = await api("POST", `/webhooks/${webhookId}/${action}`, { rawBody: "x", headers: { "Content-Type": "text/plain" } });
    expectError(text, "ERR_FORM_VALIDATION", "body");
    if (action === "rotate-secret") expectStatus(await api("POST", `/webhooks/${webhookId}/${action}`), 200);
  });

  test("DELETE /webhooks/{id} with a body is 422 body; 1.2 MB to /test is 413", async () => {
    const { api } = svc();
    expectError(await api("DELETE", `/webhooks/${webhookId}`, { body: { really: true } }), "ERR_FORM_VALIDATION", "body");
    const big = JSON.stringify({ pad: "x".repeat(1_200_000) });
    expectError(await api("POST", `/webhooks/${webhookId}/test`, { rawBody: big, headers: { "Content-Type": "application/json" } }), "ERR_PAYLOAD_TOO_LARGE");
  });
});

describe("the failed-authentication limit's 429 (docs/api.md §2.3)", () => {
  test("carries RateLimit headers describing 30 failures a minute", async () => {
    const { api } = svc();
    let res = await api("GET", "/ping", { key: "crm_live_wrong" });
    for (let i = 0; i < 40 && res.status !== 429; i++) res = await api("GET", "/ping", { key: "crm_live_wrong" });
    expectError(res, "ERR_RATE_LIMITED");
    expect(res.headers.get("ratelimit-limit")).toBe("30");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    const reset = Number(res.headers.get("ratelimit-reset"));
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(60);
    expect(res.headers.get("retry-after")).toBe(String(reset));
    expect(res.headers.get("ratelimit-policy")).toBe('"failed-authentications";q=30;w=60');
    expect(res.headers.get("ratelimit")).toBe(`"failed-authentications";r=0;t=${reset}`);
  });
});
