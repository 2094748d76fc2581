import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";

/** Sessions end after 12 h without a request (docs/admin.md §2). */
export const IDLE_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often: a page view is not a write. */
const TOUCH_EVERY_MS = 60_000;

export interface Session {
  id: string;
  adminId: string;
  email: string;
  csrfToken: string;
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("base64url");
export const randomToken = () => randomBytes(32).toString("base64url");

/** A new session for the admin; returns the cookie's token (only its hash is stored). */
export async function startSession(db: Db, adminId: string, now: number): Promise<string> {
  const token = randomToken();
  const at = new Date(now).toISOString();
  await db
    .insertInto("admin_sessions")
    .values({ id: hashToken(token), admin_id: adminId, csrf_token: randomToken(), created_at: at, last_seen_at: at })
    .execute();
  return token;
}

/**
 * The live session of a cookie's token at `now`, its idle time renewed; null when there is
 * none or it was idle for 12 h (it is then deleted). Every node reads the same table
 * (docs/admin.md §2: sessions live in the database).
 */
export async function findSession(db: Db, writes: UnitOfWork, token: string, now: number): Promise<Session | null> {
  const id = hashToken(token);
  const row = await db
    .selectFrom("admin_sessions")
    .innerJoin("admins", "admins.id", "admin_sessions.admin_id")
    .select(["admin_sessions.id", "admin_sessions.admin_id", "admin_sessions.csrf_token", "admin_sessions.last_seen_at", "admins.email"])
    .where("admin_sessions.id", "=", id)
    .executeTakeFirst();
  if (!row) return null;
  const seen = Date.parse(row.last_seen_at);
  if (now - seen >= IDLE_MS) {
    await writes.run(null, (trx) => trx.deleteFrom("admin_sessions").where("id", "=", id).execute());
    return null;
  }
  if (now - seen >= TOUCH_EVERY_MS) {
    await writes.run(null, (trx) => trx.updateTable("admin_sessions").set({ last_seen_at: new Date(now).toISOString() }).where("id", "=", id).execute());
  }
  return { id, adminId: row.admin_id, email: row.email, csrfToken: row.csrf_token };
}

export async function endSession(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom("admin_sessions").where("id", "=", sessionId).execute();
}

/** Drops sessions idle for 12 h (the retention job); a stale one is refused anyway when used. */
export async function deleteIdleSessions(db: Db, now: number): Promise<void> {
  await db.deleteFrom("admin_sessions").where("last_seen_at", "<", new Date(now - IDLE_MS).toISOString()).execute();
}
