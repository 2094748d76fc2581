import { sql, type Kysely } from "kysely";
import type { Database, Db } from "../storage/schema.ts";
import { unitsFor, type UnitOfWork } from "../storage/unit-of-work.ts";
import { emailKey } from "./accounts.ts";

/** Ten failed sign-ins for one email or from one address in 15 minutes lock it for 15 minutes (docs/admin.md §2). */
export const MAX_TRIES = 10;
export const WINDOW_MS = 15 * 60_000;
export const LOCK_MS = 15 * 60_000;

/** What one counted try left on its subject: enough to give it back after a success. */
interface Counted {
  subject: string;
  window_start: string;
  attempts: number;
  /** Set when this try was the tenth of its window and locked the subject. */
  locked_until: string | null;
}

/** A sign-in try: counted (then its password may be checked), or refused unchecked until `retryAfterSeconds` have passed. */
export type Try = { counted: true; subjects: Counted[] } | { counted: false; retryAfterSeconds: number };

/** Thrown inside the counting transaction so that a refused try rolls back and counts nowhere. */
class Refused extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("sign-in refused");
  }
}

/** Email first, then address: every transaction takes the rows in this order, so PostgreSQL's row locks cannot deadlock. */
const subjectsOf = (email: string, address: string) => [`email:${emailKey(email)}`, `address:${address}`];

/**
 * Counts a sign-in try against the email and the address before its password is checked
 * (docs/security.md §4), in one transaction: each subject's row is taken by
 * one upsert that opens a new window when the last one ended, adds the try, and sets the
 * lock when the try is the tenth. The upsert's WHERE refuses a subject that is locked or
 * has had its ten: then nothing is written for either subject (rolled back), and the try
 * is answered 429 without a check. On PostgreSQL the upsert holds the row's lock until the
 * commit, so tries on every node take turns on it; on SQLite the transaction is IMMEDIATE.
 * Of a burst of any size, at most the tries left in the window are counted, so at most
 * that many are checked.
 */
export async function countTry(writes: UnitOfWork | Kysely<Database>, email: string, address: string, now: number): Promise<Try> {
  const at = new Date(now).toISOString();
  const since = new Date(now - WINDOW_MS).toISOString();
  const until = new Date(now + LOCK_MS).toISOString();
  try {
    const subjects = await unitsFor(writes).run(null, async (trx) => {
      const counted: Counted[] = [];
      for (const subject of subjectsOf(email, address)) {
        const { rows } = await sql<Counted>`
          INSERT INTO admin_sign_in_attempts AS a (subject, window_start, attempts, locked_until)
          VALUES (${subject}, ${at}, 1, NULL)
          ON CONFLICT (subject) DO UPDATE SET
            window_start = CASE WHEN a.window_start > ${since} THEN a.window_start ELSE ${at} END,
            attempts = CASE WHEN a.window_start > ${since} THEN a.attempts + 1 ELSE 1 END,
            locked_until = CASE WHEN a.window_start > ${since} AND a.attempts + 1 >= ${MAX_TRIES} THEN ${until} ELSE NULL END
          WHERE (a.locked_until IS NULL OR a.locked_until <= ${at}) AND (a.window_start <= ${since} OR a.attempts < ${MAX_TRIES})
          RETURNING subject, window_start, attempts, locked_until`.execute(trx);
        if (!rows[0]) throw new Refused(await secondsLeft(trx, subject, now));
        counted.push(rows[0]);
      }
      return counted;
    });
    return { counted: true, subjects };
  } catch (error) {
    if (error instanceof Refused) return { counted: false, retryAfterSeconds: error.retryAfterSeconds };
    throw error;
  }
}

/** Seconds until a refused subject takes tries again: its lock's end (or its full window's). */
async function secondsLeft(trx: Db, subject: string, now: number): Promise<number> {
  const row = await trx.selectFrom("admin_sign_in_attempts").select(["window_start", "locked_until"]).where("subject", "=", subject).executeTakeFirst();
  const ends = row ? Math.max(row.locked_until ? Date.parse(row.locked_until) : 0, Date.parse(row.window_start) + WINDOW_MS) : now;
  return Math.max(1, Math.ceil((ends - now) / 1000));
}

/**
 * A successful sign-in is not a failure: it clears the email's count (the owner is in), and
 * gives the address back its own try, lifting the lock when that try was the one that set
 * it. Another try's count or lock on the address stays (one good password does not vouch
 * for other guesses from there). A window that has started over since is left alone.
 */
export async function giveBack(writes: UnitOfWork | Kysely<Database>, counted: Try & { counted: true }): Promise<void> {
  const [email, address] = counted.subjects;
  await unitsFor(writes).run(null, async (trx) => {
    await trx.deleteFrom("admin_sign_in_attempts").where("subject", "=", email!.subject).execute();
    await trx
      .updateTable("admin_sign_in_attempts")
      .set((eb) => ({
        attempts: eb("attempts", "-", 1),
        locked_until: address!.locked_until === null ? eb.ref("locked_until") : null,
      }))
      .where("subject", "=", address!.subject)
      .where("window_start", "=", address!.window_start)
      .where("attempts", ">", 0)
      .execute();
  });
}

/** Drops the rows whose window and lock have both ended: they count like a missing row (jobs, docs/admin.md §2). */
export async function sweepSignInAttempts(db: Db, now: number): Promise<void> {
  const at = new Date(now).toISOString();
  await db
    .deleteFrom("admin_sign_in_attempts")
    .where("window_start", "<=", new Date(now - WINDOW_MS).toISOString())
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", at)]))
    .execute();
}
