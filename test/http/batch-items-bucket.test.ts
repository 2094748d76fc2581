/**
 * The batch-items bucket (docs/api.md §18.4, §6), black box: a batch is one request of the
 * minute bucket and its items take tokens from the key's hourly items bucket (the project's
 * batchItemsPerHour, `crm project create|update --batch-items-per-hour`), shared by POST
 * /contacts/batch and POST /interactions/batch; the RateLimit headers on those routes
 * describe it; too few tokens is 429 with Retry-After and nothing written; batch creates
 * take nothing of the creates-per-hour bucket. Each test has its own project and key, so
 * its buckets are its own. One server for the file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, type ApiResponse, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer();
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

let projects = 0;

/** A project made by the CLI with these limits, its JSON, and requests with one every-scope key of it. */
async function project(limits: Record<string, number>) {
  const args = ["project", "create", "--name", `batch-items-${++projects}`, "--json"];
  for (const [flag, value] of Object.entries(limits)) args.push(`--${flag}`, String(value));
  const json = await srv.cli(args);
  const key = (await srv.createKey({ scopes: ["contacts:read", "contacts:write", "interactions:write"], projectId: json.id })).key;
  const api = (method: string, path: string, body?: unknown) => srv.api(method, path, { key, body });
  return { json, key, api };
}

const people = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ firstName: `${tag}${i}`, email: `${tag}${i}-${projects}@example.com` }));

const headersOf = (res: ApiResponse) => ({
  limit: res.headers.get("ratelimit-limit"),
  remaining: res.headers.get("ratelimit-remaining"),
  policy: res.headers.get("ratelimit-policy"),
  ietf: res.headers.get("ratelimit"),
});

describe("the project's setting", () => {
  test("a project has 60,000 batch items an hour unless given; the CLI sets and changes it, and project JSON shows it", async () => {
    const plain = await srv.cli(["project", "create", "--name", "batch-items-default", "--json"]);
    expect(plain.batchItemsPerHour).toBe(60000);
    const { json } = await project({ "batch-items-per-hour": 5 });
    expect(json.batchItemsPerHour).toBe(5);
    const updated = await srv.cli(["project", "update", json.id, "--batch-items-per-hour", "7", "--json"]);
    expect(updated).toMatchObject({ id: json.id, batchItemsPerHour: 7 });
    expect((await srv.cli(["project", "list", "--json"])).data.find((p: any) => p.id === json.id).batchItemsPerHour).toBe(7);
  });

  test.each(["0", "1.5", "many"])("--batch-items-per-hour %s is a usage error (exit 2)", async (value) => {
    const r = await srv.cliRaw(["project", "create", "--name", "bad-batch-items", "--batch-items-per-hour", value, "--json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("--batch-items-per-hour must be an integer ≥ 1");
  });
});

describe("items take tokens from one bucket per key, which the batch routes' headers describe", () => {
  test("a batch of 3 out of 5: 200, RateLimit-* describe the items bucket (limit 5, 2 left, an hourly policy)", async () => {
    const { api } = await project({ "batch-items-per-hour": 5 });
    const res = await api("POST", "/contacts/batch", { operation: "create", items: people(3, "h") });
    expectStatus(res, 200);
    expect(headersOf(res)).toEqual({ limit: "5", remaining: "2", policy: '"batch-items";q=5;w=3600', ietf: expect.stringMatching(/^"batch-items";r=2;t=\d+$/) });
    // 3 of 5 tokens spent at 5 an hour: full again in 3 × 720 s.
    const reset = Number(res.headers.get("ratelimit-reset"));
    expect(reset).toBeGreaterThanOrEqual(2150);
    expect(reset).toBeLessThanOrEqual(2160);
    // Other routes still describe the minute bucket.
    expect(headersOf(await api("GET", "/ping"))).toMatchObject({ limit: "120", policy: '"minute";q=120;w=60' });
  });

  test("both batch routes take from the same bucket; too few tokens is 429 with Retry-After, nothing taken, nothing written", async () => {
    const { api } = await project({ "batch-items-per-hour": 5 });
    const made = await api("POST", "/contacts/batch", { operation: "create", items: people(3, "s") });
    expectStatus(made, 200);
    const contactId = made.json.results[0].contactId;
    const logs = (n: number) => ({ items: Array.from({ length: n }, (_, i) => ({ contactId, type: "note", note: `n${i}` })) });

    // 2 left, 3 asked: refused by the interactions route, from the bucket the contacts route spent.
    const refused = await api("POST", "/interactions/batch", logs(3));
    expectError(refused, "ERR_RATE_LIMITED");
    expect(headersOf(refused)).toMatchObject({ limit: "5", remaining: "2", policy: '"batch-items";q=5;w=3600' });
    // One more token is needed: 720 s at 5 an hour (a little less, as the bucket refills meanwhile).
    const retry = Number(refused.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(700);
    expect(retry).toBeLessThanOrEqual(720);
    expect((await api("GET", `/contacts/${contactId}/interactions`)).json.data).toEqual([]);

    // The refusal took nothing: a batch of 2 passes and leaves none.
    const fits = await api("POST", "/interactions/batch", logs(2));
    expectStatus(fits, 200);
    expect(fits.json.summary.created).toBe(2);
    expect(headersOf(fits)).toMatchObject({ limit: "5", remaining: "0" });

    // Empty now: a contact batch is refused too, and writes no contact.
    const before = (await api("GET", "/contacts")).json.data.length;
    const empty = await api("POST", "/contacts/batch", { operation: "create", items: people(1, "late") });
    expectError(empty, "ERR_RATE_LIMITED");
    expect(empty.headers.get("ratelimit-remaining")).toBe("0");
    expect((await api("GET", "/contacts")).json.data.length).toBe(before);
  });

  test("a batch larger than the bucket can never pass: 429 with Retry-After until the bucket is full, and a message saying to split it", async () => {
    const { api } = await project({ "batch-items-per-hour": 4 });
    const res = await api("POST", "/contacts/batch", { operation: "create", items: people(5, "big") });
    expectError(res, "ERR_RATE_LIMITED");
    expect(res.json.message).toContain("split it into smaller batches");
    expect(headersOf(res)).toMatchObject({ limit: "4", remaining: "4" });
    // Full already: Retry-After is its least, 1 s; RateLimit-Reset 0.
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("ratelimit-reset")).toBe("0");
    expect((await api("GET", "/contacts")).json.data).toEqual([]);
  });

  test("a body that does not validate takes no tokens (the 422 describes the minute bucket)", async () => {
    const { api } = await project({ "batch-items-per-hour": 3 });
    const bad = await api("POST", "/contacts/batch", { operation: "create", items: [] });
    expectError(bad, "ERR_FORM_VALIDATION", "items");
    expect(headersOf(bad)).toMatchObject({ policy: '"minute";q=120;w=60' });
    const ok = await api("POST", "/contacts/batch", { operation: "create", items: people(3, "v") });
    expectStatus(ok, 200);
    expect(headersOf(ok)).toMatchObject({ limit: "3", remaining: "0" });
  });
});

describe("the other buckets", () => {
  test("a batch is one request of the minute bucket", async () => {
    const { api } = await project({ "rate-limit-per-minute": 3 });
    expect((await api("GET", "/ping")).headers.get("ratelimit-remaining")).toBe("2");
    expectStatus(await api("POST", "/contacts/batch", { operation: "create", items: people(5, "m") }), 200);
    expect((await api("GET", "/ping")).headers.get("ratelimit-remaining")).toBe("0");
    const refused = await api("POST", "/contacts/batch", { operation: "create", items: people(1, "m2") });
    expectError(refused, "ERR_RATE_LIMITED");
    // Refused by the minute bucket before the items were counted: its headers, and its Retry-After.
    expect(headersOf(refused)).toMatchObject({ limit: "3", policy: '"minute";q=3;w=60' });
  });

  test("batch creates take nothing of the creates-per-hour bucket", async () => {
    const { api } = await project({ "contact-creates-per-hour": 1 });
    const res = await api("POST", "/contacts/batch", { operation: "create", items: people(3, "c") });
    expectStatus(res, 200);
    expect(res.json.summary.created).toBe(3);
    // The one create token is still there for POST /contacts.
    const single = await api("POST", "/contacts", { firstName: "Single" });
    expectStatus(single, 201);
    expect(single.headers.get("ratelimit-policy")).toBe('"contact-creates";q=1;w=3600');
    expect(single.headers.get("ratelimit-remaining")).toBe("0");
  });

  test("a changed setting applies to the key's bucket within 2 s, keeping the tokens spent", async () => {
    const { json, api } = await project({ "batch-items-per-hour": 5 });
    expectStatus(await api("POST", "/contacts/batch", { operation: "create", items: people(2, "u") }), 200);
    await srv.cli(["project", "update", json.id, "--batch-items-per-hour", "100", "--json"]);
    const res = await until(
      async () => {
        const r = await api("POST", "/contacts/batch", { operation: "create", items: people(1, `u${Date.now()}`) });
        return r.headers.get("ratelimit-limit") === "100" ? r : undefined;
      },
      { timeoutMs: 2_500, intervalMs: 250, what: "the new batch-items limit in the headers" },
    );
    expectStatus(res, 200);
    // 100 less the 2 of the first batch, the polls that still saw 5, and this one.
    expect(Number(res.headers.get("ratelimit-remaining"))).toBeLessThanOrEqual(97);
    expect(Number(res.headers.get("ratelimit-remaining"))).toBeGreaterThanOrEqual(90);
  });
});

describe("the console's project page", () => {
  test("shows batch items per hour, saves a new value (the CLI sees it), and refuses one below 1 at the field", async () => {
    const { signedInAdmin, tableRows } = await import("../helpers/admin.ts");
    const admin = (await signedInAdmin(srv.origin, srv.env)).client;
    const { json } = await project({});
    const path = `/admin/projects/${json.id}/settings`;
    const page = await admin.get(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="f-batchItemsPerHour">Batch items per hour</label>');
    expect(page.text).toMatch(/id="f-batchItemsPerHour" name="batchItemsPerHour" type="text" value="60000"/);
    const list = tableRows((await admin.get("/admin/projects")).text, "Projects").find((r) => r[1] === json.id)!;
    expect(list[3]).toContain("60,000 batch items/h");

    const form = { name: json.name, contactQuota: "", rateLimitPerMinute: "120", contactCreatesPerHour: "600" };
    const saved = await admin.post(path, { ...form, batchItemsPerHour: "250" });
    expect(saved.status).toBe(303);
    expect((await srv.cli(["project", "list", "--json"])).data.find((p: any) => p.id === json.id).batchItemsPerHour).toBe(250);

    const refused = await admin.post(path, { ...form, batchItemsPerHour: "0" });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('id="f-batchItemsPerHour-error">Batch items per hour must be a whole number from 1 to 1,000,000,000.</p>');
    expect((await srv.cli(["project", "list", "--json"])).data.find((p: any) => p.id === json.id).batchItemsPerHour).toBe(250);
  });
});
