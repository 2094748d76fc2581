/**
 * The typed client's generated types match the OpenAPI document the server serves
 * (docs/api.md §16: "checked up to date by npm test"). A change to a route, a schema or the
 * document needs `npm run client:generate` and the regenerated file committed with it.
 */
import { expect, test } from "bun:test";
import { CLIENT_SCHEMA_PATH, committedClientTypes, generateClientTypes } from "../../scripts/generate-client-types.ts";

/** "line N: expected … / found …" for the first line that differs. */
function firstDifference(expected: string, actual: string): string {
  const want = expected.split("\n");
  const have = actual.split("\n");
  for (let i = 0; i < Math.max(want.length, have.length); i++) {
    if (want[i] !== have[i]) return `line ${i + 1}:\n  generated: ${JSON.stringify(want[i] ?? "<end of file>")}\n  committed: ${JSON.stringify(have[i] ?? "<end of file>")}`;
  }
  return "no line differs";
}

test("clients/typescript/src/schema.d.ts is what openapi-typescript generates from the current OpenAPI document", async () => {
  const generated = await generateClientTypes();
  const committed = committedClientTypes();
  if (generated !== committed) {
    throw new Error(
      `${CLIENT_SCHEMA_PATH} is out of date with the OpenAPI document (or missing).\n` +
        `Fix: run \`npm run client:generate\` and commit the file.\nFirst difference, ${firstDifference(generated, committed)}`,
    );
  }
  expect(committed).toContain("export interface paths");
  expect(committed).toContain("export interface webhooks");
});
