import { runtime } from "../runtime/index.ts";

const count = (n: number) => n.toLocaleString("en-US");

/**
 * Progress of a long CLI run on stderr (docs/cli.md §4: `crm import`): on a terminal one line
 * redrawn with \r at most ten times a second (bar by bytes read, rows, rate); otherwise a
 * plain line every `every` rows, so logs of a piped run stay short.
 */
export function progress(label: string, totalBytes: number | null, every = 10_000) {
  const tty = runtime.isTerminal();
  const started = performance.now();
  let lastDraw = 0;
  let nextLine = every;

  const line = (rows: number, bytes: number) => {
    const seconds = Math.max((performance.now() - started) / 1000, 0.001);
    const rate = `${count(Math.round(rows / seconds))} rows/s`;
    const share = totalBytes ? Math.min(bytes / totalBytes, 1) : null;
    const percent = share === null ? "" : ` ${Math.floor(share * 100)}%`;
    if (!tty) return `${label}: ${count(rows)} rows${percent}, ${rate}`;
    const width = 24;
    const bar = share === null ? "" : `[${"#".repeat(Math.round(share * width)).padEnd(width, ".")}]`;
    return `${label} ${bar}${percent}  ${count(rows)} rows  ${rate}`;
  };

  return {
    update(rows: number, bytes: number) {
      if (tty) {
        const now = performance.now();
        if (now - lastDraw < 100) return;
        lastDraw = now;
        runtime.writeStderr(`\r${line(rows, bytes)}\x1b[K`);
      } else if (rows >= nextLine) {
        nextLine = rows - (rows % every) + every;
        console.error(line(rows, bytes));
      }
    },
    done(rows: number, bytes: number) {
      if (tty) runtime.writeStderr(`\r${line(rows, bytes)}\x1b[K\n`);
      else console.error(`${line(rows, bytes)} (done)`);
    },
  };
}
