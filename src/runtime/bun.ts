import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { createPrivateFile, readText } from "./files.ts";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { immediateTransactions } from "./immediate.ts";
import type { Runtime, SqliteHandle } from "./types.ts";

/**
 * kysely-bun-sqlite calls `prepare` for every query; preparing costs more than most of our
 * queries, so `prepare` answers from Bun's statement cache (`query`) instead.
 */
class CachedStatementDatabase extends Database {
  // @ts-expect-error: same statement type, narrower generics than the base signature
  override prepare(sql: string) {
    return this.query(sql);
  }
}

function openSqlite(path: string): SqliteHandle {
  const database = new CachedStatementDatabase(path, { create: true });
  return {
    dialect: immediateTransactions(new BunSqliteDialect({ database: database as unknown as Database })),
    exec: (sql) => database.exec(sql),
    all: (sql, params = []) => database.query(sql).all(...(params as never[])) as never,
    close: () => database.close(),
  };
}

export const bunRuntime: Runtime = {
  name: "bun",
  openSqlite,
  serve({ port, hostname, fetch }) {
    const server = Bun.serve({
      port,
      hostname,
      // Our own body middleware answers 413 with the envelope (decisions §8); Bun's cap sits above it.
      maxRequestBodySize: 1024 * 1024 * 1024,
      fetch: (request, srv) => fetch(request, { ip: srv.requestIP(request)?.address ?? "unknown" }),
    });
    return { port: server.port ?? port, stop: () => server.stop(false) };
  },
  env: () => process.env,
  args: () => process.argv.slice(2),
  onSignal: (signal, handler) => void process.on(signal, handler),
  exit: (code) => process.exit(code),
  mkdirp: (path) => void mkdirSync(path, { recursive: true }),
  readText,
  createPrivateFile,
  isTerminal: () => Boolean(process.stdout.isTTY),
};
