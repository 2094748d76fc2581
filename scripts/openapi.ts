/**
 * Prints the OpenAPI document (docs/api.md §16.1) without starting a server: the input of the
 * lint (`npm run lint:openapi`) and of the typed client's generated types.
 * Usage: bun scripts/openapi.ts [OUTPUT]
 */
import { writeFileSync } from "node:fs";
import { createApi } from "../src/app.ts";
import { openApiDocument } from "../src/http/document.ts";

const text = JSON.stringify(JSON.parse(openApiDocument(createApi())), null, 2) + "\n";
const output = process.argv[2];
if (output) writeFileSync(output, text);
else process.stdout.write(text);
