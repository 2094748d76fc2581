/**
 * `npm run stress`: the stress parts, one after another. Each step returns true when it
 * passed; the run exits non-zero if any step failed. Add a part by adding a step.
 */
import { crashLoopStress } from "./crash-loop.ts";
import { fuzzStress } from "./fuzz.ts";
import { soakStress } from "./soak.ts";

const steps: { name: string; run: () => Promise<boolean> }[] = [
  { name: "fuzz every write route and query string (issue 6)", run: fuzzStress },
  { name: "crash loop: 20 × kill -9 under mixed writes, every ack kept, every event delivered", run: () => crashLoopStress() },
  { name: "soak: mixed load at ~70 % of capacity for SOAK_MINUTES (default 20); RSS, p99, open files", run: soakStress },
];

let failed = 0;
for (const step of steps) {
  console.log(`\n=== stress: ${step.name}`);
  const started = Date.now();
  let ok = false;
  try {
    ok = await step.run();
  } catch (error) {
    console.error(error);
  }
  console.log(`=== ${ok ? "passed" : "FAILED"}: ${step.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (!ok) failed++;
}
process.exit(failed ? 1 : 0);
