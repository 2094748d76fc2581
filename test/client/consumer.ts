/**
 * A throwaway consumer project for the client's packaging tests (docs/api.md §16.3): a temp
 * folder whose node_modules/@crm-service/client links to clients/typescript, as
 * `npm install /path/to/clients/typescript` installs it, so imports resolve through the
 * package's `exports` (lib/: JavaScript and .d.ts) exactly as in a user's project.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/spawn.ts";

export interface Consumer {
  dir: string;
  write(name: string, text: string): string;
  remove(): void;
}

export function consumerProject(): Consumer {
  const dir = mkdtempSync(join(tmpdir(), "crm-client-consumer-"));
  mkdirSync(join(dir, "node_modules/@crm-service"), { recursive: true });
  symlinkSync(join(REPO_ROOT, "clients/typescript"), join(dir, "node_modules/@crm-service/client"), "dir");
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  write("package.json", JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { "@crm-service/client": "*" } }, null, 2));
  return { dir, write, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
