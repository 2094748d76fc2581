import { resolve } from "node:path";
import { ConfigError, configSchema, type Config } from "../config.ts";
import { openDatabase } from "../storage/sqlite/open.ts";
import { openPostgres } from "../storage/postgres/open.ts";
import { runtime } from "../runtime/index.ts";
import { checkSecretKey, existingSecretBox } from "../secrets/secret-box.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";
import { COPY_ORDER, copyTables } from "./copy-tables.ts";

/** The rule CRM_DATABASE_URL is held to: postgres:// or postgresql://, a host and a database. */
const postgresUrl = configSchema.shape.CRM_DATABASE_URL.unwrap();

const count = (n: number) => n.toLocaleString("en-US");

/**
 * `crm copy-to-postgres URL [--json]` (docs/scaling.md §6): how a user moves from one machine to
 * several. Copies the whole SQLite database CRM_DB_PATH names (migrated to this build's
 * schema first) into the empty PostgreSQL database at URL (given its schema here): every
 * row, the same ids and contact numbers, the settings (the cursor secret and the sealed
 * key check), webhook secrets and stored answers sealed as they are (so the nodes must use
 * the same CRM_SECRET_KEY), events and pending deliveries. One transaction: all or nothing.
 *
 * The source is always the SQLite file, also when CRM_DATABASE_URL is set (main.ts runs
 * this before opening the configured storage). Returns the exit code: 0, or 1 when the
 * copy failed (rolled back; a one-line reason on stderr). Wrong use is a UsageError (2).
 */
export async function copyToPostgresCommand(config: Config, { values, args }: Input<"copy-to-postgres">): Promise<number> {
  const url = args[0]!;
  if (!postgresUrl.safeParse(url).success) {
    throw new UsageError("URL must be a PostgreSQL URL like postgres://user:password@host:5432/database (or postgresql://)");
  }
  const path = resolve(config.CRM_DB_PATH);
  // Opening would create an empty database: a mistyped CRM_DB_PATH must not "copy" nothing.
  if (runtime.fileSize(path) === null) throw new UsageError(`no SQLite database at ${path} (CRM_DB_PATH): nothing to copy`);

  const started = performance.now();
  const source = await openDatabase(path, config.CRM_SYNCHRONOUS);
  try {
    // The key check travels with the settings: written here when the file predates it, so
    // a node started on the copy with another key is refused at start (src/secrets/secret-box.ts).
    const secrets = existingSecretBox(config.CRM_SECRET_KEY, path);
    if (secrets) await checkSecretKey(source.db, secrets);
    const tables = await copyInto(url, source.raw);
    const ms = Math.round(performance.now() - started);
    const width = Math.max(...COPY_ORDER.map((t) => t.length));
    const lines = COPY_ORDER.map((t) => `${t.padEnd(width)}  ${count(tables[t]).padStart(11)}`);
    const rows = Object.values(tables).reduce((a, b) => a + b, 0);
    lines.push(
      `Copied ${count(rows)} rows from ${path} into PostgreSQL in ${ms} ms.`,
      "Start every node with the CRM_SECRET_KEY this database was sealed with (or its secret.key).",
    );
    output(values.json, { tables, ms }, lines.join("\n"));
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) throw error;
    const reason = String((error as Error)?.message ?? error).split("\n")[0];
    console.error(`crm: copy-to-postgres failed; nothing was copied: ${reason}`);
    return 1;
  } finally {
    await source.close();
  }
}

/** Opens the target (creating its schema), copies on one connection, closes it. */
async function copyInto(url: string, sqlite: Parameters<typeof copyTables>[0]) {
  const target = await openPostgres(url, 1);
  try {
    const client = await target.pool.connect();
    try {
      const tables = await copyTables(sqlite, client);
      // Planner statistics now, not when autovacuum gets round to it: the first requests on
      // the copy would otherwise be planned without any (docs/scaling.md).
      await client.query("ANALYZE");
      return tables;
    } finally {
      client.release();
    }
  } finally {
    await target.close();
  }
}

