import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { newId } from "../lib/ids.ts";

/** Repository of the dispatcher: claims, loads and records deliveries. */

/** On start, deliveries an earlier run had claimed are due again at once (decisions §12). */
export async function releaseStaleClaims(db: Kysely<Database>, now: string) {
  await db.updateTable("deliveries").set({ status: "pending", next_attempt_at: now, updated_at: now }).where("status", "=", "in_flight").execute();
}

export interface DueDelivery {
  id: string;
  event_id: string;
  webhook_id: string;
  attempts: number;
  created_at: string;
}

/** Due deliveries of active subscriptions, oldest due first. */
export async function dueDeliveries(db: Kysely<Database>, now: string, limit: number): Promise<DueDelivery[]> {
  return db
    .selectFrom("deliveries")
    .innerJoin("webhooks", "webhooks.id", "deliveries.webhook_id")
    .select(["deliveries.id", "deliveries.event_id", "deliveries.webhook_id", "deliveries.attempts", "deliveries.created_at"])
    .where("deliveries.status", "=", "pending")
    .where("deliveries.next_attempt_at", "<=", now)
    .where("webhooks.status", "=", "active")
    .orderBy("deliveries.next_attempt_at")
    .limit(limit)
    .execute();
}

export async function claim(db: Kysely<Database>, ids: string[], now: string) {
  if (ids.length === 0) return;
  await db.updateTable("deliveries").set({ status: "in_flight", updated_at: now }).where("id", "in", ids).where("status", "=", "pending").execute();
}

/** When the next pending delivery of an active subscription is due, if any. */
export async function nextDueAt(db: Kysely<Database>): Promise<string | null> {
  const row = await db
    .selectFrom("deliveries")
    .innerJoin("webhooks", "webhooks.id", "deliveries.webhook_id")
    .select((eb) => eb.fn.min("deliveries.next_attempt_at").as("at"))
    .where("deliveries.status", "=", "pending")
    .where("webhooks.status", "=", "active")
    .executeTakeFirst();
  return (row?.at as string | null) ?? null;
}

export async function loadForSend(db: Kysely<Database>, d: DueDelivery) {
  const [event, webhook] = await Promise.all([
    db.selectFrom("events").select(["type", "body"]).where("id", "=", d.event_id).executeTakeFirst(),
    db.selectFrom("webhooks").selectAll().where("id", "=", d.webhook_id).executeTakeFirst(),
  ]);
  return { event, webhook };
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

/** Records one attempt and its consequences in one transaction (decisions §7). */
export async function recordOutcome(db: Kysely<Database>, o: Outcome): Promise<void> {
  await db.transaction().execute(async (trx) => {
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
    if (o.succeeded) {
      await trx
        .updateTable("webhooks")
        .set({ consecutive_failures: 0, last_success_at: o.at })
        .where("id", "=", o.delivery.webhook_id)
        .execute();
      return;
    }
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
  });
}
