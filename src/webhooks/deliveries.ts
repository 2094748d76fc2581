import type { Kysely, Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { newId } from "../lib/ids.ts";

/** Repository of the dispatcher: finds due deliveries and records their attempts. */

/** A due delivery with what sending it needs: the event's stored bytes and the subscription. */
export interface DueDelivery {
  id: string;
  event_id: string;
  webhook_id: string;
  attempts: number;
  created_at: string;
  type: string;
  body: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
}

/** Due deliveries of active subscriptions not at their in-flight cap, oldest due first, less those in flight. */
export async function dueDeliveries(
  db: Kysely<Database>,
  now: string,
  limit: number,
  busy: string[],
  inFlight: string[],
): Promise<DueDelivery[]> {
  let q = db
    .selectFrom("deliveries")
    .innerJoin("webhooks", "webhooks.id", "deliveries.webhook_id")
    .innerJoin("events", "events.id", "deliveries.event_id")
    .select([
      "deliveries.id",
      "deliveries.event_id",
      "deliveries.webhook_id",
      "deliveries.attempts",
      "deliveries.created_at",
      "events.type",
      "events.body",
      "webhooks.url",
      "webhooks.secret",
      "webhooks.previous_secret",
      "webhooks.previous_secret_until",
    ])
    .where("deliveries.status", "=", "pending")
    .where("deliveries.next_attempt_at", "<=", now)
    .where("webhooks.status", "=", "active");
  if (busy.length) q = q.where("deliveries.webhook_id", "not in", busy);
  if (inFlight.length) q = q.where("deliveries.id", "not in", inFlight);
  return q.orderBy("deliveries.next_attempt_at").limit(limit).execute();
}

/** When the next pending delivery of an active subscription, not in flight, is due. */
export async function nextDueAt(db: Kysely<Database>, inFlight: string[]): Promise<string | null> {
  let q = db
    .selectFrom("deliveries")
    .innerJoin("webhooks", "webhooks.id", "deliveries.webhook_id")
    .select((eb) => eb.fn.min("deliveries.next_attempt_at").as("at"))
    .where("deliveries.status", "=", "pending")
    .where("webhooks.status", "=", "active");
  if (inFlight.length) q = q.where("deliveries.id", "not in", inFlight);
  const row = await q.executeTakeFirst();
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

/** Records attempts and their consequences, a batch per transaction (decisions §7). */
export async function recordOutcomes(db: Kysely<Database>, outcomes: Outcome[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // A run of successes on one subscription needs only its last reset written; a failure
    // writes the pending reset first, so the count stays exact.
    const resets = new Map<string, string>();
    const writeReset = async (webhookId: string) => {
      await trx.updateTable("webhooks").set({ consecutive_failures: 0, last_success_at: resets.get(webhookId)! }).where("id", "=", webhookId).execute();
      resets.delete(webhookId);
    };
    for (const o of outcomes) {
      if (!o.succeeded && resets.has(o.delivery.webhook_id)) await writeReset(o.delivery.webhook_id);
      await recordOne(trx, o);
      if (o.succeeded) resets.set(o.delivery.webhook_id, o.at);
    }
    for (const webhookId of [...resets.keys()]) await writeReset(webhookId);
  });
}

async function recordOne(trx: Transaction<Database>, o: Outcome): Promise<void> {
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
  const status = o.succeeded ? "succeeded" : o.retryAt ? "pending" : "failed";
  await trx
    .updateTable("deliveries")
    .set({ status, attempts: o.attempt, next_attempt_at: o.retryAt ?? o.at, updated_at: o.at })
    .where("id", "=", o.delivery.id)
    .execute();
  if (o.succeeded) return;
  const reason = o.error ?? `HTTP ${o.statusCode}`;
  await trx
    .updateTable("webhooks")
    .set((eb) => ({ consecutive_failures: eb("consecutive_failures", "+", 1), last_failure_reason: o.disable?.reason ?? reason }))
    .where("id", "=", o.delivery.webhook_id)
    .execute();
  if (o.disable) {
    let q = trx.updateTable("webhooks").set({ status: "disabled", updated_at: o.at }).where("id", "=", o.delivery.webhook_id);
    // Exhaustion disables only with no success on the subscription since this delivery began.
    if (o.disable.unlessSucceededSince) {
      q = q.where((eb) => eb.or([eb("last_success_at", "is", null), eb("last_success_at", "<", o.delivery.created_at)]));
    }
    await q.execute();
  }
}
