import type { Config } from "../../config.ts";
import { inProcessClaims } from "../claims.ts";
import type { Storage } from "../port.ts";
import { GroupCommit } from "./group-commit.ts";
import { migrationsApplied } from "./migrate.ts";
import { openDatabase } from "./open.ts";
import { openReader } from "./reader.ts";
import { refreshGrownStatistics, refreshStatistics } from "./statistics.ts";

/**
 * The storage port on SQLite (`CRM_DB_PATH`, the embedded default; src/storage/port.ts):
 * one process serves the file, so claims and rate-limit buckets live in its memory and
 * writes share group commits.
 */
export async function openSqliteStorage(config: Config, options: { reader?: boolean }): Promise<Storage> {
  const database = await openDatabase(config.CRM_DB_PATH, config.CRM_SYNCHRONOUS);
  const reader = options.reader ? openReader(config.CRM_DB_PATH) : null;
  const readerDb = reader?.db ?? database.db;
  return {
    db: database.db,
    reader: readerDb,
    newWriteQueue: () => new GroupCommit(database.db),
    claims: inProcessClaims(readerDb),
    refreshStatistics: () => refreshStatistics(database.db),
    refreshGrownStatistics: () => refreshGrownStatistics(database.db),
    backup: {
      refusal: null,
      // One snapshot (in WAL mode writers go on meanwhile), written as a compact,
      // self-contained file a server can start on. SQLite-only SQL, used only here.
      copyInto: (path) => void database.raw.all("VACUUM INTO ?", [path]),
    },
    // The database answers on its own handle, never queued behind writes.
    ready: async () => {
      try {
        return migrationsApplied(database.raw);
      } catch {
        return false;
      }
    },
    close: async () => {
      await reader?.close();
      await database.close();
    },
  };
}
