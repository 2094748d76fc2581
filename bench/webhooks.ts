/**
 * Webhook delivery figures (issue 4); `npm run bench` (bench/run.ts) runs this file as a child
 * and folds the BENCH_JSON line it prints into its table and bench/RESULTS.md:
 * - deliveries/s: a backlog of events is queued at once (redeliver) to 8 subscriptions of a
 *   loopback receiver that answers 200 at once; the rate is deliveries over the time until
 *   the last one arrived;
 * - event→delivery latency: contacts created one at a time (40/s); the time from the 201
 *   answer to the delivery's arrival at the receiver, p50/p95.
 * - the server's peak VmRSS over the whole run (bench/rss.ts).
 * The real server runs in sandbox mode (loopback receivers allowed); only 127.0.0.1.
 *
 *   bun bench/webhooks.ts      (alone: prints the figures; npm run bench:webhooks)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sampleRss } from "./rss.ts";

const ROOT = resolve(import.meta.dir, "..");
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1500);
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 8);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 200);
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-wh-"));
const log = (msg: string) => console.log(`[bench:webhooks] ${msg}`);
const hardStop = setTimeout(() => (console.error("[bench:webhooks] time limit"), cleanup(), process.exit(1)), 10 * 60_000);

const arrivals = new Map<string, number>();
let received = 0;
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const body = await request.text();
    received++;
    const id = JSON.parse(body).id as string;
    if (!arrivals.has(id)) arrivals.set(id, performance.now());
    return new Response("ok");
  },
});

const port = (() => {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
})();
const server = Bun.spawn([process.execPath, ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []), "src/main.ts", "serve"], {
  cwd: ROOT,
  env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", CRM_DB_PATH: join(tmp, "crm.db"), CRM_ENV: "sandbox", CRM_LOG_LEVEL: "warn" },
  stdout: "pipe",
  stderr: "inherit",
});
const rss = sampleRss(server.pid, 100);
function cleanup() {
  rss.stop();
  server.kill(process.env.BENCH_CPU_PROF ? "SIGTERM" : "SIGKILL");
  receiver.stop(true);
  rmSync(tmp, { recursive: true, force: true });
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

try {
  let out = "";
  const reader = server.stdout.getReader();
  while (!/crm_test_\w{46}/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  const key = out.match(/crm_test_\w{46}/)![0];
  const base = `http://127.0.0.1:${port}/v1`;
  for (let i = 0; i < 200; i++) {
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) break;
    await Bun.sleep(50);
  }
  const projectId = (await (await fetch(`${base}/ping`, { headers: { Authorization: `Bearer ${key}` } })).json()).projectId;
  Bun.spawnSync([process.execPath, "src/main.ts", "project", "update", projectId, "--rate-limit-per-minute", "100000000", "--contact-creates-per-hour", "100000000"], {
    cwd: ROOT,
    env: { ...process.env, CRM_DB_PATH: join(tmp, "crm.db") },
  });
  await Bun.sleep(1500);
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };

  // 1. Throughput: events recorded while the subscriptions are disabled, then queued at once.
  const hooks: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const hook = await api("POST", "/webhooks", { url: `http://127.0.0.1:${receiver.port}/h${i}`, events: ["*"] });
    await api("PATCH", `/webhooks/${hook.id}`, { status: "disabled" });
    hooks.push(hook.id);
  }
  const since = new Date(Date.now() - 1000).toISOString();
  log(`recording ${EVENTS} events…`);
  for (let i = 0; i < EVENTS; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, EVENTS - i) }, (_, j) => api("POST", "/contacts", { firstName: `W${i + j}` })));
  }
  for (const id of hooks) await api("PATCH", `/webhooks/${id}`, { status: "active" });
  received = 0;
  const total = EVENTS * SUBSCRIPTIONS;
  const started = performance.now();
  for (const id of hooks) await api("POST", `/webhooks/${id}/redeliver`, { since });
  while (received < total && performance.now() - started < 120_000) await Bun.sleep(5);
  const seconds = (performance.now() - started) / 1000;
  const delivered = received;
  const rate = delivered / seconds;
  log(`${delivered}/${total} deliveries in ${seconds.toFixed(2)} s = ${Math.round(rate)} deliveries/s`);

  // 2. Latency: one subscription, one contact at a time.
  for (const id of hooks.slice(1)) await api("DELETE", `/webhooks/${id}`);
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const res = await fetch(`${base}/contacts`, { method: "POST", headers, body: JSON.stringify({ firstName: `L${i}` }) });
    const acknowledged = performance.now();
    const contactId = (await res.json()).contactId as string;
    const events = await api("GET", `/events?since=${encodeURIComponent(new Date(Date.now() - 5000).toISOString())}&limit=200`);
    const event = (events.data as Array<{ id: string; data: { contact?: { contactId: string } } }>).find((e) => e.data.contact?.contactId === contactId)!;
    const deadline = performance.now() + 5000;
    while (!arrivals.has(event.id) && performance.now() < deadline) await Bun.sleep(1);
    latencies.push(arrivals.get(event.id)! - acknowledged);
    await Bun.sleep(25);
  }
  const p50 = percentile(latencies, 50);
  const p95 = percentile(latencies, 95);
  const p99 = percentile(latencies, 99);
  log(`event→delivery after the 201: p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (${latencies.length} samples)`);

  const result = {
    events: EVENTS,
    subscriptions: SUBSCRIPTIONS,
    delivered,
    total,
    seconds,
    deliveriesPerSecond: rate,
    latencySamples: latencies.length,
    latencyP50Ms: p50,
    latencyP95Ms: p95,
    latencyP99Ms: p99,
    maxRssKb: rss.overall(),
  };
  console.log(`BENCH_JSON ${JSON.stringify(result)}`);
  log(`deliveries/s ${Math.round(rate)} (target ≥ 2,000/s: ${rate >= 2000 ? "PASS" : "MISS"}); ` +
    `event→delivery p50 ${p50.toFixed(2)} ms; server peak RSS ${(result.maxRssKb / 1024).toFixed(1)} MB`);
} finally {
  clearTimeout(hardStop);
  cleanup();
}
