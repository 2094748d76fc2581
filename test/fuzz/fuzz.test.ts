/**
 * Issue 6, `npm test` part: a few hundred fuzzed requests per route family against one
 * server; every answer must be a 2xx of the documented shape or a 4xx envelope with the
 * right code, never a 5xx, and the server must keep answering /healthz. The seed is fixed
 * (printed); FUZZ_SEED overrides it. The full run is `npm run stress`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { fuzzSeed, healthy, logMark, runCase, serverErrors, startFuzzTarget, type FuzzTarget } from "./harness.ts";
import { allFamilies, describe as describeRequest } from "./requests.ts";

const RUNS: Record<string, number> = {
  "contacts.create": 500,
  "contacts.patch": 500,
  "interactions.create": 400,
  "webhooks.write": 400,
  forms: 400,
  queries: 600,
  stray: 200,
};

const seed = fuzzSeed();
console.log(`fuzz seed ${seed} (set FUZZ_SEED to override)`);
let target: FuzzTarget;

beforeAll(async () => {
  target = await startFuzzTarget();
}, 60_000);

afterAll(async () => {
  await target?.stop();
});

for (const [family, numRuns] of Object.entries(RUNS)) {
  test(`fuzz ${family}: ${numRuns} cases, no 5xx, envelopes and shapes hold`, async () => {
    const arb = allFamilies(target.ids)[family]!;
    const property = fc.asyncProperty(arb, async (req) => {
      const mark = logMark(target);
      const { answer, problems } = await runCase(target, req, true);
      if (problems.length) {
        throw new Error(
          `${problems.join("; ")}\nrequest: ${describeRequest(req)}\nanswer: ${answer?.status} ${answer?.text.slice(0, 500)}\nserver log: ${serverErrors(target, mark)}`,
        );
      }
    });
    await fc.assert(property, { seed, numRuns });
    expect(await healthy(target)).toBe(true);
  }, 120_000);
}
