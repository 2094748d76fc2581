/**
 * src/jobs/statistics.ts: bulk-write notes are debounced into one statistics pass after the
 * load goes quiet, never run inside the caller, and one pass at a time (docs/performance.md,
 * "Plans right after a bulk load").
 */
import { expect, test } from "bun:test";
import { StatisticsWatch } from "../../src/jobs/statistics.ts";
import { createLogger } from "../../src/lib/log.ts";

const log = createLogger("error");

test("many notes in a row give one pass, after them; the note itself runs nothing", async () => {
  let passes = 0;
  const watch = new StatisticsWatch(async () => (passes++, ["contacts"]), log);
  for (let i = 0; i < 20; i++) watch.noteRowsWritten("contacts", 1000);
  expect(passes).toBe(0);
  await Bun.sleep(900);
  expect(passes).toBe(1);
  expect(watch.stats.refreshes).toBe(1);
  await watch.stop();
});

test("a load that goes on is checked while it runs (at most 3 s after its first note)", async () => {
  let passes = 0;
  const watch = new StatisticsWatch(async () => (passes++, []), log);
  const started = performance.now();
  while (performance.now() - started < 3_600) {
    watch.noteRowsWritten("contacts", 1000);
    await Bun.sleep(100);
  }
  expect(passes).toBeGreaterThanOrEqual(1);
  await watch.stop();
});

test("checks never overlap: one asked for while one runs follows it", async () => {
  let running = 0;
  let most = 0;
  let passes = 0;
  const watch = new StatisticsWatch(async () => {
    running++;
    most = Math.max(most, running);
    await Bun.sleep(50);
    running--;
    passes++;
    return [];
  }, log);
  await Promise.all([watch.check(), watch.check(), watch.check()]);
  expect(most).toBe(1);
  expect(passes).toBe(2);
  await watch.stop();
});

test("a failing pass is logged, not thrown", async () => {
  const watch = new StatisticsWatch(async () => {
    throw new Error("database is locked");
  }, log);
  await watch.check();
  await watch.stop();
});
