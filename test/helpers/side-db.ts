/**
 * A second connection to a running server's database, beside the server, for the few tests
 * that read (or change) the database underneath it: bun:sqlite on CRM_DB_PATH, or a `pg`
 * client on CRM_DATABASE_URL when the server runs on PostgreSQL (CRM_TEST_BACKEND=postgres).
 * SQL is written once with `?` placeholders (numbered `$1, $2, …` for PostgreSQL); bigint
 * answers such as count(*) are numbers on both.
 */
import { Database } from "bun:sqlite";
import type { Client } from "pg";
import { pgClient } from "./postgres.ts";
import { sleep } from "./spawn.ts";

export interface SideDatabase {
  backend: "sqlite" | "postgres";
  /** Insertion order of an append-only table's rows: SQLite's rowid, PostgreSQL's ctid. */
  insertionOrder: string;
  all<T = Record<string, any>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, any>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** A statement (several, without parameters) whose rows are not wanted. */
  run(sql: string, ...params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

/** `?` placeholders (outside quotes) → `$1, $2, …`. */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  let out = "";
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "?") {
      out += `$${++n}`;
      continue;
    }
    out += ch;
  }
  return out;
}

/** Opens the database of the server whose environment is `env` (a handle's `env`). */
export async function openSideDatabase(env: Record<string, string | undefined>, opts: { readonly?: boolean } = {}): Promise<SideDatabase> {
  if (env.CRM_DATABASE_URL) {
    const client: Client = await pgClient(env.CRM_DATABASE_URL);
    if (opts.readonly) await client.query("SET default_transaction_read_only = on");
    const all = async (sql: string, ...params: unknown[]) => (await client.query(numberPlaceholders(sql), params)).rows;
    return {
      backend: "postgres",
      insertionOrder: "ctid",
      all,
      get: async (sql, ...params) => (await all(sql, ...params))[0],
      run: async (sql, ...params) => {
        await client.query(params.length ? numberPlaceholders(sql) : sql, params.length ? params : undefined);
      },
      close: () => client.end(),
    };
  }
  if (!env.CRM_DB_PATH) throw new Error("openSideDatabase: neither CRM_DATABASE_URL nor CRM_DB_PATH in the environment");
  const db = new Database(env.CRM_DB_PATH, opts.readonly ? { readonly: true } : {});
  // No busy_timeout: SQLite's busy handler waits synchronously, which blocks this process's
  // event loop; a server running in this process (test/helpers/in-process.ts) that holds the
  // write lock across an await could then never finish its transaction, and the wait ran
  // out every time (SQLITE_BUSY after 10 s). `whenFree` waits for the lock asynchronously.
  const all = (sql: string, ...params: unknown[]) => whenFree(() => db.query(sql).all(...(params as any[])) as any[]);
  return {
    backend: "sqlite",
    insertionOrder: "rowid",
    all,
    get: (sql, ...params) => whenFree(() => (db.query(sql).get(...(params as any[])) ?? undefined) as any),
    run: (sql, ...params) =>
      whenFree(() => {
        if (params.length) db.query(sql).run(...(params as any[]));
        else db.exec(sql);
      }),
    close: async () => db.close(),
  };
}

/**
 * Runs `step` on the side connection; while the database is locked (the server writing, in
 * this process or another), waits a few ms, never the event loop, up to 10 s. A step of
 * several statements is tried again whole: give those only to a database no server writes.
 */
async function whenFree<T>(step: () => T): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return step();
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY") !== true || Date.now() > deadline) throw error;
      await sleep(5);
    }
  }
}
