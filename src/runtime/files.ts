import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import process from "node:process";

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

/** Creates a folder and its missing parents with mode 0700 (docs/operations.md §3.1); an existing one is left as it is. */
export function mkdirp(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
}

/** Removes a file if it is there. */
export function removeFile(path: string): void {
  rmSync(path, { force: true });
}

/** The first line of standard input (without its line break), or all of it when it has none: a password piped to the CLI. */
export async function readStdinLine(): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of process.stdin as AsyncIterable<Uint8Array | string>) {
    text += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    const end = text.indexOf("\n");
    if (end >= 0) return text.slice(0, end).replace(/\r$/, "");
  }
  return text.replace(/\r$/, "");
}
