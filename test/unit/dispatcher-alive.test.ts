/**
 * /readyz asks the dispatcher whether it is alive (docs/operations.md §4.1): busy is not dead. A
 * tick waiting its turn on a database held by a long write stays alive; only a tick stuck
 * for a minute, or a stopped dispatcher, is not. The minute is read from the service's
 * clock (issue 11), so the test moves that clock instead of waiting.
 */
import { expect, test } from "bun:test";
import { openDatabase } from "../../src/storage/sqlite/open.ts";
import { Dispatcher } from "../../src/webhooks/dispatcher.ts";
import { SecretBox } from "../../src/secrets/secret-box.ts";
import { ManualClock } from "../helpers/clock.ts";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

test("a dispatcher whose tick waits on a busy database is alive until the tick has waited a minute", async () => {
  const { db, close } = await openDatabase(":memory:", "NORMAL");
  const clock = new ManualClock(1_000_000);
  const webhooks = { secrets: new SecretBox(Buffer.alloc(32)), env: "sandbox" as const, resolve: async () => [], timeoutMs: 1000, clock };
  const dispatcher = new Dispatcher({ db, webhooks, schedule: [1000], pollMs: 60_000, log: silent });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  // A long write holds the one connection: the tick's queries wait their turn behind it.
  const holding = db.transaction().execute(() => gate);
  dispatcher.start();
  expect(dispatcher.alive()).toBe(true);
  clock.advance(30_000);
  expect(dispatcher.alive()).toBe(true);
  clock.advance(31_000);
  expect(dispatcher.alive()).toBe(false);
  release();
  await holding;
  await dispatcher.stop();
  expect(dispatcher.alive()).toBe(false);
  await close();
});
