/**
 * Generates the typed client's types, clients/typescript/src/schema.d.ts, from the OpenAPI
 * document the server serves (docs/api.md §16.1: types generated with openapi-typescript and
 * checked up to date by `npm test`, test/client/types-up-to-date.test.ts), then rebuilds the
 * client's committed JavaScript and `.d.ts` in clients/typescript/lib (scripts/build-client.ts),
 * so one command brings both up to date.
 * Usage: bun scripts/generate-client-types.ts      (npm run client:generate)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";
import { createApi } from "../src/app.ts";
import { buildClient, CLIENT_LIB_DIR } from "./build-client.ts";
import { openApiDocument } from "../src/http/document.ts";

export const CLIENT_SCHEMA_PATH = resolve(import.meta.dir, "../clients/typescript/src/schema.d.ts");

/** The text schema.d.ts must hold for the current document: the CLI's header, then the types. */
export async function generateClientTypes(): Promise<string> {
  const document = JSON.parse(openApiDocument(createApi()));
  const ast = await openapiTS(document, { silent: true });
  return COMMENT_HEADER + astToString(ast);
}

/** The committed schema.d.ts ("" when missing). */
export function committedClientTypes(): string {
  try {
    return readFileSync(CLIENT_SCHEMA_PATH, "utf8");
  } catch {
    return "";
  }
}

if (import.meta.main) {
  const text = await generateClientTypes();
  const changed = text !== committedClientTypes();
  writeFileSync(CLIENT_SCHEMA_PATH, text);
  console.log(`${changed ? "wrote" : "unchanged:"} ${CLIENT_SCHEMA_PATH}`);
  buildClient();
  console.log(`built ${CLIENT_LIB_DIR}`);
}
