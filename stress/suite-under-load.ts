/**
 * `npm run stress:suite`: the whole test suite (`npm test`), RUNS times, under load, to
 * find flaky tests before CI does (issue 11). Load: LANES copies of the suite run side by
 * side (each one is the others' load), plus HOGS busy-looping processes. Each lane runs
 * in its own git worktree of HEAD (node_modules linked), so lanes never share files.
 *
 *   SUITE_RUNS=10 SUITE_LANES=2 SUITE_HOGS=1 npm run stress:suite
 *
 * Prints every failed test by name with its run, and a summary line; exits 1 on any failure.
 * The logs stay in $TMPDIR/crm-suite-under-load-<time>/.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const REPO = resolve(import.meta.dir, "..");
const BUN = join(REPO, "node_modules/.bin/bun");
const runs = Number(process.env.SUITE_RUNS ?? 10);
const lanes = Number(process.env.SUITE_LANES ?? 2);
const hogs = Number(process.env.SUITE_HOGS ?? 1);
const root = join(tmpdir(), `crm-suite-under-load-${Date.now()}`);
mkdirSync(root, { recursive: true });

const git = async (...args: string[]) => {
  const p = Bun.spawn(["git", ...args], { cwd: REPO, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")}: ${err}`);
  return out.trim();
};

const head = await git("rev-parse", "--short", "HEAD");
const trees: string[] = [];
for (let i = 0; i < lanes; i++) {
  const tree = join(root, `lane-${i}`);
  await git("worktree", "add", "--detach", tree, "HEAD");
  symlinkSync(join(REPO, "node_modules"), join(tree, "node_modules"));
  trees.push(tree);
}

const hogCode = "for(;;){}";
const hogProcs = Array.from({ length: hogs }, () => Bun.spawn([BUN, "-e", hogCode], { stdout: "ignore", stderr: "ignore" }));
console.log(`suite under load: ${runs} runs of HEAD ${head} in ${lanes} lanes side by side, ${hogs} CPU hog(s); logs in ${root}`);

interface Outcome {
  run: number;
  lane: number;
  code: number;
  seconds: number;
  failed: string[];
  summary: string;
}
const outcomes: Outcome[] = [];
let next = 1;

async function lane(index: number) {
  for (;;) {
    const run = next++;
    if (run > runs) return;
    const started = Date.now();
    const log = join(root, `run-${run}.log`);
    const p = Bun.spawn([BUN, "test", "--timeout", "30000"], { cwd: trees[index], stdout: "pipe", stderr: "pipe", env: process.env });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    const text = out + err;
    writeFileSync(log, text);
    const failed = [...new Set(text.split("\n").filter((l) => l.startsWith("(fail)")).map((l) => l.replace(/ \[[\d.]+m?s\]$/, "")))];
    const summary = text.match(/^\s*\d+ pass\s*\n\s*\d+ (?:skip\s*\n\s*\d+ )?fail/m)?.[0].replace(/\s+/g, " ").trim() ?? "no summary";
    const o = { run, lane: index, code, seconds: (Date.now() - started) / 1000, failed, summary };
    outcomes.push(o);
    console.log(`run ${run} (lane ${index}): exit ${code}, ${summary}, ${o.seconds.toFixed(0)} s${failed.length ? `\n  ${failed.join("\n  ")}` : ""}`);
  }
}

try {
  await Promise.all(trees.map((_, i) => lane(i)));
} finally {
  for (const h of hogProcs) h.kill("SIGKILL");
  for (const tree of trees) {
    await git("worktree", "remove", "--force", tree).catch(() => rmSync(tree, { recursive: true, force: true }));
  }
}

const bad = outcomes.filter((o) => o.code !== 0);
console.log(`\n${runs} runs, ${bad.length} with failures; ${outcomes.reduce((n, o) => n + o.failed.length, 0)} failed tests in all`);
process.exit(bad.length ? 1 : 0);
