import { Kysely } from "kysely";
import { dirname } from "node:path";
import { runtime, type SqliteHandle } from "../../runtime/index.ts";
import type { Database } from "../schema.ts";
import { migrate } from "./migrate.ts";
import { enableDirectReads } from "./direct.ts";
import { refreshStatistics, refreshStatisticsAtOpen } from "./statistics.ts";

export interface OpenDatabase {
  db: Kysely<Database>;
  raw: SqliteHandle;
  close(): Promise<void>;
}

/**
 * Opens the database with its pragmas, in this order (docs/operations.md §3, PocketBase's
 * db_connect): busy_timeout first so the CLI and server wait for each other instead of
 * failing; WAL so readers never block the writer; synchronous from CRM_SYNCHRONOUS
 * (NORMAL survives a process kill in WAL mode, FULL also a power cut); foreign keys on;
 * an 8 MiB page cache, chosen by measurement at 1 M contacts built through the API
 * (docs/performance.md): the hot interior pages fit; a GET one reads ~5 leaf pages of a
 * 550 MB working set that no cache within the RSS budget holds, so 16 or 64 MiB bought no
 * CPU per request (96 µs either way) and cost RSS (149 → 157 → 214 MB under load); mmap
 * saved ~10 % of the CPU for 370 MB of RSS; secure_delete on (docs/security.md §7, docs/security.md
 * §7), so whatever a write frees (an email changed by PATCH, a console upload taken, an erase)
 * is overwritten with zeros, not left in free space: 2,000 PATCHes through the API took as
 * long with it as without (within the noise), a bare update transaction ~7 % longer, and a
 * 20 MiB upload's delete 215 ms instead of 13 (its pages zeroed). Then applies pending migrations.
 */
export async function openDatabase(path: string, synchronous: "NORMAL" | "FULL"): Promise<OpenDatabase> {
  if (path !== ":memory:") {
    // Owner-only (docs/operations.md §3.1): the folder 0700 when we make it; the file 0600 before SQLite
    // opens it, and SQLite gives the -wal and -shm files the mode of the database file.
    runtime.mkdirp(dirname(path));
    runtime.createPrivateFile(path, "");
  }
  const raw = runtime.openSqlite(path);
  raw.exec("PRAGMA busy_timeout = 5000");
  raw.exec("PRAGMA journal_mode = WAL");
  raw.exec(`PRAGMA synchronous = ${synchronous}`);
  raw.exec("PRAGMA foreign_keys = ON");
  raw.exec("PRAGMA cache_size = -8192");
  raw.exec("PRAGMA secure_delete = ON");
  raw.exec("PRAGMA temp_store = MEMORY");
  // Checkpoints every 16,384 WAL pages (64 MiB), not SQLite's 1,000: a bulk load's pages are
  // copied back once rather than many times (+40 % batch creates, docs/performance.md); the
  // log file is cut back to that size after each checkpoint (docs/operations.md §3).
  raw.exec("PRAGMA wal_autocheckpoint = 16384");
  raw.exec(`PRAGMA journal_size_limit = ${64 * 1024 * 1024}`);
  migrate(raw);
  refreshStatisticsAtOpen(raw); // planner statistics for a database filled through the API (src/storage/sqlite/statistics.ts)
  const db = new Kysely<Database>({ dialect: raw.dialect });
  enableDirectReads(db, raw);
  return { db, raw, close: async () => (await refreshStatistics(db).catch(() => undefined), db.destroy()) };
}
