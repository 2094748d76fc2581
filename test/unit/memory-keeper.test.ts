import { describe, expect, test } from "bun:test";
import { MEMORY_TARGET_BYTES, memoryKeeper } from "../../src/jobs/memory.ts";

const MB = 1024 * 1024;

/** A process whose RSS is `rss` and whose collection brings it to `afterCollect()`. */
function fakeProcess(rss: number, afterCollect: (before: number) => number) {
  const state = { rss, collections: 0 };
  const keep = memoryKeeper(
    () => {
      state.collections += 1;
      state.rss = afterCollect(state.rss);
    },
    () => state.rss,
  );
  return { state, keep };
}

describe("the soft memory target (src/jobs/memory.ts)", () => {
  test("under the target nothing is collected", () => {
    const { state, keep } = fakeProcess(MEMORY_TARGET_BYTES - MB, (r) => r);
    for (let i = 0; i < 10; i++) keep();
    expect(state.collections).toBe(0);
  });

  test("past the target a collection runs at each check while it gives memory back", () => {
    const { state, keep } = fakeProcess(MEMORY_TARGET_BYTES + 40 * MB, () => MEMORY_TARGET_BYTES - 10 * MB);
    for (let i = 0; i < 5; i++) {
      keep();
      state.rss = MEMORY_TARGET_BYTES + 40 * MB; // a second of load grows it again
    }
    expect(state.collections).toBe(5);
  });

  test("a collection that frees little while staying past the target backs off, doubling up to a minute", () => {
    const { state, keep } = fakeProcess(MEMORY_TARGET_BYTES + 100 * MB, (r) => r - MB);
    const checksAtCollection: number[] = [];
    for (let check = 0; check < 400; check++) {
      const before = state.collections;
      keep();
      if (state.collections > before) checksAtCollection.push(check);
    }
    const gaps = checksAtCollection.slice(1).map((c, i) => c - checksAtCollection[i]!);
    expect(gaps.slice(0, 7)).toEqual([2, 3, 5, 9, 17, 33, 61]);
    expect(Math.max(...gaps)).toBe(61);
  });

  test("back under the target, the back-off is forgotten", () => {
    const { state, keep } = fakeProcess(MEMORY_TARGET_BYTES + 100 * MB, (r) => r - MB);
    keep(); // collects, frees little: skips the next check
    keep();
    state.rss = MEMORY_TARGET_BYTES - MB;
    keep();
    state.rss = MEMORY_TARGET_BYTES + 100 * MB;
    keep();
    expect(state.collections).toBe(2);
  });

  test("where the runtime cannot collect (Deno), it does nothing", () => {
    const keep = memoryKeeper(undefined, () => MEMORY_TARGET_BYTES * 10);
    expect(() => keep()).not.toThrow();
  });
});
