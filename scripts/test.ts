/**
 * `npm test` (issue 26): the whole suite, every file of test/ on SQLite and every file of
 * test/http on PostgreSQL, as two `bun test` runs side by side, each spreading its files
 * over a few worker processes (`bun test --parallel`, slowest files first by the measured
 * durations of test/timings/<backend>.json). Exits non-zero when either run fails and ends
 * with each run's failed tests by file, so a red CI names what broke.
 *
 *   bun scripts/test.ts                    both backends (npm test)
 *   bun scripts/test.ts sqlite             one backend (sqlite | postgres)
 *   bun scripts/test.ts test/http/errors.test.ts   some files (on PostgreSQL those under test/http)
 *   bun scripts/test.ts --update-timings   also rewrite test/timings/*.json from this run
 *   TEST_JOBS_SQLITE=2 TEST_JOBS_POSTGRES=2 worker processes per run (defaults below)
 *
 * Isolation between the workers: each worker keeps its modules across its files
 * (`--no-isolate`), so its embedded PostgreSQL cluster (test/helpers/postgres.ts) is
 * started once and shared by its files; CRM_TEST_CLUSTER_PER_WORKER tells
 * test/helpers/teardown.ts not to stop it after each file (its reaper stops it when the
 * worker ends). Each run has its own temporary folder (TMPDIR), where every database
 * folder and cluster of its workers lives; the folder must be empty of clusters before
 * this script returns, and is removed. Clusters, databases and ports never collide: each
 * cluster is its worker's, on a free port, its databases named by the worker's pid.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;

interface Run {
  name: "sqlite" | "postgres";
  paths: string[];
  env: Record<string, string>;
  jobs: number;
}

const POSTGRES_UNIT_TESTS = [
  "test/unit/batch-items-limiter.test.ts",
  "test/unit/postgres-term-ranges.test.ts",
  "test/unit/term-bits-step-postgres.test.ts",
  "test/unit/pair-terms-step.test.ts",
  "test/unit/named-statements-postgres.test.ts",
  "test/unit/vacuum-after-migration-postgres.test.ts",
];

/** Measured on the 2-core CI machine: more workers than this only make the waits longer (docs/testing.md). */
const RUNS: Run[] = [
  { name: "sqlite", paths: ["test/"], env: {}, jobs: Number(process.env.TEST_JOBS_SQLITE ?? 3) },
  // The unit tests that speak to PostgreSQL themselves (shared rate-limit buckets, search plans) run there too, as in `npm test`.
  { name: "postgres", paths: ["test/http/", ...POSTGRES_UNIT_TESTS], env: { CRM_TEST_BACKEND: "postgres" }, jobs: Number(process.env.TEST_JOBS_POSTGRES ?? 2) },
];

interface Outcome {
  run: Run;
  exitCode: number;
  seconds: number;
  log: string;
  /** "file > test name" of every failed test. */
  failed: string[];
  summary: string;
}

/** The failed tests of a `bun test` output: each `(fail)` line with the file header above it. */
export function failuresOf(output: string): string[] {
  const failed: string[] = [];
  let file = "";
  for (const line of output.split("\n")) {
    const header = /^(\S+\.test\.tsx?):$/.exec(line.trim());
    if (header) file = header[1]!;
    else if (line.startsWith("(fail) ")) failed.push(`${file} > ${line.slice(7).replace(/ \[[\d.]+m?s\]$/, "")}`);
  }
  return failed;
}

async function waitForClusters(dir: string): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const left = readdirSync(dir).filter((f) => f.startsWith("crm-pg-"));
    if (left.length === 0 || Date.now() > deadline) return left;
    await Bun.sleep(200);
  }
}

async function runOne(run: Run, updateTimings: boolean, scratch: string): Promise<Outcome> {
  const tmp = join(scratch, run.name);
  mkdirSync(tmp);
  // Like /tmp: the embedded PostgreSQL runs as user postgres when the tests run as root.
  chmodSync(tmp, 0o1777);
  const logPath = join(scratch, `${run.name}.log`);
  const timings = `test/timings/${run.name}.json`;
  const args = [BUN, "test", "--timeout", "30000", `--parallel=${run.jobs}`, "--no-isolate", "--timings", timings];
  if (updateTimings) args.push("--update-timings");
  const started = performance.now();
  const proc = Bun.spawn([...args, ...run.paths], {
    cwd: ROOT,
    env: { ...process.env, ...run.env, TMPDIR: tmp, CRM_TEST_CLUSTER_PER_WORKER: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  let log = "";
  const seen = new Set<string>();
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      const text = decoder.decode(chunk, { stream: true });
      log += text;
      // Progress: one line per finished file, the full output goes to the log.
      for (const line of text.split("\n")) {
        const file = /^(\S+\.test\.tsx?):$/.exec(line.trim())?.[1];
        if (file && !seen.has(file)) {
          seen.add(file);
          console.log(`[${run.name}] ${file}`);
        }
      }
    }
  };
  await Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const exitCode = await proc.exited;
  const seconds = (performance.now() - started) / 1000;
  writeFileSync(logPath, log);
  const left = await waitForClusters(tmp);
  const failed = failuresOf(log);
  if (left.length > 0) failed.push(`(harness) PostgreSQL clusters left behind in ${tmp}: ${left.join(", ")}`);
  const summary = log
    .split("\n")
    .filter((l) => /^\s*\d+ (pass|fail|skip|todo)$|^Ran \d+ tests/.test(l))
    .map((l) => l.trim())
    .join(", ");
  return { run, exitCode: left.length > 0 && exitCode === 0 ? 1 : exitCode, seconds, log: logPath, failed, summary };
}

async function main() {
  const argv = process.argv.slice(2);
  const updateTimings = argv.includes("--update-timings");
  const only = argv.filter((a) => a === "sqlite" || a === "postgres");
  const files = argv.filter((a) => !a.startsWith("--") && !only.includes(a));
  const runs = RUNS.filter((r) => only.length === 0 || only.includes(r.name))
    .map((r) => (files.length === 0 ? r : { ...r, paths: files.filter((f) => r.paths.some((p) => f.startsWith(p))) }))
    .filter((r) => r.paths.length > 0);
  if (runs.length === 0) throw new Error(`nothing to run for ${argv.join(" ")}`);
  mkdirSync(join(ROOT, "test/timings"), { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "crm-test-run-"));
  chmodSync(scratch, 0o755);
  const started = performance.now();
  console.log(`bun test on ${runs.map((r) => `${r.name} (${r.paths.join(" ")}, ${r.jobs} workers)`).join(" and ")}; logs in ${scratch}`);
  const outcomes = await Promise.all(runs.map((r) => runOne(r, updateTimings, scratch)));
  let failed = false;
  console.log("");
  for (const o of outcomes) {
    const ok = o.exitCode === 0 && o.failed.length === 0;
    failed ||= !ok;
    console.log(`${ok ? "PASS" : "FAIL"} ${o.run.name}: ${o.summary || `exit ${o.exitCode}`} in ${o.seconds.toFixed(0)} s (log ${o.log})`);
    for (const f of o.failed) console.log(`  (fail) ${f}`);
    if (!ok && o.failed.length === 0) console.log(`  bun test exited ${o.exitCode} with no failed test named: see the log`);
  }
  console.log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (failed) {
    // Keep the logs of a red run; a green run leaves nothing behind.
    for (const r of runs) rmSync(join(scratch, r.name), { recursive: true, force: true });
    process.exit(1);
  }
  rmSync(scratch, { recursive: true, force: true });
}

if (import.meta.main) await main();
