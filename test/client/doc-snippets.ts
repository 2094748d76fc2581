/**
 * The code blocks of docs/webhooks.md that start with `// file: NAME`, loaded as modules so
 * the tests run exactly what the page shows. They are written under node_modules/.cache,
 * where `standardwebhooks` and `@crm-service/client` resolve as in a user's project.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/server.ts";

const SNIPPET_DIR = join(REPO_ROOT, "node_modules/.cache/crm-doc-snippets");

export function docSnippetSource(doc: string, name: string): string {
  const text = readFileSync(join(REPO_ROOT, doc), "utf8");
  for (const match of text.matchAll(/```ts\n\/\/ file: ([\w.-]+)\n([\s\S]*?)```/g)) {
    if (match[1] === name) return match[2]!;
  }
  throw new Error(`${doc} has no code block starting with "// file: ${name}"`);
}

export async function loadDocSnippet<T>(doc: string, name: string): Promise<T> {
  mkdirSync(SNIPPET_DIR, { recursive: true });
  const file = join(SNIPPET_DIR, `${process.pid}-${name}`);
  writeFileSync(file, docSnippetSource(doc, name));
  try {
    return (await import(file)) as T;
  } finally {
    rmSync(file, { force: true });
  }
}
