/**
 * /readyz asks the dispatcher whether it is alive (decisions §11): busy is not dead. A
 * tick waiting its turn on a database held by a long write stays alive; only a tick stuck
 * for a minute, or a stopped dispatcher, is not.
 */
import { expect, test } from "bun:test";
import { openDatabase } from "../../src/db/open.ts";
import { Dispatcher } from "../../src/webhooks/dispatcher.ts";
import { SecretBox } from "../../src/webhooks/secret-box.ts";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

test("a dispatcher whose tick waits on a busy database is alive until the tick has waited a minute", async () => {
  const { db, close } = await openDatabase(":memory:", "NORMAL");
  let now = 1_000_000;
  const webhooks = { secrets: new SecretBox(Buffer.alloc(32)), env: "sandbox" as const, resolve: async () => [], timeoutMs: 1000 };
  const dispatcher = new Dispatcher({ db, webhooks, schedule: [1000], pollMs: 60_000, log: silent, clock: () => now });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  // A long write holds the one connection: the tick's queries wait their turn behind it.
  const holding = db.transaction().execute(() => gate);
  dispatcher.start();
  expect(dispatcher.alive()).toBe(true);
  now += 30_000;
  expect(dispatcher.alive()).toBe(true);
  now += 31_000;
  expect(dispatcher.alive()).toBe(false);
  release();
  await holding;
  await dispatcher.stop();
  expect(dispatcher.alive()).toBe(false);
  await close();
});
