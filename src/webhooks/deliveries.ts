import type { Kysely, Transaction } from "kysely";
import { leaseEnd } from "../storage/query.ts";
import { preparedQuery } from "../storage/prepared.ts";
import type { DueDelivery } from "../storage/port.ts";
import type { Database } from "../storage/schema.ts";
import { inSavepoint, unitsFor, type UnitOfWork } from "../storage/unit-of-work.ts";
import { newId } from "../lib/ids.ts";

/**
 * Repository of the dispatcher: finds due deliveries and records their attempts. Every
 * query is driven from the active subscriptions through deliveries(webhook_id, status,
 * next_attempt_at) (db/0005), so a disabled subscription's parked rows are never read and
 * a busy subscription's backlog costs a few index entries, not a scan (docs/webhooks.md §4.4).
 */

/** An active subscription with a due delivery that is not in flight. */
export interface DueSubscription {
  webhookId: string;
  projectId: string;
}

/** A due delivery with what sending it needs, as a claim returns it (src/storage/port.ts). */
export type { DueDelivery } from "../storage/port.ts";

/**
 * Active subscriptions having a due delivery. Some of those may be in flight already: the
 * caller knows its claims and skips them (a compiled statement, no per-call id lists).
 */
export const dueSubscriptions = preparedQuery<[string], DueSubscription>(1, (db, now) =>
  db
    .selectFrom("webhooks as w")
    .select(["w.id as webhookId", "w.project_id as projectId"])
    .where("w.status", "=", "active")
    .where((eb) =>
      eb.exists(
        eb.selectFrom("deliveries as d").select("d.id").whereRef("d.webhook_id", "=", "w.id").where("d.status", "=", "pending").where("d.next_attempt_at", "<=", now),
      ),
    ),
);

/**
 * When the next pending delivery of an active subscription is due: one index probe per
 * subscription (its earliest pending row), never a walk of the backlog. A row in flight
 * may be that earliest one; its completion wakes the dispatcher anyway.
 */
export async function nextDueAt(db: Kysely<Database>): Promise<string | null> {
  const row = await db
    .selectFrom("webhooks as w")
    .select((eb) =>
      eb.fn
        .min(
          eb
            .selectFrom("deliveries as d")
            .select((d) => d.fn.min("d.next_attempt_at").as("at"))
            .whereRef("d.webhook_id", "=", "w.id")
            .where("d.status", "=", "pending"),
        )
        .as("at"),
    )
    .where("w.status", "=", "active")
    .executeTakeFirst();
  return (row?.at as string | null) ?? null;
}

export interface Outcome {
  delivery: DueDelivery;
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  snippet: string | null;
  succeeded: boolean;
  /** Next try time, or null when the delivery is finished (success or exhausted/gone). */
  retryAt: string | null;
  /** Set when this outcome disables the subscription: at once (410), or on exhaustion. */
  disable: { reason: string; unlessSucceededSince: boolean } | null;
}

/** What recording a batch did, outcome by outcome. */
export interface Recorded {
  /** Deliveries whose outcome could not be written: still pending, to be retried later. */
  failed: Map<string, unknown>;
  /** Subscriptions this batch disabled. */
  disabled: Set<string>;
}

/**
 * Records attempts and their consequences, a batch per unit of work (docs/webhooks.md §4), each
 * outcome in its own savepoint: one that cannot be written (its subscription was deleted
 * meanwhile, say) never rolls back the others, whose receivers already got their
 * delivery (docs/webhooks.md §4.4). The service's own write: never refused for room.
 */
export async function recordOutcomes(writes: UnitOfWork | Kysely<Database>, outcomes: Outcome[]): Promise<Recorded> {
  const recorded: Recorded = { failed: new Map(), disabled: new Set() };
  await unitsFor(writes).run(null, async (trx) => {
    // A run of successes on one subscription needs only its last reset written; a failure
    // writes the pending reset first, so the count stays exact.
    const resets = new Map<string, string>();
    const writeReset = async (webhookId: string) => {
      await trx.updateTable("webhooks").set({ consecutive_failures: 0, last_success_at: resets.get(webhookId)! }).where("id", "=", webhookId).execute();
      resets.delete(webhookId);
    };
    for (const [i, o] of outcomes.entries()) {
      const done = await inSavepoint(trx, `outcome_${i}`, async () => {
        if (!o.succeeded && resets.has(o.delivery.webhook_id)) await writeReset(o.delivery.webhook_id);
        if (await recordOne(trx, o)) recorded.disabled.add(o.delivery.webhook_id);
        if (o.succeeded) resets.set(o.delivery.webhook_id, o.at);
      });
      if (!done.ok) recorded.failed.set(o.delivery.id, done.error);
    }
    for (const webhookId of [...resets.keys()]) await writeReset(webhookId);
  });
  return recorded;
}

/** Writes one outcome; true when it disabled the subscription. */
async function recordOne(trx: Transaction<Database>, o: Outcome): Promise<boolean> {
  const status = o.succeeded ? "succeeded" : o.retryAt ? "pending" : "failed";
  // A claim's lease on the row (PostgreSQL: src/storage/postgres/claims.ts) ends with its attempt recorded, so a retry is due at its own time.
  const updated = await trx
    .updateTable("deliveries")
    .set({ status, attempts: o.attempt, next_attempt_at: o.retryAt ?? o.at, updated_at: o.at, ...leaseEnd(trx) })
    .where("id", "=", o.delivery.id)
    .executeTakeFirst();
  // Gone with its subscription (deleted while the attempt was in flight): nothing to record.
  if (Number(updated.numUpdatedRows) === 0) return false;
  await trx
    .insertInto("delivery_attempts")
    .values({
      id: newId("att"),
      delivery_id: o.delivery.id,
      webhook_id: o.delivery.webhook_id,
      event_id: o.delivery.event_id,
      attempt: o.attempt,
      at: o.at,
      status_code: o.statusCode,
      duration_ms: o.durationMs,
      error: o.error,
      response_snippet: o.snippet,
    })
    .execute();
  if (o.succeeded) return false;
  await trx
    .updateTable("webhooks")
    .set((eb) => ({ consecutive_failures: eb("consecutive_failures", "+", 1), last_failure_reason: o.disable?.reason ?? o.error }))
    .where("id", "=", o.delivery.webhook_id)
    .execute();
  if (!o.disable) return false;
  let q = trx.updateTable("webhooks").set({ status: "disabled", updated_at: o.at }).where("id", "=", o.delivery.webhook_id).where("status", "=", "active");
  // Exhaustion disables only with no success on the subscription since this delivery began.
  if (o.disable.unlessSucceededSince) {
    q = q.where((eb) => eb.or([eb("last_success_at", "is", null), eb("last_success_at", "<", o.delivery.created_at)]));
  }
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}
