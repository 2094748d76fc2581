import { readFileSync, writeFileSync } from "node:fs";

// node:fs behaves the same under Bun and Deno; kept here so the rest stays runtime-free.

export function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
}

export function createPrivateFile(path: string, text: string): boolean {
  try {
    writeFileSync(path, text, { mode: 0o600, flag: "wx" });
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "EEXIST") return false;
    throw error;
  }
}
