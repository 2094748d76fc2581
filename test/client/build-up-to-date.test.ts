/**
 * The typed client's committed build, clients/typescript/lib (docs/api.md §16.3), is what
 * scripts/build-client.ts makes from the current sources: rebuilt into a temporary folder and
 * compared file by file. lib/ is committed so a clean clone, a copied folder or
 * `npm install --ignore-scripts` has a client Node can import with no build step.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildClient, CLIENT_LIB_DIR, readTree } from "../../scripts/build-client.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-client-build-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("clients/typescript/lib is the build of clients/typescript/src", () => {
  buildClient(join(dir, "lib"));
  const fresh = readTree(join(dir, "lib"));
  const committed = readTree(CLIENT_LIB_DIR);
  const stale = [...new Set([...fresh.keys(), ...committed.keys()])].filter((name) => fresh.get(name) !== committed.get(name));
  if (stale.length > 0) {
    throw new Error(`clients/typescript/lib is out of date (${stale.join(", ")}).\nFix: run \`npm run client:build\` (or \`npm run client:generate\` after an API change) and commit clients/typescript/lib.`);
  }
  expect([...committed.keys()]).toContain("index.js");
  expect([...committed.keys()]).toContain("index.d.ts");
});
