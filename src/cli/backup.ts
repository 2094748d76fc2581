import { resolve } from "node:path";
import type { Storage } from "../storage/index.ts";
import { runtime } from "../runtime/index.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

/**
 * `crm backup FILE` (docs/cli.md §6.1): a consistent copy of the live database, also while
 * the server runs, made by the storage (`Storage.backup`: SQLite's `VACUUM INTO`; a
 * PostgreSQL database is refused with what backs it up instead). An existing FILE is never
 * overwritten. The copy is created with mode 0600, its folder (when made here) 0700.
 */
export async function backupCommand(storage: Storage, { values, args }: Input<"backup">): Promise<void> {
  if (storage.backup.refusal !== null) throw new UsageError(storage.backup.refusal);
  const path = resolve(args[0]!);
  if (runtime.fileSize(path) !== null) throw new UsageError(`${path} exists; refusing to overwrite it`);
  runtime.mkdirp(resolve(path, ".."));
  // The copy holds what the database holds: owner-only like it (docs/api.md §7). The copy
  // is written into an empty file and keeps its mode; one left over from a failed copy is removed.
  if (!runtime.createPrivateFile(path, "")) throw new UsageError(`${path} exists; refusing to overwrite it`);
  const started = performance.now();
  try {
    storage.backup.copyInto(path);
  } catch (error) {
    runtime.removeFile(path);
    throw error;
  }
  const bytes = runtime.fileSize(path) ?? 0;
  const ms = performance.now() - started;
  output(values.json, { path, bytes, ms }, `Backed up the database to ${path} (${bytes.toLocaleString("en-US")} bytes, ${ms} ms).`);
}
