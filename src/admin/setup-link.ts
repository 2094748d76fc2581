import { createHash } from "node:crypto";
import { lockUntilCommit } from "../storage/query.ts";
import type { Db } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { countAdmins } from "./accounts.ts";
import { randomToken } from "./sessions.ts";

/** The setup link works for 24 hours (docs/admin.md §1). */
export const SETUP_LINK_MS = 24 * 3_600_000;

const hashToken = (token: string) => createHash("sha256").update(token).digest("base64url");

/**
 * At start: when there is no admin account and no setup link still valid, makes one and
 * returns its token (printed once, as the first key is). A first start on an empty
 * database therefore prints it; so does a later start after an unused link expired, so
 * an operator who lost it restarts rather than needing the CLI. Nodes starting together
 * make one link (docs/scaling.md §6).
 */
export async function issueSetupToken(writes: UnitOfWork, now: number): Promise<string | null> {
  return writes.run(null, async (trx) => {
    await lockUntilCommit(trx, "crm:admin-setup");
    if ((await countAdmins(trx)) > 0) return null;
    const at = new Date(now).toISOString();
    const live = await trx.selectFrom("admin_setup_tokens").select("token_hash").where("used_at", "is", null).where("expires_at", ">", at).executeTakeFirst();
    if (live) return null;
    const token = randomToken();
    await trx.insertInto("admin_setup_tokens").values({ token_hash: hashToken(token), expires_at: new Date(now + SETUP_LINK_MS).toISOString(), used_at: null }).execute();
    return token;
  });
}

/** Whether `token` opens the setup page at `now`: issued, unused, unexpired, and no admin exists yet. */
export async function setupTokenValid(db: Db, token: string, now: number): Promise<boolean> {
  if ((await countAdmins(db)) > 0) return false;
  const row = await db
    .selectFrom("admin_setup_tokens")
    .select("token_hash")
    .where("token_hash", "=", hashToken(token))
    .where("used_at", "is", null)
    .where("expires_at", ">", new Date(now).toISOString())
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks the token used (in the transaction that creates the first admin); false when someone else used it first. */
export async function consumeSetupToken(trx: Db, token: string, now: number): Promise<boolean> {
  const at = new Date(now).toISOString();
  const result = await trx
    .updateTable("admin_setup_tokens")
    .set({ used_at: at })
    .where("token_hash", "=", hashToken(token))
    .where("used_at", "is", null)
    .where("expires_at", ">", at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
