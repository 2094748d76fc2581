/**
 * Crash loop, short version (decisions §11, §12; interface §6.2): writers issue mixed
 * creates, patches and interaction logs while the server is killed with kill -9 three times
 * at random moments and restarted on the same database. Every write acknowledged with a 2xx
 * is there after each restart (a patch: its value or a later one), and every event GET
 * /events lists reaches a loopback receiver at least once, with one X-Service-Delivery id
 * per event. The 20-kill version is `bun stress/crash-loop.ts` (npm run stress).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { runCrashLoop } from "../../stress/crash-loop.ts";

setDefaultTimeout(60_000);

describe("crash loop", () => {
  test("3 × kill -9 under mixed writes: every acknowledged write survives and every event is delivered at least once", async () => {
    const { figures, problems } = await runCrashLoop({ kills: 3, writers: 3, minAliveMs: 300, maxAliveMs: 1200, deliveryTimeoutMs: 25_000 });
    const summary = JSON.stringify(figures);
    expect(problems, summary).toEqual([]);
    expect(figures.starts).toBe(4);
    // The kills landed on real traffic of every kind.
    expect(figures.acknowledged.creates, summary).toBeGreaterThan(20);
    expect(figures.acknowledged.patches, summary).toBeGreaterThan(10);
    expect(figures.acknowledged.interactions, summary).toBeGreaterThan(10);
    // Every acknowledged write fired its event (a write cut by a kill may have committed too).
    expect(figures.events, summary).toBeGreaterThanOrEqual(figures.acknowledged.total);
    expect(figures.distinctEventIdsDelivered, summary).toBe(figures.events);
    expect(figures.distinctDeliveryIds, summary).toBe(figures.events);
    expect(figures.receiverRequests, summary).toBe(figures.distinctDeliveryIds + figures.duplicates);
    console.log(`crash loop (short): ${summary}`);
  }, 60_000);
});
