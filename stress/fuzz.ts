/**
 * Issue 6, stress part: at least 100,000 fuzzed requests over every route family against
 * one loopback server, CONCURRENCY at a time. Prints cases/s, the count of every status and
 * code seen, and each violation with its request; bounded by FUZZ_MAX_SECONDS.
 * Env: FUZZ_SEED, FUZZ_CASES (default 100000), FUZZ_MAX_SECONDS (default 840), FUZZ_CONCURRENCY (16).
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { fuzzSeed, healthy, logMark, runCase, serverErrors, startFuzzTarget } from "../test/fuzz/harness.ts";
import { allFamilies, describe, type FuzzRequest } from "../test/fuzz/requests.ts";

/** Share of each family in the mix. */
const WEIGHTS: Record<string, number> = {
  "contacts.create": 20, "contacts.patch": 15, "interactions.create": 15, "webhooks.write": 12, forms: 13, queries: 20, stray: 5,
};
const BATCH = 1000;

export async function fuzzStress(): Promise<boolean> {
  const seed = fuzzSeed();
  const total = Number(process.env.FUZZ_CASES ?? 100_000);
  const maxMs = Number(process.env.FUZZ_MAX_SECONDS ?? 840) * 1000;
  const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 16);
  console.log(`fuzz: seed ${seed} (FUZZ_SEED overrides), ${total} cases, concurrency ${concurrency}, at most ${maxMs / 1000} s`);
  const target = await startFuzzTarget();
  const families = allFamilies(target.ids);
  const mix = fc.oneof(...Object.entries(WEIGHTS).map(([name, weight]) => ({ arbitrary: families[name]!, weight })));
  const statuses = new Map<string, number>();
  const byFamily = new Map<string, number>();
  const failures: { req: FuzzRequest; problems: string[]; answer?: string; stderr: string }[] = [];
  const started = Date.now();
  let done = 0;
  let lastReport = started;
  let dead = false;
  try {
    for (let batch = 0; done < total && Date.now() - started < maxMs && !dead; batch++) {
      const requests = fc.sample(mix, { seed: seed + batch, numRuns: Math.min(BATCH, total - done) });
      let next = 0;
      const worker = async () => {
        while (next < requests.length && !dead) {
          const req = requests[next++]!;
          const mark = logMark(target);
          const { answer, problems } = await runCase(target, req);
          done++;
          byFamily.set(req.family, (byFamily.get(req.family) ?? 0) + 1);
          let code = "";
          if (answer) {
            try {
              code = JSON.parse(answer.text)?.code ?? "";
            } catch {
              code = answer.headers.get("content-type")?.split(";")[0] ?? "";
            }
          }
          const label = `${answer?.status ?? "none"} ${code}`.trim();
          statuses.set(label, (statuses.get(label) ?? 0) + 1);
          if (problems.length) {
            failures.push({ req, problems, answer: answer && `${answer.status} ${answer.text.slice(0, 500)}`, stderr: serverErrors(target, mark) });
            console.log(`VIOLATION (batch ${batch}): ${problems.join("; ")}\n  request: ${describe(req)}\n  answer: ${answer?.status} ${answer?.text.slice(0, 300)}`);
            if (problems.some((p) => p.includes("no longer answers"))) dead = true;
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      if (!(await healthy(target))) {
        failures.push({ req: requests[requests.length - 1]!, problems: [`server stopped answering /healthz during batch ${batch}`], stderr: serverErrors(target, { out: 0, err: 0 }).slice(-2000) });
        dead = true;
      }
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        console.log(`  ${done} cases, ${rate(done, started)} cases/s`);
      }
    }
  } finally {
    await target.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(`\nfuzz: ${done} cases in ${seconds.toFixed(1)} s = ${rate(done, started)} cases/s`);
  console.log("by family:", Object.fromEntries([...byFamily].sort()));
  console.log("status and code seen:");
  for (const [label, n] of [...statuses].sort()) console.log(`  ${label.padEnd(40)} ${n}`);
  if (failures.length) {
    const file = join(tmpdir(), `crm-fuzz-failures-${seed}.json`);
    writeFileSync(file, JSON.stringify(failures.map((f) => ({ ...f, req: { ...f.req, body: typeof f.req.body === "string" ? f.req.body : f.req.body && [...f.req.body] } })), null, 1));
    console.log(`\n${failures.length} violation(s); full requests in ${file}`);
    for (const f of failures.slice(0, 20)) console.log(`- ${f.problems.join("; ")}\n  request: ${describe(f.req)}\n  answer: ${f.answer}\n  server log: ${f.stderr}`);
  }
  const enough = done >= total;
  if (!enough) console.log(`fuzz: only ${done} of ${total} cases within ${maxMs / 1000} s`);
  return failures.length === 0 && enough;
}

const rate = (n: number, since: number) => Math.round(n / Math.max(0.001, (Date.now() - since) / 1000));

if (import.meta.main) process.exit((await fuzzStress()) ? 0 : 1);
