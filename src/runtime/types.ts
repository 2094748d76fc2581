import type { Dialect } from "kysely";
import type { TextSink } from "./sink.ts";

export type { TextSink };

/** An open SQLite database: the Kysely dialect plus the few raw operations Kysely lacks. */
export interface SqliteHandle {
  dialect: Dialect;
  /** Runs one or more statements without results (pragmas, migrations). */
  exec(sql: string): void;
  /** Runs one query and returns its rows (pragmas that answer, backups). */
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): T[];
  /**
   * Runs a read at once, from the statement cache, when no transaction is open on the
   * connection; null when one is (the caller then waits its turn through Kysely, so it
   * never sees another request's uncommitted rows) or the runtime cannot tell.
   */
  readNow(sql: string, params: readonly unknown[]): unknown[] | null;
  /**
   * Runs any statement at once in the transaction the caller holds (a group-commit batch):
   * its rows when it returns some (`rows`), else none. Absent where the runtime has no such
   * path (Deno): the caller goes through Kysely.
   */
  runInTransaction?(sql: string, params: readonly unknown[], rows: boolean): unknown[];
  close(): void;
}

export interface ServeOptions {
  port: number;
  hostname: string;
  /** `env.ip` carries the client address to Hono handlers. */
  fetch(request: Request, env: { ip: string }): Response | Promise<Response>;
}

export interface RunningServer {
  port: number;
  /** Stops accepting and resolves when requests in flight are answered. */
  stop(): Promise<void>;
}

/** Everything that differs between Bun and Deno (docs/operations.md §1): nothing else imports a runtime. */
export interface Runtime {
  name: "bun" | "deno";
  openSqlite(path: string): SqliteHandle;
  serve(options: ServeOptions): RunningServer;
  env(): Record<string, string | undefined>;
  args(): string[];
  onSignal(signal: "SIGTERM" | "SIGINT", handler: () => void): void;
  exit(code: number): never;
  /** Creates a folder and its parents, owner-only (0700), as the database's folder must be (docs/operations.md §3.1). */
  mkdirp(path: string): void;
  /** The first line of standard input (a password piped to `crm admin create`). */
  readStdinLine(): Promise<string>;
  /** Reads a file as text; null when it does not exist. */
  readText(path: string): string | null;
  /** Creates a file readable by its owner only (mode 0600); false when it already exists. */
  createPrivateFile(path: string, text: string): boolean;
  /** Removes a file; nothing when it is not there. */
  removeFile(path: string): void;
  isTerminal(): boolean;
  /** Size of a file in bytes; null when it does not exist (import progress, backup). */
  fileSize(path: string): number | null;
  /** A file as a stream of byte chunks, read in constant memory (`crm import`). */
  readStream(path: string): AsyncIterable<Uint8Array>;
  /** Standard output (no path) or a new owner-only file, written with backpressure (`crm export`, src/runtime/sink.ts). */
  openSink(path?: string): Promise<TextSink>;
  /** Renames a file onto another in one step (`crm export --output`: FILE appears only whole). */
  renameFile(from: string, to: string): Promise<void>;
  /** Writes to stderr without adding a line break (a progress bar redrawn with \r). */
  writeStderr(text: string): void;
  /** A full garbage collection now, where the runtime offers one (Bun); absent on Deno. */
  collectGarbage?: () => void;
}
