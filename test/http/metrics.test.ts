/**
 * Operations (docs/operations.md §4.2): /metrics in Prometheus text with the named series,
 * route templates (never raw paths or keys), and /readyz reporting the dispatcher. Every
 * count is checked as an exact difference between two reads around the test's own
 * requests: nothing else talks to this server meanwhile (a read of /metrics counts itself
 * after it answered, so it shows up in the next read as exactly one GET /metrics).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus } from "../helpers/expect.ts";
import { readMetrics, type MetricsSnapshot } from "../helpers/metrics.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

let server: ServerHandle;
let receiver: Receiver;

beforeAll(async () => {
  // Sandbox: subscriptions may point at the loopback receiver. A failed attempt waits an hour
  // for its retry, so it stays pending for the whole run.
  receiver = await startReceiver([
    { when: { path: "/fail" }, reply: { status: 500 } },
    { when: { path: "/gone" }, reply: { status: 410 } },
    { reply: { status: 200 } },
  ]);
  server = await startServer({ env: "sandbox", extraEnv: { CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_RETRY_SCHEDULE: "1h" } });
  // The contract check (test/helpers/contract.ts) reads the served document after the first
  // exchange: done here, so that read is not one of the requests a test counts.
  await server.api("GET", "/ping");
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await receiver?.stop();
});

const metrics = () => readMetrics(server.origin);
const requests = (m: MetricsSnapshot, method: string, route: string, status: string) => m.value("http_requests_total", { method, route, status }) ?? 0;

describe("/metrics", () => {
  test("needs no key and declares every series with HELP and TYPE", async () => {
    const res = await fetch(`${server.origin}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    for (const [name, type] of [
      ["http_requests_total", "counter"],
      ["http_request_duration_seconds", "histogram"],
      ["crm_outbox_pending", "gauge"],
      ["crm_webhook_deliveries_total", "counter"],
      ["crm_rate_limited_total", "counter"],
      ["crm_write_batches_total", "counter"],
      ["crm_write_batch_requests_total", "counter"],
    ]) {
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
      expect(text).toContain(`# HELP ${name} `);
    }
  });

  test("each request is counted once by method, route template and status", async () => {
    const p = await server.newProject();
    const before = await metrics();
    const created = await p.api("POST", "/contacts", { body: { firstName: "Metric" } });
    expectStatus(created, 201);
    expectStatus(await p.api("GET", `/contacts/${created.json.contactId}`), 200);
    expectStatus(await p.api("GET", `/contacts/${created.json.contactId}`), 200);
    expectStatus(await p.api("GET", "/contacts/CR-999999"), 404);
    const after = await metrics();
    const delta = (method: string, route: string, status: string) => requests(after, method, route, status) - requests(before, method, route, status);
    expect({
      create201: delta("POST", "/v1/contacts", "201"),
      get200: delta("GET", "/v1/contacts/:contactId", "200"),
      get404: delta("GET", "/v1/contacts/:contactId", "404"),
      metrics200: delta("GET", "/metrics", "200"),
    }).toEqual({ create201: 1, get200: 2, get404: 1, metrics200: 1 });
    // All requests of the interval, whatever their series: the five above, nothing else.
    expect(after.sum("http_requests_total") - before.sum("http_requests_total")).toBe(5);
    expect(after.text).not.toContain(created.json.contactId);
    expect(after.text).not.toContain("CR-999999");
  });

  test("the latency histogram counts every request once, in cumulative buckets ending in +Inf equal to the count", async () => {
    const p = await server.newProject();
    const labels = { method: "GET", route: "/v1/contact-types" };
    const before = await metrics();
    for (let i = 0; i < 3; i++) expectStatus(await p.api("GET", "/contact-types"), 200);
    const after = await metrics();
    expect((after.value("http_request_duration_seconds_count", labels) ?? 0) - (before.value("http_request_duration_seconds_count", labels) ?? 0)).toBe(3);
    expect(after.value("http_request_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(after.value("http_request_duration_seconds_count", labels)!);
    expect(after.value("http_request_duration_seconds_sum", labels)!).toBeGreaterThan(before.value("http_request_duration_seconds_sum", labels) ?? 0);
    const buckets = after.samples.filter((s) => s.name === "http_request_duration_seconds_bucket" && s.labels.method === "GET" && s.labels.route === labels.route);
    expect(buckets.map((b) => b.labels.le)).toEqual(["0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf"]);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
  });

  test("each 429 is counted in crm_rate_limited_total, and no key appears in the metrics", async () => {
    // One request a minute: 1 answered, 3 refused (a refill would take 60 s, longer than the test may run).
    const p = await server.newProject({ rateLimitPerMinute: 1 });
    const before = await metrics();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await p.api("GET", "/ping")).status);
    expect(statuses).toEqual([200, 429, 429, 429]);
    const after = await metrics();
    expect(after.value("crm_rate_limited_total")! - before.value("crm_rate_limited_total")!).toBe(3);
    expect(requests(after, "GET", "/v1/ping", "429") - requests(before, "GET", "/v1/ping", "429")).toBe(3);
    expect(requests(after, "GET", "/v1/ping", "200") - requests(before, "GET", "/v1/ping", "200")).toBe(1);
    expect(after.text).not.toMatch(/crm_(live|test)_/);
  });

  test("unmatched paths are one series, not one per path", async () => {
    const before = await metrics();
    expect((await fetch(`${server.origin}/no/such/path/abc123`)).status).toBe(404);
    expect((await fetch(`${server.origin}/another/unknown/def456`)).status).toBe(404);
    const after = await metrics();
    expect(after.text).not.toContain("abc123");
    expect(after.text).not.toContain("def456");
    expect(requests(after, "GET", "unmatched", "404") - requests(before, "GET", "unmatched", "404")).toBe(2);
  });

  test("the outbox depth is the number of pending deliveries, and each attempt's outcome is counted", async () => {
    const before = await metrics();
    expect(before.value("crm_outbox_pending")).toBe(0);
    const p = await server.newProject();
    const failing = await p.api("POST", "/webhooks", { body: { url: `http://127.0.0.1:${receiver.port}/fail`, events: ["contact.created"] } });
    expectStatus(failing, 201);
    const q = await server.newProject();
    const healthy = await q.api("POST", "/webhooks", { body: { url: `http://127.0.0.1:${receiver.port}/ok`, events: ["contact.created"] } });
    expectStatus(healthy, 201);
    for (let i = 0; i < 3; i++) expectStatus(await p.api("POST", "/contacts", { body: { firstName: `Pending ${i}` } }), 201);
    for (let i = 0; i < 2; i++) expectStatus(await q.api("POST", "/contacts", { body: { firstName: `Sent ${i}` } }), 201);
    const outcome = (m: MetricsSnapshot, o: string) => m.value("crm_webhook_deliveries_total", { outcome: o })! - before.value("crm_webhook_deliveries_total", { outcome: o })!;
    // Each of the five deliveries had its first attempt: three failed (retry in an hour), two succeeded.
    const after = await until(
      async () => {
        const m = await metrics();
        return outcome(m, "failed") + outcome(m, "succeeded") === 5 ? m : undefined;
      },
      { timeoutMs: 15_000, what: "five recorded delivery attempts" },
    );
    expect({ failed: outcome(after, "failed"), succeeded: outcome(after, "succeeded"), exhausted: outcome(after, "exhausted") }).toEqual({
      failed: 3,
      succeeded: 2,
      exhausted: 0,
    });
    expect(after.value("crm_outbox_pending")).toBe(3);
    expect(receiver.requests.filter((r) => r.path === "/fail")).toHaveLength(3);
    expect(receiver.requests.filter((r) => r.path === "/ok")).toHaveLength(2);

    // A 410 ends a delivery at once (docs/webhooks.md §4): exhausted, and no longer pending.
    const r = await server.newProject();
    expectStatus(await r.api("POST", "/webhooks", { body: { url: `http://127.0.0.1:${receiver.port}/gone`, events: ["contact.created"] } }), 201);
    expectStatus(await r.api("POST", "/contacts", { body: { firstName: "Gone" } }), 201);
    const gone = await until(
      async () => {
        const m = await metrics();
        return outcome(m, "exhausted") === 1 ? m : undefined;
      },
      { timeoutMs: 15_000, what: "the 410 attempt to be recorded" },
    );
    expect(gone.value("crm_outbox_pending")).toBe(3);
    expect({ failed: outcome(gone, "failed"), succeeded: outcome(gone, "succeeded") }).toEqual({ failed: 3, succeeded: 2 });
  }, 30_000);
});

describe("/readyz", () => {
  test("is 200 {status: ready} when the database answers, migrations are applied and the dispatcher runs", async () => {
    const res = await fetch(`${server.origin}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"status":"ready"}');
  });
});
