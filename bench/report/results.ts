/**
 * bench/RESULTS.md as bench/run.ts writes it (and prints it): the header, the summary of
 * the service against the limits of this machine, then the sections of bench/report/details.ts.
 * Every figure comes in `Results`; nothing is measured here.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { WebhookFigures } from "../children.ts";
import type { RawInsertResult } from "../limits.ts";
import type { BuildResult, ReadyResult } from "../binary.ts";
import type { ApiSeedProject, ApiSeedResult } from "../harness/seed/api.ts";
import type { LoadResult } from "../harness/load.ts";
import { mb } from "../harness/rss.ts";
import { mdTable, ms, f0, times as x, verdict } from "../harness/report.ts";
import type { profileQueries } from "../profile.ts";
import type { Measured, Probe } from "../scenarios.ts";
import type { CostsReport } from "./costs.ts";
import { detailSections } from "./details.ts";

export interface Row {
  name: string;
  r: Measured;
}

/** Everything bench/run.ts measured, with the settings it ran with. */
export interface Results {
  CONNECTIONS: number;
  CONTACTS: number;
  SECONDS: number;
  WARMUP: number;
  SEED_CONNECTIONS: number;
  DATA: string | null;
  started: Date;
  nproc: number;
  cpuModel: string;
  bunVersion: string;
  /** The load generator, as the header names it. */
  loader: string;
  startLoad: number;
  made: ApiSeedProject[];
  seeded: ApiSeedResult | null;
  measured: number;
  dataNote: string;
  statisticsNote: string;
  raw: RawInsertResult;
  rawFull: RawInsertResult;
  bareR: Measured;
  getOne: Measured;
  reads: Record<"search" | "type" | "tag" | "email" | "phone", Measured>;
  postContacts: Measured;
  postInteractions: Measured;
  single: Array<{ name: string; r: LoadResult }>;
  singleWarm: Array<{ name: string; r: LoadResult }>;
  rows: Row[];
  rssRows: Array<{ name: string; kb: number }>;
  idleRssKb: number;
  webhooks: WebhookFigures;
  readySeeded: ReadyResult;
  readyEmpty: ReadyResult;
  build: BuildResult;
  schemaCheck: string;
  profile: Awaited<ReturnType<typeof profileQueries>>;
  probes: Probe[];
  costs: CostsReport | string | null;
  pgSection: string;
  before: string;
  /** GET one req/s ÷ bare Hono req/s. */
  ratio: number;
}

/** Prints the report and writes it to `path`. */
export function writeResults(f: Results, path: string) {
  const lines: string[] = [];
  const out = (s = "") => (console.log(s), lines.push(s));
  summarySection(f, out);
  detailSections(f, out);
  writeFileSync(path, lines.join("\n") + "\n");
}

function summarySection(f: Results, out: (s?: string) => void) {
  const { CONNECTIONS, CONTACTS, SECONDS, WARMUP, SEED_CONNECTIONS, DATA, started, nproc, cpuModel, bunVersion, loader, startLoad, made, seeded,
    measured, dataNote, statisticsNote, raw, rawFull, bareR, getOne, reads, postContacts, postInteractions, single, singleWarm, rssRows, webhooks,
    readySeeded, readyEmpty, build, schemaCheck, ratio } = f;
  const maxRssKb = Math.max(...rssRows.map((r) => r.kb));
  const maxRssRow = rssRows.find((r) => r.kb === maxRssKb)!;
  const singleOf = (name: string) => single.find((s) => s.name === name)!.r;
  out(`# CRM service benchmark`);
  out();
  out(`- date: ${started.toISOString()}`);
  out(`- machine: nproc=${nproc} (${cpuModel}), Bun ${bunVersion}, ${process.platform}/${process.arch}`);
  out(`- load generator: ${loader}; ${WARMUP} s warm-up then ${SECONDS} s measured per scenario, 127.0.0.1 only.`);
  out(`- **client and server share the same ${nproc} CPUs**, so absolute req/s are lower than on separate machines.`);
  out(`- load average (1 min) at start ${startLoad.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}: anything else running on the machine skews these figures.`);
  const counts = made.map((p) => p.count.toLocaleString("en")).join(" + ");
  const seedFigures = seeded
    ? `${seeded.contacts.toLocaleString("en")} contacts built in 3 projects filled at once (${DATA ? "now " : ""}${counts} people` +
      `${DATA ? ", the kept run's POST scenarios included" : ""}), ${measured.toLocaleString("en")} in the measured one; ` +
      `${seeded.requests.toLocaleString("en")} requests (${seeded.upserts} through the upsert path ` +
      `GET ?email= then PATCH/POST, ${seeded.patches} PATCHes of earlier contacts) in ${seeded.seconds.toFixed(0)} s, ${seeded.rate.toFixed(0)} contacts/s`
    : `3 projects filled at once (${counts} contacts now, the kept run's POST scenarios included), ${measured.toLocaleString("en")} in the measured one; seed figures unknown`;
  out(DATA
    ? `- data: ${dataNote}; never ANALYZEd by hand: ${seedFigures}. At 1 connection (a fresh server on the copy): ${statisticsNote}.`
    : `- data: built through the HTTP API of the server under test (bench/harness/seed/api.ts), never ANALYZEd by hand: ` +
      `${seedFigures} at ${SEED_CONNECTIONS} connections. At 1 connection: ${statisticsNote}.`);
  out(`- server: \`bun src/main.ts serve\`, CRM_LOG_LEVEL=warn unless the row says info (log to a file).`);
  out();
  out(`## Summary: the service against the limits of this machine, at ${CONTACTS.toLocaleString("en")} contacts`);
  out();
  out(`Limits: **HTTP** = bench/bare-hono.ts (a bare Hono route on Bun answering the same contact JSON, ${CONNECTIONS} connections); ` +
    `**storage** = bench/limits.ts (raw bun:sqlite, one contact + its tags + search terms per BEGIN IMMEDIATE … COMMIT, ` +
    `src/storage/sqlite/open.ts PRAGMAs, into a copy of the seeded database; one writer, no HTTP; latency is one transaction, rate is rows per second inside transactions). ` +
    `Service rows are at ${CONNECTIONS} connections; "× limit" for p50/p99 is service latency / limit latency (1.0 = as fast as the limit). ` +
    `p95 targets for search and lists are judged at 1 connection (no queueing).`);
  out();
  type S = { name: string; r: { rps: number; p50Us: number; p99Us: number } };
  const vsLimit = (s: S, limitName: string, limit: { rps: number; p50Us: number; p99Us: number }, target = "", pass?: boolean) => [
    s.name, f0(s.r.rps), ms(s.r.p50Us), ms(s.r.p99Us), limitName, x(s.r.rps / limit.rps), x(s.r.p50Us / limit.p50Us), x(s.r.p99Us / limit.p99Us),
    target, pass === undefined ? "" : verdict(pass),
  ];
  const rawAsLoad = { rps: raw.rate, p50Us: raw.p50Us, p99Us: raw.p99Us };
  const postRatio = postContacts.rps / raw.rate;
  const p95At1 = (name: string) => singleOf(name).p95Us / 1000;
  const p95Warm = (name: string) => (singleWarm.find((x) => x.name === name)?.r.p95Us ?? Number.NaN) / 1000;
  const webhookOk = webhooks.deliveriesPerSecond >= 2000 && webhooks.latencyP50Ms < 50;
  const fairnessOk = webhooks.fairnessSamples === 40 && webhooks.fairnessMaxMs < 1000;
  const summary = [
    ["HTTP limit: bare Hono GET", f0(bareR.rps), ms(bareR.p50Us), ms(bareR.p99Us), "—", "1.00×", "1.00×", "1.00×", "", ""],
    ["storage limit: raw 1-row-txn insert", f0(raw.rate), ms(raw.p50Us), ms(raw.p99Us), "—", "1.00×", "1.00×", "1.00×", "", ""],
    vsLimit({ name: "GET one contact", r: getOne }, "HTTP", bareR, "req/s ≥ 0.6× HTTP limit", ratio >= 0.6),
    vsLimit({ name: "search (?search=)", r: reads.search }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("search").toFixed(2)}, warm ${p95Warm("search").toFixed(2)}`, p95At1("search") <= 5),
    vsLimit({ name: "list ?contactTypeId", r: reads.type }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?contactTypeId").toFixed(2)}, warm ${p95Warm("?contactTypeId").toFixed(2)}`, p95At1("?contactTypeId") <= 5),
    vsLimit({ name: "list ?tag", r: reads.tag }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?tag").toFixed(2)}, warm ${p95Warm("?tag").toFixed(2)}`, p95At1("?tag") <= 5),
    vsLimit({ name: "list ?email", r: reads.email }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?email").toFixed(2)}, warm ${p95Warm("?email").toFixed(2)}`, p95At1("?email") <= 5),
    vsLimit({ name: "list ?phone", r: reads.phone }, "HTTP", bareR, `p95 ≤ 5 ms at 1 conn: cold ${p95At1("?phone").toFixed(2)}, warm ${p95Warm("?phone").toFixed(2)}`, p95At1("?phone") <= 5),
    vsLimit({ name: "POST /contacts", r: postContacts }, "storage", rawAsLoad, "req/s ≥ 0.5× storage limit", postRatio >= 0.5),
    vsLimit({ name: "POST interaction", r: postInteractions }, "storage", rawAsLoad),
    ["webhook deliveries/s to 1 subscription while creates run; event→delivery", f0(webhooks.deliveriesPerSecond), webhooks.latencyP50Ms.toFixed(2), webhooks.latencyP95Ms.toFixed(2),
      "—", "", "", "", "≥ 2,000/s, p50 < 50 ms", verdict(webhookOk)],
    ["another project's delivery while 16 slow subscriptions are busy", "—", webhooks.fairnessP50Ms.toFixed(2), webhooks.fairnessMaxMs.toFixed(2),
      "—", "", "", "", "max < 1 s", verdict(fairnessOk)],
    [`RSS under load, max (${maxRssRow.name})`, `${mb(maxRssKb).toFixed(1)} MB`, "", "", "—", "", "", "", "≤ 150 MB", verdict(mb(maxRssKb) <= 150)],
    ["dist/crm ready, seeded copy (median of 5)", `${readySeeded.medianMs.toFixed(0)} ms`, "", "", "—", "", "", "", "< 200 ms", verdict(readySeeded.medianMs < 200)],
    ["dist/crm ready, empty db (median of 5)", `${readyEmpty.medianMs.toFixed(0)} ms`, "", "", "—", "", "", "", "< 200 ms", verdict(readyEmpty.medianMs < 200)],
  ];
  out(mdTable(["figure", "req/s (or value)", "p50 ms", "p99 ms", "vs limit", "req/s ratio", "p50 × limit", "p99 × limit", "target", "verdict"], summary));
  out();
  out(`- webhook rows (bench/webhooks.ts): a backlog of ${webhooks.events} events drains to one subscription while 16 connections create contacts ` +
    `(${webhooks.delivered} deliveries in ${webhooks.seconds.toFixed(2)} s, ${f0(webhooks.createsPerSecondMeanwhile)} creates/s meanwhile); p50/p99 columns hold ` +
    `event→delivery p50/p95 under the same create load (${webhooks.latencySamples} events); the fairness row's are p50/max over ${webhooks.fairnessSamples} of 40 events; `+
    `webhook server's own peak RSS ${mb(webhooks.maxRssKb).toFixed(1)} MB.`);
  out(`- storage limit: ${raw.rows} rows (${raw.termsPerRow.toFixed(1)} search terms and ${raw.tagsPerRow.toFixed(1)} tags per row), p95 ${ms(raw.p95Us)} ms; ` +
    `${raw.wallRate.toFixed(0)} rows/s counting the JS that builds the row values. ${schemaCheck}.`);
  out(`- informational, ${rawFull.label}: ${rawFull.rate.toFixed(0)} rows/s, p50 ${ms(rawFull.p50Us)} ms, p99 ${ms(rawFull.p99Us)} ms ` +
    `(POST /contacts = ${x(postContacts.rps / rawFull.rate)} of it).`);
  out(`- dist/crm: built by \`npm run build\` in ${build.seconds.toFixed(1)} s, ${build.sizeMb.toFixed(0)} MB; spawn → first 200 of /healthz, ` +
    `seeded copy ${readySeeded.runsMs.map((v) => v.toFixed(0)).join(", ")} ms; empty file (first start: migrations + bootstrap key) ` +
    `${readyEmpty.runsMs.map((v) => v.toFixed(0)).join(", ")} ms.`);
  out();
}
