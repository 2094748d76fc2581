/**
 * Webhook delivery figures (issue 10); `npm run bench` (bench/run.ts) runs this file as a
 * child and folds the BENCH_JSON line it prints into its table and bench/RESULTS.md. The real
 * server runs in sandbox mode (loopback receivers allowed); data comes through the API.
 * 1. deliveries/s with one subscription while creates run at full speed: a backlog of
 *    events (recorded while the subscription was disabled, then queued by redeliver) drains
 *    to a loopback receiver answering 200 at once, while 16 connections create contacts;
 *    every delivery (backlog and live) over the time until the backlog is gone.
 * 2. event→delivery under the same create load, no backlog: from the event's createdAt to
 *    its arrival at the receiver (same machine, same clock), p50/p95.
 * 3. fairness: project A has 16 subscriptions on a receiver that answers after 5 s and keeps
 *    firing events; project B's one healthy subscription's event→delivery, p50/max.
 * The server's peak VmRSS over the whole run (bench/harness/rss.ts). Server, receiver and CLI
 * come from bench/harness/.
 *
 *   bun bench/webhooks.ts      (alone: prints the figures; npm run bench:webhooks)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, Children, crmCli, guard, startServer } from "./harness/process.ts";
import { startReceiver } from "./harness/receiver.ts";
import { percentile } from "./harness/report.ts";
import { sampleRss } from "./harness/rss.ts";

const BACKLOG = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const CREATORS = Number(process.env.BENCH_WEBHOOK_CREATORS ?? 16);
const LIVE_SECONDS = Number(process.env.BENCH_WEBHOOK_LIVE_SECONDS ?? 8);
const SLOW_SUBSCRIPTIONS = 16;
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-wh-"));
const dbPath = join(tmp, "crm.db");
const log = (msg: string) => console.log(`[bench:webhooks] ${msg}`);
const children = new Children();
const cleanup = () => {
  children.killAll();
  rmSync(tmp, { recursive: true, force: true });
};
const limit = guard({ label: "bench:webhooks", limitMs: 10 * 60_000, cleanup });

/** The receiver runs in its own process (bench/harness/receiver.ts), so its answers never wait on this one. */
const receiver = await startReceiver({ children });
const { arrivals, sync } = receiver;
const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const server = await startServer({
  cmd: [BUN, ...profile, "src/main.ts", "serve"],
  env: { CRM_DB_PATH: dbPath, CRM_ENV: "sandbox", CRM_LOG_LEVEL: "error" },
  stdout: "capture",
  children,
});
const port = server.port;
const rss = sampleRss(server.proc.pid, 100);
const base = `http://127.0.0.1:${port}/v1`;
const cli = crmCli({ CRM_DB_PATH: dbPath, CRM_ENV: "sandbox" });

/** A project with limits out of the way and a request function on its key. */
function project(name: string) {
  const p = cli(["project", "create", "--name", name, "--rate-limit-per-minute", "100000000", "--contact-creates-per-hour", "100000000"]);
  const { key } = cli(["key", "create", "--project", p.id, "--scopes", "contacts:read,contacts:write,interactions:write,webhooks:manage"]);
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };
}
type Api = ReturnType<typeof project>;

/** `CREATORS` connections creating contacts back to back until `stop()`; resolves with the count. */
function createAtFullSpeed(api: Api, tag: string) {
  let running = true;
  let created = 0;
  const workers = Array.from({ length: CREATORS }, async (_, w) => {
    for (let i = 0; running; i++) {
      await api("POST", "/contacts", { firstName: `${tag}${w}x${i}` });
      created++;
    }
  });
  return { stop: async () => ((running = false), await Promise.all(workers), created) };
}

try {
  // The first start made the bootstrap project and printed its key: the database is ready for the CLI.
  for (let i = 0; !/crm_test_\w{46}/.test(server.output()); i++) {
    if (i > 500) throw new Error(`no bootstrap key from the server: ${server.output()}`);
    await Bun.sleep(10);
  }
  const a = project("bench-a");
  const b = project("bench-b");
  const rx = receiver.url;

  // 1. Backlog drain to one subscription while creates run at full speed.
  const hook = await a("POST", "/webhooks", { url: `${rx}/one`, events: ["*"] });
  await a("PATCH", `/webhooks/${hook.id}`, { status: "disabled" });
  const since = new Date(Date.now() - 1000).toISOString();
  log(`recording ${BACKLOG} events…`);
  for (let i = 0; i < BACKLOG; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, BACKLOG - i) }, (_, j) => a("POST", "/contacts", { firstName: `W${i + j}` })));
  }
  await a("PATCH", `/webhooks/${hook.id}`, { status: "active" });
  const backlogBefore = Date.now();
  const from = (await sync()).length;
  const started = performance.now();
  const load = createAtFullSpeed(a, "D");
  await a("POST", `/webhooks/${hook.id}/redeliver`, { since, until: new Date(backlogBefore).toISOString() });
  const backlogReceived = () => arrivals.slice(from).filter((x) => x.path === "/one" && x.createdAt < backlogBefore).length;
  while (backlogReceived() < BACKLOG && performance.now() - started < 120_000) {
    await Bun.sleep(20);
    await sync();
  }
  const seconds = (performance.now() - started) / 1000;
  const delivered = arrivals.length - from;
  const createdMeanwhile = await load.stop();
  const rate = delivered / seconds;
  log(`${delivered} deliveries in ${seconds.toFixed(2)} s = ${Math.round(rate)} deliveries/s to one subscription, while ${createdMeanwhile} contacts were created (${Math.round(createdMeanwhile / seconds)}/s)`);

  // 2. Live latency under the same load: every event of the window, no backlog.
  const pending = async () => Number((await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).match(/^crm_outbox_pending (\d+)/m)?.[1] ?? NaN);
  for (const until = Date.now() + 60_000; (await pending()) > 0 && Date.now() < until; ) await Bun.sleep(100);
  const liveFrom = Date.now();
  const live = createAtFullSpeed(a, "L");
  await Bun.sleep(LIVE_SECONDS * 1000);
  const liveCreated = await live.stop();
  await Bun.sleep(1000);
  await sync();
  const liveLatencies = arrivals.filter((x) => x.path === "/one" && x.createdAt >= liveFrom + 500).map((x) => x.at - x.createdAt);
  const p50 = percentile(liveLatencies, 50);
  const p95 = percentile(liveLatencies, 95);
  log(`event→delivery with creates at full speed (${Math.round(liveCreated / LIVE_SECONDS)}/s): p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${liveLatencies.length} events)`);
  await a("DELETE", `/webhooks/${hook.id}`);

  // 3. Fairness: A's 16 slow subscriptions busy; B's healthy one.
  for (let i = 0; i < SLOW_SUBSCRIPTIONS; i++) await a("POST", "/webhooks", { url: `${rx}/slow${i}`, events: ["*"] });
  await b("POST", "/webhooks", { url: `${rx}/fast`, events: ["*"] });
  let firing = true;
  const slowFire = (async () => {
    while (firing) {
      await a("POST", "/contacts", { firstName: "Slow" });
      await Bun.sleep(100);
    }
  })();
  await Bun.sleep(2000);
  const fairFrom = Date.now();
  for (let i = 0; i < 40; i++) {
    await b("POST", "/contacts", { firstName: `Fast${i}` });
    await Bun.sleep(200);
  }
  await Bun.sleep(2000);
  firing = false;
  await slowFire;
  await sync();
  const fair = arrivals.filter((x) => x.path === "/fast" && x.createdAt >= fairFrom).map((x) => x.at - x.createdAt);
  const fairP50 = percentile(fair, 50);
  const fairMax = Math.max(...fair);
  log(`another project's delivery while 16 slow subscriptions are busy: p50 ${fairP50.toFixed(1)} ms, max ${fairMax.toFixed(1)} ms (${fair.length}/40 arrived; target < 1 s: ${fair.length === 40 && fairMax < 1000 ? "PASS" : "MISS"})`);

  const result = {
    events: BACKLOG,
    subscriptions: 1,
    delivered,
    seconds,
    deliveriesPerSecond: rate,
    createsPerSecondMeanwhile: createdMeanwhile / seconds,
    latencySamples: liveLatencies.length,
    latencyP50Ms: p50,
    latencyP95Ms: p95,
    fairnessSamples: fair.length,
    fairnessP50Ms: fairP50,
    fairnessMaxMs: fairMax,
    maxRssKb: rss.overall(),
  };
  console.log(`BENCH_JSON ${JSON.stringify(result)}`);
  log(
    `deliveries/s ${Math.round(rate)} (target ≥ 2,000/s: ${rate >= 2000 ? "PASS" : "MISS"}); event→delivery p50 ${p50.toFixed(1)} ms (target < 50 ms: ${p50 < 50 ? "PASS" : "MISS"}); ` +
      `fairness max ${fairMax.toFixed(0)} ms; server peak RSS ${(result.maxRssKb / 1024).toFixed(1)} MB`,
  );
} finally {
  limit.release();
  rss.stop();
  if (profile.length) await server.stop(); // SIGTERM: the profile is written on exit
  cleanup();
}
