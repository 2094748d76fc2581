import { Kysely } from "kysely";
import { runtime } from "../../runtime/index.ts";
import { enableDirectReads } from "./direct.ts";
import type { Database } from "../schema.ts";

/**
 * A second, read-only connection to the SQLite file, for the webhook dispatcher's lookups.
 * In WAL mode a reader never waits for the writer and sees only committed rows, so finding
 * due deliveries does not queue behind the write requests' group commits (docs/operations.md §3.1:
 * deliveries at loopback speed while creates run at full speed). Null for `:memory:`, where
 * a second connection would open another, empty database.
 */
export function openReader(path: string): { db: Kysely<Database>; close(): Promise<void> } | null {
  if (path === ":memory:") return null;
  const raw = runtime.openSqlite(path);
  raw.exec("PRAGMA busy_timeout = 5000");
  raw.exec("PRAGMA query_only = 1");
  // Its lookups touch a few index pages; a small cache keeps the second connection cheap.
  raw.exec("PRAGMA cache_size = -2048");
  const db = new Kysely<Database>({ dialect: raw.dialect });
  enableDirectReads(db, raw);
  return { db, close: () => db.destroy() };
}
