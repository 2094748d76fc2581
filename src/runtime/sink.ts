import { open, rename, rm } from "node:fs/promises";
import process from "node:process";

// node:fs and process.stdout behave the same under Bun and Deno; kept here so the rest stays runtime-free.

/**
 * Where `crm export` writes (docs/import-export.md §2): text in order, each write awaited, so a slow
 * reader slows the writer instead of text piling up in memory (constant memory).
 */
export interface TextSink {
  write(text: string): Promise<void>;
  /** Every byte written is on disk (a file, fsync'ed) or handed to standard output. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/**
 * A new file, owner-only (0600: an export holds personal data); an older file of that name
 * is replaced. Each write is awaited until the bytes are in the file.
 */
export async function fileSink(path: string): Promise<TextSink> {
  await rm(path, { force: true });
  const handle = await open(path, "wx", 0o600);
  let closed = false;
  // One buffer, reused: a fresh one per chunk is garbage the collector lets pile up (RSS
  // grew with the export's length). UTF-8 needs at most 3 bytes per UTF-16 code unit.
  let buffer = new Uint8Array(0);
  return {
    async write(text) {
      if (buffer.length < text.length * 3) buffer = new Uint8Array(text.length * 3);
      const { written } = encoder.encodeInto(text, buffer);
      let done = 0;
      while (done < written) done += (await handle.write(buffer, done, written - done)).bytesWritten;
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    },
  };
}

/**
 * Standard output with backpressure: a write that fills the stream's buffer waits for
 * `drain` (Bun); where writes to a pipe block (Deno) it never has to. A reader that went
 * away (`crm export | head`) fails the next write with its error (EPIPE).
 */
export function stdoutSink(): TextSink {
  const out = process.stdout;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const onError = (error: Error) => {
    failure = error;
    wake?.();
  };
  const onDrain = () => wake?.();
  out.on("error", onError);
  out.on("drain", onDrain);
  const check = () => {
    if (failure) throw failure;
  };
  return {
    async write(text) {
      check();
      if (!out.write(text)) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      check();
    },
    async close() {
      // The callback of the last write runs once every earlier write is handed over.
      await new Promise<void>((resolve) => out.write("", (error) => resolve(void (error && (failure ??= error)))));
      out.off("error", onError);
      out.off("drain", onDrain);
      check();
    },
  };
}

/** Moves a file onto another name in one step (POSIX rename): a reader sees the old file or the whole new one. */
export const renameFile = (from: string, to: string) => rename(from, to);
