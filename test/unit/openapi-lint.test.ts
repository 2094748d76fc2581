/**
 * The OpenAPI document passes Redocly's recommended rules and Spectral's spectral:oas with
 * no error and no warning (docs/api.md §16); the configs are redocly.yaml and .spectral.yaml.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi } from "../../src/app.ts";
import { openApiDocument } from "../../src/http/document.ts";
import { REPO_ROOT } from "../helpers/spawn.ts";

let dir: string;
let file: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "crm-lint-"));
  file = join(dir, "openapi.json");
  writeFileSync(file, openApiDocument(createApi()));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(command: string, args: string[]) {
  const result = Bun.spawnSync([join(REPO_ROOT, "node_modules/.bin", command), ...args], { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: "1" } });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

test("Redocly's recommended rules report no error and no warning", () => {
  const { stdout, stderr } = run("redocly", ["lint", file, "--format=json"]);
  const report = JSON.parse(stdout.slice(stdout.indexOf("{")));
  const problems = report.problems.map((p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`);
  expect({ problems, stderr: report.totals ? "" : stderr }).toEqual({ problems: [], stderr: "" });
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
}, 60_000);

test("Spectral's spectral:oas reports no error and no warning", () => {
  const { code, stdout } = run("spectral", ["lint", file, "--format=json", "--fail-severity=hint"]);
  const results = JSON.parse(stdout.slice(stdout.indexOf("["), stdout.lastIndexOf("]") + 1));
  expect(results.map((r: { code: string; message: string; path: string[] }) => `${r.code}: ${r.message} at ${r.path.join(".")}`)).toEqual([]);
  expect(code).toBe(0);
}, 60_000);
