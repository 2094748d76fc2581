import type { Db } from "../storage/schema.ts";
import { isUniqueViolation } from "../storage/query.ts";
import { isEmail } from "../lib/formats.ts";
import { newId } from "../lib/ids.ts";
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from "./password.ts";

/** An admin account as the CLI and the console show it (docs/admin.md §3): never its hash. */
export interface Admin {
  id: string;
  email: string;
  createdAt: string;
}

/** A refused account change; the message says why, in words for the person at the keyboard. */
export class AccountError extends Error {
  constructor(
    message: string,
    readonly field: "email" | "password",
  ) {
    super(message);
  }
}

const emailKey = (email: string) => email.trim().toLowerCase();

function checkEmail(email: string): string {
  const trimmed = email.trim();
  if (trimmed.length > 254 || !isEmail(trimmed)) throw new AccountError("Email must be a valid email address.", "email");
  return trimmed;
}

function checkPassword(password: string) {
  const problem = passwordProblem(password);
  if (problem) throw new AccountError(problem, "password");
}

export async function createAdmin(db: Db, email: string, password: string, now: string): Promise<Admin> {
  const address = checkEmail(email);
  checkPassword(password);
  const row = { id: newId("adm"), email: address, email_key: emailKey(address), password_hash: await hashPassword(password), created_at: now, updated_at: now };
  try {
    await db.insertInto("admins").values(row).execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw new AccountError(`An admin with the email ${address} exists already.`, "email");
    throw error;
  }
  return { id: row.id, email: row.email, createdAt: now };
}

export async function listAdmins(db: Db): Promise<Admin[]> {
  const rows = await db.selectFrom("admins").select(["id", "email", "created_at"]).orderBy("created_at").orderBy("id").execute();
  return rows.map((r) => ({ id: r.id, email: r.email, createdAt: r.created_at }));
}

export async function countAdmins(db: Db): Promise<number> {
  const row = await db.selectFrom("admins").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes an account and, with it, its sessions; false when there is none. */
export async function deleteAdmin(db: Db, id: string): Promise<boolean> {
  await db.deleteFrom("admin_sessions").where("admin_id", "=", id).execute();
  const result = await db.deleteFrom("admins").where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Sets a new password and ends the account's sessions (whoever had it signed in signs in again); null when no account has the email. */
export async function setAdminPassword(db: Db, email: string, password: string, now: string): Promise<Admin | null> {
  checkPassword(password);
  const row = await db.selectFrom("admins").select(["id", "email", "created_at"]).where("email_key", "=", emailKey(email)).executeTakeFirst();
  if (!row) return null;
  await db.updateTable("admins").set({ password_hash: await hashPassword(password), updated_at: now }).where("id", "=", row.id).execute();
  await db.deleteFrom("admin_sessions").where("admin_id", "=", row.id).execute();
  return { id: row.id, email: row.email, createdAt: row.created_at };
}

/** The account whose email and password these are; null otherwise, in about the same time either way. */
export async function checkCredentials(db: Db, email: string, password: string): Promise<Admin | null> {
  const row = await db.selectFrom("admins").selectAll().where("email_key", "=", emailKey(email)).executeTakeFirst();
  if (!row) {
    await verifyPassword(password, await decoyHash());
    return null;
  }
  return (await verifyPassword(password, row.password_hash)) ? { id: row.id, email: row.email, createdAt: row.created_at } : null;
}

export { emailKey };
