import process from "node:process";
import { setImmediate } from "node:timers";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type LogLevel = keyof typeof LEVELS;

/**
 * JSON lines on stdout (docs/operations.md §4). Callers pass fields, never keys or secrets: the
 * request log carries only ids (docs/operations.md §4.3).
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether lines of `level` are written: a hot path skips building fields nobody reads. Absent: all are. */
  wants?(level: LogLevel): boolean;
}

/**
 * Lines wait for the end of the event-loop turn and leave in one write: under load one
 * write per turn instead of one per request, and no request waits on stdout
 * (docs/performance.md). What is still waiting is written when the process exits.
 */
const pending: string[] = [];
let scheduled = false;
let flushesAtExit = false;

function flush() {
  scheduled = false;
  if (pending.length === 0) return;
  const text = pending.join("\n");
  pending.length = 0;
  console.log(text);
}

function writeLine(line: string) {
  pending.push(line);
  if (scheduled) return;
  if (!flushesAtExit) {
    flushesAtExit = true;
    process.on("exit", flush);
  }
  scheduled = true;
  setImmediate(flush);
}

export function createLogger(level: LogLevel): Logger {
  const min = LEVELS[level];
  const write = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    writeLine(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error"), wants: (lvl) => LEVELS[lvl] >= min };
}
