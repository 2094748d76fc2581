import type { Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import { unitsFor, type UnitOfWork } from "../storage/unit-of-work.ts";
import { deleteExpiredIdempotencyRecords } from "../idempotency/repository.ts";
import { retainedSince } from "../events/catalog.ts";
import { deleteIdleSessions } from "../admin/sessions.ts";
import { sweepSignInAttempts } from "../admin/lockout.ts";
import { deleteExpiredUploads } from "../admin/import-uploads.ts";
import { pruneChanges } from "../changes/repository.ts";
import { expiredTrash } from "../contacts/trash.ts";
import { expireMerges } from "../merges/repository.ts";

export interface RetentionOptions {
  /** CRM_CHANGES_RETENTION_DAYS (default 90). */
  changesRetentionDays?: number;
  /** The database to find the trash's expired contacts in, and how to erase one (src/contacts/erase.ts). */
  db?: Kysely<Database>;
  eraseFromTrash?(projectId: string, contactNumber: number): Promise<void>;
}

/**
 * Retention (docs/api.md §11, docs/webhooks.md §2): events and delivery attempts are kept 30 days (deliveries
 * go with their event), Idempotency-Key records 24 h, admin sessions 12 h idle, counted back from `now` (the
 * service's clock, issue 11). Deletes in batches, each a unit of work of its own, so the
 * writer is never held for long.
 */
export async function applyRetention(writes: UnitOfWork | Kysely<Database>, now: number, options: RetentionOptions = {}): Promise<void> {
  const units = unitsFor(writes);
  // Change records past their retention, a few thousand at a time (docs/api.md §19.2).
  const changesCutoff = new Date(now - (options.changesRetentionDays ?? 90) * 86_400_000).toISOString();
  while ((await units.run(null, (trx) => pruneChanges(trx, changesCutoff))) > 0);
  // Merges past their 30 days of undo drop what the undo needed (docs/api.md §20.4).
  const nowIso = new Date(now).toISOString();
  while ((await units.run(null, (trx) => expireMerges(trx, nowIso, 200))) > 0);
  // Contacts 30 days in the trash are erased, each in its own unit (docs/api.md §19.3).
  if (options.eraseFromTrash && options.db) {
    for (;;) {
      const due = await expiredTrash(options.db, now, 100);
      for (const contact of due) await options.eraseFromTrash(contact.projectId, contact.contactNumber);
      if (due.length < 100) break;
    }
  }
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
