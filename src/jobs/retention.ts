import type { Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import { unitsFor, type UnitOfWork } from "../storage/unit-of-work.ts";
import { deleteExpiredIdempotencyRecords } from "../idempotency/repository.ts";
import { retainedSince } from "../events/catalog.ts";
import { deleteIdleSessions } from "../admin/sessions.ts";
import { sweepSignInAttempts } from "../admin/lockout.ts";
import { deleteExpiredUploads } from "../admin/import-uploads.ts";

/**
 * Retention (docs/api.md §11, docs/webhooks.md §2): events and delivery attempts are kept 30 days (deliveries
 * go with their event), Idempotency-Key records 24 h, admin sessions 12 h idle, counted back from `now` (the
 * service's clock, issue 11). Deletes in batches, each a unit of work of its own, so the
 * writer is never held for long.
 */
export async function applyRetention(writes: UnitOfWork | Kysely<Database>, now: number): Promise<void> {
  const units = unitsFor(writes);
  const cutoff = retainedSince(now);
  for (const table of ["delivery_attempts", "events"] as const) {
    const column = table === "events" ? "created_at" : "at";
    for (;;) {
      const deleted = await units.run(null, async (trx) => {
        const batch = await trx.selectFrom(table).select("id").where(column, "<", cutoff).limit(1000).execute();
        if (batch.length > 0) await trx.deleteFrom(table).where("id", "in", batch.map((r) => r.id)).execute();
        return batch.length;
      });
      if (deleted === 0) break;
    }
  }
  await units.run(null, (trx) => deleteExpiredIdempotencyRecords(trx, now));
  // The console's sessions idle for 12 h, and sign-in tries whose window and lock have ended (docs/admin.md §2).
  await units.run(null, (trx) => deleteIdleSessions(trx, now));
  await units.run(null, (trx) => sweepSignInAttempts(trx, now));
  // Console uploads not imported within the hour (secure_delete zeroes their bytes; docs/security.md §7).
  await units.run(null, (trx) => deleteExpiredUploads(trx, now));
}
