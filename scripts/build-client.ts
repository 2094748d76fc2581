/**
 * Builds the typed client (docs/api.md §16.3) to plain JavaScript and `.d.ts` in
 * clients/typescript/lib, which its package.json `exports` point at, so Node, Bun, Deno and
 * bundlers import it without a TypeScript loader.
 *
 * lib/ is committed: the client works from a clean clone, a copied folder or
 * `npm install --ignore-scripts`, with no build step on the user's side.
 * test/client/build-up-to-date.test.ts rebuilds into a temporary folder and fails when lib/
 * differs; `npm run client:generate` regenerates the types and rebuilds in one go.
 *
 * Usage: bun scripts/build-client.ts [outDir]      (npm run client:build)
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const REPO_ROOT = resolve(import.meta.dir, "..");
export const CLIENT_DIR = join(REPO_ROOT, "clients/typescript");
export const CLIENT_LIB_DIR = join(CLIENT_DIR, "lib");

/**
 * Compiles clients/typescript/src into `outDir` (emptied first) with its own tsconfig.json:
 * tsc emits the `.js` and `.d.ts` of every source; the generated schema.d.ts has no
 * JavaScript and tsc does not copy declaration files, so it is copied as is, beside an
 * empty schema.js.
 *
 * Every `.js` starts with `@ts-self-types="./<name>.d.ts"`: Deno does not look for a `.d.ts`
 * beside a `.js` as tsc does, and this comment is how it finds a JavaScript module's types
 * (docs.deno.com, "Providing types when hosting"); tsc, Node and bundlers ignore it.
 */
export function buildClient(outDir: string = CLIENT_LIB_DIR): void {
  rmSync(outDir, { recursive: true, force: true });
  const tsc = join(REPO_ROOT, "node_modules/.bin/tsc");
  const run = spawnSync(tsc, ["-p", CLIENT_DIR, "--outDir", outDir], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`tsc -p clients/typescript failed (${run.status}):\n${run.stdout}${run.stderr}`);
  mkdirSync(outDir, { recursive: true });
  copyFileSync(join(CLIENT_DIR, "src/schema.d.ts"), join(outDir, "schema.d.ts"));
  writeFileSync(join(outDir, "schema.js"), "export {};\n");
  for (const name of readdirSync(outDir).filter((file) => file.endsWith(".js"))) {
    const path = join(outDir, name);
    writeFileSync(path, `/* @ts-self-types="./${name.replace(/\.js$/, ".d.ts")}" */\n${readFileSync(path, "utf8")}`);
  }
}

/** Every file under `dir`, as paths relative to it, sorted, mapped to its text. */
export function readTree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  };
  try {
    walk(dir);
  } catch {
    // A missing folder reads as empty: the comparison then names every file as missing.
  }
  return files;
}

if (import.meta.main) {
  const outDir = process.argv[2] ? resolve(process.argv[2]) : CLIENT_LIB_DIR;
  buildClient(outDir);
  console.log(`built ${relative(REPO_ROOT, outDir) || outDir}: ${[...readTree(outDir).keys()].join(", ")}`);
}
