/**
 * Preload for the server (`bun --preload bench/mem-probe.ts src/main.ts serve`): every 500 ms
 * writes process.memoryUsage() to MEM_PROBE_OUT as one JSON line, so an
 * RSS figure can be split into JS heap and native memory (SQLite page cache, Bun, buffers).
 * (process.memoryUsage() only: bun:jsc heapStats() walks the heap and costs ~13 % CPU.)
 */
import { appendFileSync } from "node:fs";

const out = process.env.MEM_PROBE_OUT;
if (out) {
  setInterval(() => {
    const m = process.memoryUsage();
    appendFileSync(out, JSON.stringify({ t: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }) + "\n");
  }, 500).unref();
}
