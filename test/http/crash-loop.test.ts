/**
 * Crash loop, short version (docs/operations.md §3.1, docs/webhooks.md §2.2, §2): writers issue mixed
 * creates, patches and interaction logs while the server is killed with kill -9 three times
 * and restarted on the same database. Every write acknowledged with a 2xx is there after
 * each restart (a patch: its value or a later one), and every event GET /events lists
 * reaches a loopback receiver at least once, with one X-Service-Delivery id per event.
 * Seeded (stress/crash-loop.ts: DEFAULT_SEED, or CRASH_LOOP_SEED to explore; the seed is in
 * every failure message). Each kill comes after a seeded number of acknowledged writes with
 * every kind among them, not after a time, so the run does the same work on any machine.
 * The 20-kill version is `bun stress/crash-loop.ts` (npm run stress).
 */
import { testBackend } from "../helpers/postgres.ts";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { crashLoopSeed, runCrashLoop } from "../../stress/crash-loop.ts";

setDefaultTimeout(120_000);

describe("crash loop", () => {
  test("3 × kill -9 under mixed writes: every acknowledged write survives and every event is delivered once per delivery id", async () => {
    const seed = crashLoopSeed();
    const { figures, problems } = await runCrashLoop({
      kills: 3,
      writers: 3,
      seed,
      minWritesPerLife: 40,
      maxWritesPerLife: 120,
      minEachKindPerLife: 5,
      // On PostgreSQL a killed node's claims come back when their 30 s lease ends (docs/scaling.md §6).
      deliveryTimeoutMs: testBackend() === "postgres" ? 45_000 : 25_000,
    });
    const summary = `seed ${seed} (rerun: CRASH_LOOP_SEED=${seed}): ${JSON.stringify(figures)}`;
    expect(problems, summary).toEqual([]);
    expect(figures.seed).toBe(seed);
    expect(figures.starts, summary).toBe(4);
    expect(figures.serverErrors, summary).toBe(0);
    expect(figures.otherStatuses, summary).toEqual({});
    // Each process was killed only after serving its seeded share, every kind among it.
    expect(figures.perLife, summary).toHaveLength(4);
    figures.perLife.forEach((life, i) => {
      expect(life.total, summary).toBeGreaterThanOrEqual(figures.writeTargets[i]!);
      expect(Math.min(life.creates, life.patches, life.interactions), summary).toBeGreaterThanOrEqual(5);
    });
    // Every acknowledged write fired its event; only a write cut by a kill (no answer) may
    // have committed one more.
    const { acknowledged, eventsByType, unanswered } = figures;
    for (const [type, acked] of [
      ["contact.created", acknowledged.creates],
      ["contact.updated", acknowledged.patches],
      ["interaction_log.created", acknowledged.interactions],
    ] as const) {
      expect(eventsByType[type] ?? 0, `${type}; ${summary}`).toBeGreaterThanOrEqual(acked);
      expect(eventsByType[type] ?? 0, `${type}; ${summary}`).toBeLessThanOrEqual(acked + unanswered);
    }
    expect(Object.keys(eventsByType).sort(), summary).toEqual(["contact.created", "contact.updated", "interaction_log.created"]);
    // Every event delivered, each under exactly one delivery id.
    expect(figures.distinctEventIdsDelivered, summary).toBe(figures.events);
    expect(figures.distinctDeliveryIds, summary).toBe(figures.events);
    console.log(`crash loop (short): ${summary}`);
  });
});
