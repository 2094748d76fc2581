import { parseArgs } from "node:util";

export class UsageError extends Error {}

/** Parses `--name value` options of one command; unknown options are usage errors. */
export function options<T extends Record<string, { type: "string" | "boolean" }>>(argv: string[], spec: T) {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...spec, json: { type: "boolean" } }, allowPositionals: true, strict: true });
    return { values: values as { [K in keyof T]?: T[K]["type"] extends "boolean" ? boolean : string } & { json?: boolean }, positionals };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === "") throw new UsageError(`${flag} is required`);
  return value;
}

export function integer(value: string | undefined, flag: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be an integer ≥ ${min}`);
  return n;
}

/** One JSON object with --json, else the human text (decisions §3). */
export function output(json: boolean | undefined, value: object, human: string): void {
  console.log(json ? JSON.stringify(value) : human);
}
