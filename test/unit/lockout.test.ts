/**
 * The sign-in tries' arithmetic (src/admin/lockout.ts; docs/admin.md §2, docs/security.md §4; docs/security.md
 * §4) with time passed in: ten tries a window per subject, the tenth locks for 15 minutes,
 * a refused try counts nowhere, a success gives its try back, the sweep forgets only
 * subjects whose window and lock have both ended. The races themselves are proven over
 * HTTP (test/http/admin-lockout-race.test.ts, test/multinode/admin-lockout.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTry, giveBack, sweepSignInAttempts, type Try } from "../../src/admin/lockout.ts";
import { openDatabase, type OpenDatabase } from "../../src/storage/sqlite/open.ts";

const MINUTE = 60_000;
const T0 = Date.parse("2026-06-30T12:00:00Z");
const dir = mkdtempSync(join(tmpdir(), "crm-lockout-"));
let database: OpenDatabase;

beforeAll(async () => {
  database = await openDatabase(join(dir, "l.db"), "NORMAL");
});

afterAll(async () => {
  await database?.close();
  rmSync(dir, { recursive: true, force: true });
});

const row = (subject: string) => database.db.selectFrom("admin_sign_in_attempts").selectAll().where("subject", "=", subject).executeTakeFirst();
const tries = async (n: number, email: string, address: (i: number) => string, now: number) => {
  const results: Try[] = [];
  for (let i = 0; i < n; i++) results.push(await countTry(database.db, email, address(i), now));
  return results;
};

describe("sign-in tries (docs/admin.md §2)", () => {
  test("ten tries of one email are counted, the tenth locks it: the eleventh is refused for 15 minutes, then a new window opens", async () => {
    const counted = await tries(10, "One@Example.com", (i) => `192.0.2.${i}`, T0);
    expect(counted.every((t) => t.counted)).toBe(true);
    expect(await row("email:one@example.com")).toMatchObject({ attempts: 10, locked_until: new Date(T0 + 15 * MINUTE).toISOString() });
    expect(await countTry(database.db, "one@example.com", "192.0.2.99", T0 + MINUTE)).toEqual({ counted: false, retryAfterSeconds: 14 * 60 });
    expect(await countTry(database.db, "one@example.com", "192.0.2.99", T0 + 15 * MINUTE - 1)).toEqual({ counted: false, retryAfterSeconds: 1 });
    expect((await countTry(database.db, "one@example.com", "192.0.2.99", T0 + 15 * MINUTE)).counted).toBe(true);
    expect(await row("email:one@example.com")).toMatchObject({ attempts: 1, window_start: new Date(T0 + 15 * MINUTE).toISOString(), locked_until: null });
  });

  test("a refused try counts nowhere: the fresh address it came from has no row", async () => {
    await tries(10, "two@example.com", (i) => `192.0.2.${100 + i}`, T0);
    expect((await countTry(database.db, "two@example.com", "198.51.100.50", T0)).counted).toBe(false);
    expect(await row("address:198.51.100.50")).toBeUndefined();
  });

  test("nine tries in a window do not lock; a try 15 minutes after the window opened starts a new one", async () => {
    await tries(9, "three@example.com", () => "203.0.113.9", T0);
    expect(await row("address:203.0.113.9")).toMatchObject({ attempts: 9, locked_until: null });
    await tries(9, "three@example.com", () => "203.0.113.9", T0 + 15 * MINUTE);
    expect(await row("address:203.0.113.9")).toMatchObject({ attempts: 9, locked_until: null });
  });

  test("a success gives its try back: the email is cleared, the address counts one less, and a lock its own try set is lifted", async () => {
    const counted = await tries(10, "four@example.com", () => "203.0.113.10", T0);
    const tenth = counted[9]!;
    if (!tenth.counted) throw new Error("the tenth try was refused");
    expect(await row("address:203.0.113.10")).toMatchObject({ attempts: 10, locked_until: expect.any(String) });
    await giveBack(database.db, tenth);
    expect(await row("email:four@example.com")).toBeUndefined();
    expect(await row("address:203.0.113.10")).toMatchObject({ attempts: 9, locked_until: null });
  });

  test("a success whose try did not set the address's lock leaves that lock", async () => {
    const counted = await tries(10, "five@example.com", () => "203.0.113.11", T0);
    const fifth = counted[4]!;
    if (!fifth.counted) throw new Error("the fifth try was refused");
    await giveBack(database.db, fifth);
    expect(await row("address:203.0.113.11")).toMatchObject({ attempts: 9, locked_until: new Date(T0 + 15 * MINUTE).toISOString() });
    expect((await countTry(database.db, "someone@example.com", "203.0.113.11", T0 + MINUTE)).counted).toBe(false);
  });

  test("the sweep drops subjects whose window and lock have both ended, and keeps a live lock or a live window", async () => {
    await tries(9, "eight@example.com", () => "203.0.113.20", T0 + 60 * MINUTE);
    await tries(1, "eight@example.com", () => "203.0.113.20", T0 + 70 * MINUTE); // the tenth: locked until T0 + 85 min
    await tries(1, "nine@example.com", () => "203.0.113.21", T0 + 70 * MINUTE); // window until T0 + 85 min
    await tries(1, "ten@example.com", () => "203.0.113.22", T0 + 60 * MINUTE); // window until T0 + 75 min
    await sweepSignInAttempts(database.db, T0 + 80 * MINUTE);
    expect(await row("email:eight@example.com")).toMatchObject({ attempts: 10 });
    expect(await row("email:nine@example.com")).toMatchObject({ attempts: 1 });
    expect(await row("email:ten@example.com")).toBeUndefined();
    await sweepSignInAttempts(database.db, T0 + 85 * MINUTE);
    expect(await row("email:eight@example.com")).toBeUndefined();
    expect(await row("email:nine@example.com")).toBeUndefined();
  });
});
