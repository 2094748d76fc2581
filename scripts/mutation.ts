/**
 * `npm run mutation [-- module ...]` (issue 11): runs Stryker once per dense module of
 * stryker.config.mjs, each mutant against that module's fast unit tests only, then prints
 * the score table. Stryker itself runs on Node (it is a Node tool); the command it gives
 * each mutant is `bun test`. Reports: reports/mutation/<module>.{json,html}.
 *
 * Score = (killed + timeout) / (killed + timeout + survived + no coverage), Stryker's
 * "mutation score". Exits non-zero when a run fails or a module scores below 80 %.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { modules } from "../mutation/modules.mjs";

const TARGET = 80;

interface Report {
  files: Record<string, { mutants: Array<{ status: string; mutatorName: string; location: { start: { line: number } }; replacement?: string }> }>;
}

interface Row {
  module: string;
  mutants: number;
  killed: number;
  survived: number;
  timeout: number;
  noCoverage: number;
  errors: number;
  score: number;
  seconds: number;
}

function tally(module: string, seconds: number): Row {
  const report = JSON.parse(readFileSync(`reports/mutation/${module}.json`, "utf8")) as Report;
  const statuses = Object.values(report.files).flatMap((f) => f.mutants.map((m) => m.status));
  const count = (s: string) => statuses.filter((x) => x === s).length;
  const [killed, survived, timeout, noCoverage] = [count("Killed"), count("Survived"), count("Timeout"), count("NoCoverage")];
  const errors = count("CompileError") + count("RuntimeError");
  const valid = killed + survived + timeout + noCoverage;
  const score = valid === 0 ? 100 : ((killed + timeout) / valid) * 100;
  return { module, mutants: valid + errors, killed, survived, timeout, noCoverage, errors, score, seconds };
}

function table(rows: Row[]): string {
  const head = ["module", "mutants", "killed", "survived", "timeout", "no coverage", "errors", "score %", "time s"];
  const body = rows.map((r) => [r.module, r.mutants, r.killed, r.survived, r.timeout, r.noCoverage, r.errors, r.score.toFixed(2), r.seconds.toFixed(0)].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  return [line(head), `|${widths.map((w, i) => (i === 0 ? "-" : "").padEnd(w + 1, "-") + (i === 0 ? "-" : ":")).join("|")}|`, ...body.map(line)].join("\n");
}

const asked = process.argv.slice(2);
const unknown = asked.filter((m) => !(m in modules));
if (unknown.length > 0) {
  console.error(`unknown module ${unknown.join(", ")}; modules: ${Object.keys(modules).join(", ")}`);
  process.exit(2);
}
const names = asked.length > 0 ? asked : Object.keys(modules);

const started = performance.now();
const rows: Row[] = [];
const failed: string[] = [];
for (const module of names) {
  console.log(`\n=== mutation: ${module} (${modules[module]!.mutate.join(", ")})`);
  const t0 = performance.now();
  const run = spawnSync("node", ["node_modules/@stryker-mutator/core/bin/stryker.js", "run"], {
    stdio: "inherit",
    env: { ...process.env, MUTATION_MODULE: module },
  });
  const seconds = (performance.now() - t0) / 1000;
  if (run.status !== 0) {
    failed.push(module);
    continue;
  }
  rows.push(tally(module, seconds));
}

console.log(`\n${table(rows)}`);
console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s; reports in reports/mutation/`);
const low = rows.filter((r) => r.score < TARGET).map((r) => r.module);
if (failed.length > 0) console.error(`stryker failed for: ${failed.join(", ")}`);
if (low.length > 0) console.error(`below ${TARGET} %: ${low.join(", ")}`);
process.exit(failed.length > 0 || low.length > 0 ? 1 : 0);
