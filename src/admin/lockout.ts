import type { Db } from "../db/schema.ts";
import { emailKey } from "./accounts.ts";

/** Ten failed sign-ins for one email or from one address in 15 minutes lock it for 15 minutes (decisions §14). */
export const MAX_FAILURES = 10;
export const WINDOW_MS = 15 * 60_000;
export const LOCK_MS = 15 * 60_000;

const subjects = (email: string, address: string) => [`email:${emailKey(email)}`, `address:${address}`];

/** When the email or the address is locked at `now`, the time the lock ends; null otherwise. */
export async function lockedUntil(db: Db, email: string, address: string, now: number): Promise<number | null> {
  const at = new Date(now).toISOString();
  const rows = await db.selectFrom("admin_sign_in_locks").select("until").where("subject", "in", subjects(email, address)).where("until", ">", at).execute();
  return rows.length === 0 ? null : Math.max(...rows.map((r) => Date.parse(r.until)));
}

/**
 * Counts a failed sign-in against the email and the address; the tenth within 15 minutes
 * locks that subject for 15 minutes from now. Attempts refused by a lock are not counted,
 * so a lock ends on time whatever is tried meanwhile. Failures seen by every node count
 * together (the table is shared, decisions §13).
 */
export async function recordFailure(db: Db, email: string, address: string, now: number): Promise<void> {
  const at = new Date(now).toISOString();
  const since = new Date(now - WINDOW_MS).toISOString();
  await db.deleteFrom("admin_sign_in_failures").where("at", "<=", since).execute();
  for (const subject of subjects(email, address)) {
    await db.insertInto("admin_sign_in_failures").values({ subject, at }).execute();
    const row = await db
      .selectFrom("admin_sign_in_failures")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("subject", "=", subject)
      .where("at", ">", since)
      .executeTakeFirstOrThrow();
    if (Number(row.n) < MAX_FAILURES) continue;
    const until = new Date(now + LOCK_MS).toISOString();
    await db
      .insertInto("admin_sign_in_locks")
      .values({ subject, until })
      .onConflict((oc) => oc.column("subject").doUpdateSet({ until }))
      .execute();
    await db.deleteFrom("admin_sign_in_failures").where("subject", "=", subject).execute();
  }
}

/** A successful sign-in clears the email's failures (not the address's: one good password does not vouch for other guesses). */
export async function clearFailures(db: Db, email: string): Promise<void> {
  await db.deleteFrom("admin_sign_in_failures").where("subject", "=", `email:${emailKey(email)}`).execute();
}
