// @ts-check
/**
 * Mutation testing of the modules where the logic is dense (issue 11), one Stryker run per
 * module: its source files are mutated and only its fast unit tests run against each mutant
 * (never the HTTP suite). `npm run mutation [-- module ...]` (scripts/mutation.ts) runs them
 * and prints the scores; `MUTATION_MODULE=retry npx stryker run` runs one by hand.
 *
 * Stryker runs on Node; the command runner starts `bun test` in a sandbox under
 * .stryker-tmp/ that holds a copy of src/ and test/ (node_modules is symlinked), so the
 * tests import the sandbox's mutated copy, never the working tree.
 */

import { modules } from "./mutation/modules.mjs";

const name = process.env.MUTATION_MODULE ?? "";
const selected = modules[name];
if (!selected) throw new Error(`MUTATION_MODULE must be one of ${Object.keys(modules).join(", ")} (got ${JSON.stringify(name)})`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "command",
  commandRunner: { command: `node_modules/.bin/bun test --timeout 30000 ${selected.tests.map((t) => `./${t}`).join(" ")}` },
  mutate: selected.mutate,
  // The sandbox holds only what the tests load: sources, tests, migrations and configs
  // (not dist/'s 100 MB binary, data/ or the benchmarks).
  ignorePatterns: ["/*", "!/src", "!/test", "!/db", "!/package.json", "!/bunfig.toml", "!/tsconfig.json"],
  inPlace: false,
  symlinkNodeModules: true,
  tempDirName: ".stryker-tmp",
  concurrency: 2,
  timeoutMS: 10_000,
  reporters: ["json", "html", "clear-text", "progress"],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 80, break: null },
};
