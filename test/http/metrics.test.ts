/**
 * Operations (decisions §11, §12): /metrics in Prometheus text with the named series,
 * route templates (never raw paths or keys), and /readyz reporting the dispatcher.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let key: string;

beforeAll(async () => {
  server = await startServer();
  const project = await server.newProject({ rateLimitPerMinute: 2 });
  key = project.key;
}, 60_000);
afterAll(() => server.stop());

const metrics = async () => {
  const res = await fetch(`${server.origin}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return res.text();
};

const sample = (text: string, name: string, labels: Record<string, string>) => {
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.split(" ").pop());
};

describe("/metrics", () => {
  test("needs no key and declares every series with HELP and TYPE", async () => {
    const text = await metrics();
    for (const [name, type] of [
      ["http_requests_total", "counter"],
      ["http_request_duration_seconds", "histogram"],
      ["crm_outbox_pending", "gauge"],
      ["crm_webhook_deliveries_total", "counter"],
      ["crm_rate_limited_total", "counter"],
    ]) {
      expect(text).toContain(`# TYPE ${name} ${type}`);
      expect(text).toContain(`# HELP ${name} `);
    }
  });

  test("requests are counted by method, route template and status", async () => {
    const created = await server.api("POST", "/contacts", { body: { firstName: "Metric" } });
    await server.api("GET", `/contacts/${created.json.contactId}`);
    await server.api("GET", "/contacts/CR-999999");
    const text = await metrics();
    expect(sample(text, "http_requests_total", { method: "GET", route: "/v1/contacts/:contactId", status: "200" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "http_requests_total", { method: "GET", route: "/v1/contacts/:contactId", status: "404" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "http_requests_total", { method: "POST", route: "/v1/contacts", status: "201" })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(created.json.contactId);
  });

  test("the latency histogram has cumulative buckets ending in +Inf equal to the count", async () => {
    const text = await metrics();
    const labels = { method: "GET", route: "/v1/contacts/:contactId" };
    const inf = sample(text, "http_request_duration_seconds_bucket", { ...labels, le: "+Inf" })!;
    const count = sample(text, "http_request_duration_seconds_count", labels)!;
    expect(inf).toBe(count);
    const buckets = text
      .split("\n")
      .filter((l) => l.startsWith("http_request_duration_seconds_bucket{") && l.includes('route="/v1/contacts/:contactId"') && l.includes('method="GET"'))
      .map((l) => Number(l.split(" ").pop()));
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!).toBeGreaterThanOrEqual(buckets[i - 1]!);
  });

  test("rate-limit rejections are counted, and no key appears in the metrics", async () => {
    const before = sample(await metrics(), "crm_rate_limited_total", {}) ?? Number((await metrics()).match(/^crm_rate_limited_total (\d+)/m)![1]);
    for (let i = 0; i < 4; i++) await server.api("GET", "/ping", { key });
    const text = await metrics();
    const after = Number(text.match(/^crm_rate_limited_total (\d+)/m)![1]);
    expect(after).toBeGreaterThanOrEqual((before ?? 0) + 2);
    expect(text).not.toMatch(/crm_(live|test)_/);
  });

  test("unmatched paths are one series, not one per path", async () => {
    await fetch(`${server.origin}/no/such/path/abc123`);
    const text = await metrics();
    expect(text).not.toContain("abc123");
    expect(sample(text, "http_requests_total", { route: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1);
  });

  test("the outbox depth is a number", async () => {
    expect(Number((await metrics()).match(/^crm_outbox_pending (\d+)/m)![1])).toBeGreaterThanOrEqual(0);
  });
});

describe("/readyz", () => {
  test("is ready when the database answers, migrations are applied and the dispatcher runs", async () => {
    const res = await fetch(`${server.origin}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready" });
  });
});
