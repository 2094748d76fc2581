import type { Runtime } from "./types.ts";

export type { Runtime, SqliteHandle, RunningServer } from "./types.ts";

/** The one runtime switch of the code base (docs/operations.md §1): Bun, or Deno with node:sqlite. */
export const runtime: Runtime =
  typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"
    ? (await import("./bun.ts")).bunRuntime
    : (await import("./deno.ts")).denoRuntime;
