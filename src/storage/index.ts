import type { Config } from "../config.ts";
import type { Logger } from "../lib/log.ts";
import type { Storage } from "./port.ts";
import { openPostgresStorage } from "./postgres/index.ts";
import { openSqliteStorage } from "./sqlite/index.ts";

export type { Storage } from "./port.ts";

/**
 * The storage seam (docs/scaling.md §6): opens the backend the configuration chooses, once, at
 * start. PostgreSQL when `CRM_DATABASE_URL` is set (src/storage/postgres/), else the
 * SQLite file at `CRM_DB_PATH` (src/storage/sqlite/). Both implement the port
 * (src/storage/port.ts); the domains get it and never ask which it is. `reader`: open
 * SQLite's read-only second connection for the dispatcher (the server does; a CLI
 * command does not need it).
 */
export async function openStorage(config: Config, options: { reader?: boolean; log?: Logger } = {}): Promise<Storage> {
  if (config.CRM_DATABASE_URL) return openPostgresStorage(config.CRM_DATABASE_URL, config, options);
  return openSqliteStorage(config, options);
}
