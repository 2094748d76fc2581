import { Database } from "bun:sqlite";
import { createReadStream, statSync } from "node:fs";
import { createPrivateFile, mkdirp, readStdinLine, readText, removeFile } from "./files.ts";
import { fileSink, renameFile, stdoutSink } from "./sink.ts";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { immediateTransactions } from "./immediate.ts";
import type { Runtime, SqliteHandle } from "./types.ts";

const STATEMENT_CACHE_SIZE = 500;

/**
 * kysely-bun-sqlite calls `prepare` for every query; preparing costs more than most of our
 * queries (≈11 µs against ≈0.4 µs), so `prepare` answers from a statement cache. Bun's own
 * (`query`) keeps only 20 statements, fewer than one mixed workload uses, so ours is larger.
 */
class CachedStatementDatabase extends Database {
  private readonly statements = new Map<string, ReturnType<Database["prepare"]>>();

  // @ts-expect-error: same statement type, narrower generics than the base signature
  override prepare(sql: string) {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const [oldest, evicted] = this.statements.entries().next().value!;
        this.statements.delete(oldest);
        evicted.finalize();
      }
      statement = super.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

function openSqlite(path: string): SqliteHandle {
  const database = new CachedStatementDatabase(path, { create: true });
  return {
    dialect: immediateTransactions(new BunSqliteDialect({ database: database as unknown as Database })),
    exec: (sql) => database.exec(sql),
    all: (sql, params = []) => database.query(sql).all(...(params as never[])) as never,
    readNow: (sql, params) => (database.inTransaction ? null : database.prepare(sql).all(params as never)),
    runInTransaction: (sql, params, rows) => {
      const statement = database.prepare(sql);
      if (rows) return statement.all(params as never);
      statement.run(params as never);
      return [];
    },
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
      // Our own body middleware answers 413 with the envelope (docs/api.md §4); Bun's cap sits above it.
      maxRequestBodySize: 1024 * 1024 * 1024,
      fetch: (request, srv) => fetch(request, { ip: srv.requestIP(request)?.address ?? "unknown" }),
    });
    return { port: server.port ?? port, stop: () => server.stop(false) };
  },
  env: () => process.env,
  args: () => process.argv.slice(2),
  onSignal: (signal, handler) => void process.on(signal, handler),
  exit: (code) => process.exit(code),
  mkdirp,
  readText,
  readStdinLine,
  createPrivateFile,
  removeFile,
  fileSize: (path) => statSync(path, { throwIfNoEntry: false })?.size ?? null,
  readStream: (path) => createReadStream(path, { highWaterMark: 64 * 1024 }),
  openSink: async (path) => (path === undefined ? stdoutSink() : fileSink(path)),
  renameFile,
  writeStderr: (text) => void process.stderr.write(text),
  collectGarbage: () => Bun.gc(true),
  isTerminal: () => Boolean(process.stdout.isTTY),
};
