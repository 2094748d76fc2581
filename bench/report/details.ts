/**
 * The sections of bench/RESULTS.md after the summary (bench/report/results.ts): the load
 * scenarios, the single-connection latencies, RSS, the in-process profile, the statement
 * cache, where a request's CPU goes, the PostgreSQL section and the comparison with Before.
 */
import type { LoadResult } from "../harness/load.ts";
import { mb } from "../harness/rss.ts";
import { f0, mdTable, ms, pct, verdict } from "../harness/report.ts";
import type { QueryProfile } from "../profile.ts";
import { beforeDeliveries, beforeRows } from "./before.ts";
import { COST_SCENARIO_LOAD, costsMarkdown } from "./costs.ts";
import type { Results, Row } from "./results.ts";

/** The single-connection latencies, one row per scenario, judged against p95 ≤ 5 ms. */
export function singleTable(single: Array<{ name: string; r: LoadResult }>): string {
  const lines = ["| scenario | p50 ms | p95 ms | p99 ms | req/s | p95 ≤ 5 ms |", "|---|---|---|---|---|---|"];
  for (const { name, r } of single) {
    lines.push(`| ${name} | ${ms(r.p50Us)} | ${ms(r.p95Us)} | ${ms(r.p99Us)} | ${r.rps.toFixed(0)} | ${name === "GET one" ? "" : r.p95Us <= 5000 ? "PASS" : "MISS"} |`);
  }
  return lines.join("\n");
}

/** The scenarios at CONNECTIONS; the p95 targets are judged at 1 connection (summary table). */
function table(rows: Row[]): string {
  const head = ["scenario", "p50 ms", "p95 ms", "p99 ms", "req/s", "requests", "non-2xx/err", "server CPU µs/req"];
  return mdTable(head, rows.map(({ name, r }) => {
    const errs = Object.values(r.errors).reduce((a, b) => a + b, 0);
    return [name, ms(r.p50Us), ms(r.p95Us), ms(r.p99Us), r.rps.toFixed(0), String(r.requests), String(errs), Number.isFinite(r.cpuUs) ? r.cpuUs.toFixed(0) : ""];
  }));
}

export function detailSections(f: Results, out: (s?: string) => void) {
  const { CONNECTIONS, SECONDS, DATA, raw, bareR, getOne, postContacts, single, singleWarm, rows, rssRows, idleRssKb, webhooks, profile, probes,
    costs, pgSection, before, ratio } = f;
  const postRatio = postContacts.rps / raw.rate;
  out(`## Load scenarios (${CONNECTIONS} connections)`);
  out();
  out(table(rows));
  out();
  out(`Latency at 1 connection (no queueing; ${Math.max(2, Math.round(SECONDS / 2))} s each, wrk -t1 -c1; taken first, ` +
    `${DATA ? "on the first server started on the reused data" : "on the server that built the data"}; cold: the file's pages dropped from the OS page cache first):`);
  out();
  out(singleTable(single));
  out();
  out(`The same warm, after the ${CONNECTIONS}-connection reads:`);
  out();
  out(singleTable(singleWarm));
  out();
  out(`GET-one throughput vs bare Hono route: ${getOne.rps.toFixed(0)} / ${bareR.rps.toFixed(0)} = **${ratio.toFixed(2)}×** ` +
    `(target ≥ 0.6×: ${ratio >= 0.6 ? "PASS" : "MISS"})`);
  out();
  out(`POST /contacts vs raw one-row-transaction inserts: ${postContacts.rps.toFixed(0)} / ${raw.rate.toFixed(0)} = **${postRatio.toFixed(2)}×** ` +
    `(target ≥ 0.5×: ${verdict(postRatio >= 0.5)})`);
  out();
  out(`## RSS under load (VmRSS of the server process, sampled every 100 ms; idle after start ${mb(idleRssKb).toFixed(1)} MB)`);
  out();
  out(mdTable(["scenario", "peak RSS MB"], rssRows.map((r) => [r.name, mb(r.kb).toFixed(1)])));
  out();
  out(`## In-process profile (service functions on the seeded DB, no HTTP, 300 calls each)`);
  out();
  for (const p of profile.queries as QueryProfile[]) {
    out(`- **${p.name}**: p50 ${p.p50Ms} ms, p95 ${p.p95Ms} ms, ${p.statements} distinct statements; ` +
      `slowest statement (${p.topAvgUs} µs per run) takes ${Math.round(p.topShare * 100)}% of statement time:`);
    out(`  - \`${p.topSql.replace(/\s+/g, " ").slice(0, 400)}\``);
    out(`  - plan: ${p.plan.map((l) => `\`${l}\``).join(" → ")}`);
  }
  out();
  out(`## Statement cache`);
  out();
  out(`- preparing a statement costs ${profile.statementCost.prepareUs} µs on average over the ${profile.statementCost.statements} ` +
    `statements above; taking it from Bun's cache (Database.query) ${profile.statementCost.cachedUs} µs.`);
  out(`- Bun's own statement cache (Database.query) keeps only Database.MAX_QUERY_CACHE_SIZE = ${profile.bunQueryCacheSize} statements.`);
  out(`- statements the server really prepared while under load (2 s per scenario after a 1 s warm-up; bench/stmt-probe.ts ` +
    `counts bun:sqlite prepares behind whatever cache src/runtime/bun.ts uses). ~0 per request = the cache works:`);
  out();
  out(`| scenario | requests | statements prepared | distinct SQL prepared | prepares per request |`);
  out(`|---|---|---|---|---|`);
  for (const p of probes) out(`| ${p.name} | ${p.requests} | ${p.prepared} | ${p.distinct} | ${(p.prepared / Math.max(1, p.requests)).toFixed(4)} |`);
  out();
  if (costs !== null) {
    out(`## Where a request's CPU goes (bench/costs.ts)`);
    out();
    if (typeof costs === "string") out(`bench/costs.ts failed: ${costs}`);
    else {
      const underWrk = Object.fromEntries(rows.map((row) => [row.name, row.r.cpuUs]));
      out(`The service started in bench/costs.ts's own process on a copy of the seeded database, each request called through \`app.fetch\` ` +
        `one at a time (no socket), beside the floor of each part measured alone in the same process. SQL: ${costs.traced} requests per scenario traced ` +
        `(every bun:sqlite statement timed), their reads replayed in the traced order, cycling (${costs.replayPasses}+ passes after an unmeasured one), ` +
        `on a bare read-only connection with the service's PRAGMAs; writes (begin … commit) as they cost in the request, their floor is the storage limit above. ` +
        `In-process each write request commits alone; under wrk group commit shares COMMITs. ` +
        `Server CPU under wrk: the load table's column (utime+stime of the server over the measured seconds ÷ requests, ${CONNECTIONS} connections).`);
      out();
      for (const c of costs.scenarios) {
        const loadName = COST_SCENARIO_LOAD[c.name] ?? c.name;
        const cpu = underWrk[loadName];
        if (cpu !== undefined && Number.isFinite(cpu)) {
          out(`- ${c.name}: ${cpu.toFixed(0)} µs server CPU per request under wrk − ${c.cpuUs.toFixed(0)} µs CPU in-process ` +
            `(${c.totalUs.toFixed(0)} µs wall) = **${(cpu - c.cpuUs).toFixed(0)} µs** that the socket, Bun.serve and ${CONNECTIONS} connections add`);
        }
      }
      const bareCpu = underWrk["bare Hono GET (same JSON)"];
      if (bareCpu !== undefined && Number.isFinite(bareCpu)) out(`- for scale: the bare Hono route costs ${bareCpu.toFixed(0)} µs server CPU per request under wrk.`);
      out();
      out(costsMarkdown(costs, { level: 3, underWrk }));
    }
    out();
  }
  if (pgSection) {
    out(pgSection);
    out();
  }
  out(`## Before → after`);
  out();
  const old = beforeRows(before);
  const cmp: string[][] = [];
  for (const { name, r } of [...rows, ...single.map((s) => ({ name: s.name, r: s.r, one: true }))]) {
    const o = old.get(name);
    const label = rows.some((x) => x.name === name) ? name : `${name} (1 connection)`;
    if (!o) {
      cmp.push([label, "—", r.rps.toFixed(0), "", "—", ms(r.p95Us)]);
      continue;
    }
    cmp.push([label, o.rps.toFixed(0), r.rps.toFixed(0), pct(o.rps, r.rps), o.p95.toFixed(2), ms(r.p95Us)]);
  }
  const oldDeliveries = beforeDeliveries(before);
  cmp.push(["webhook deliveries/s", oldDeliveries === null ? "—" : String(oldDeliveries), f0(webhooks.deliveriesPerSecond),
    oldDeliveries === null ? "" : pct(oldDeliveries, webhooks.deliveriesPerSecond), "", ""]);
  out(mdTable(["scenario", "before req/s", "after req/s", "change", "before p95 ms", "after p95 ms"], cmp));
  out();
  out(before);
}
