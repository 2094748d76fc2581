// Deno 2 runtime: node:sqlite behind the same interface as Bun (docs/operations.md §1).
import { DatabaseSync } from "node:sqlite";
import { createReadStream, statSync } from "node:fs";
import { createPrivateFile, mkdirp, readStdinLine, readText, removeFile } from "./files.ts";
import { fileSink, renameFile, stdoutSink } from "./sink.ts";
import process from "node:process";
import { bindable, nodeSqliteDialect, type SyncDatabase } from "./node-sqlite-dialect.ts";
import type { Runtime, SqliteHandle } from "./types.ts";

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: () => void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
  stdout: { isTerminal(): boolean };
};

function openSqlite(path: string): SqliteHandle {
  const database = new DatabaseSync(path) as unknown as SyncDatabase;
  return {
    dialect: nodeSqliteDialect(database),
    exec: (sql) => database.exec(sql),
    all: (sql, params = []) => database.prepare(sql).all(...params.map(bindable)) as never,
    // node:sqlite cannot say whether a transaction is open in every Deno version: always through Kysely.
    readNow: () => null,
    close: () => database.close(),
  };
}

export const denoRuntime: Runtime = {
  name: "deno",
  openSqlite,
  serve({ port, hostname, fetch }) {
    const server = Deno.serve({ port, hostname, onListen: () => {} }, (request, info) =>
      fetch(request, { ip: info.remoteAddr.hostname }),
    );
    return { port: server.addr.port, stop: () => server.shutdown() };
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
  isTerminal: () => Deno.stdout.isTerminal(),
};
