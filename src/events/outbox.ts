import { preparedInsert, preparedQuery } from "../storage/prepared.ts";
import type { Db } from "../storage/schema.ts";
import { afterCommit } from "../storage/unit-of-work.ts";
import { newId } from "../lib/ids.ts";

/**
 * The outbox's writes (docs/webhooks.md §2): events own them. A delivery is queued in the unit
 * that records its event (recordEvent) or asks for it again (the webhooks' redeliver), so
 * it commits with that change or not at all; the unit's commit then wakes the dispatcher.
 */

/** Whether a subscription's `events` take an event type. */
export const subscribesTo = (events: string[], type: string) => events.includes("*") || events.includes(type);

const activeSubscriptions = preparedQuery<[string], { id: string; events: string }>(1, (db, projectId) =>
  db.selectFrom("webhooks").select(["id", "events"]).where("project_id", "=", projectId).where("status", "=", "active"),
);

/**
 * Deliveries became due in the running unit (queued, or their subscription enabled again):
 * its commit wakes the dispatcher. A unit that queued none spares the dispatcher a look.
 */
export const deliveriesDue = (): void => afterCommit("deliveries-due");

const insertDeliveryRows = preparedInsert(
  "deliveries",
  ["id", "event_id", "webhook_id", "status", "next_attempt_at", "created_at", "updated_at"],
  { maxRows: 256 },
);

/** Adds one pending delivery, due `now`, per (event, subscription): the one outbox insert, for new events and redeliveries alike. */
export async function insertDeliveries(db: Db, deliveries: Array<{ eventId: string; webhookId: string }>, now: string): Promise<void> {
  if (deliveries.length === 0) return;
  deliveriesDue();
  await insertDeliveryRows(db, deliveries.map((d) => [newId("dlv"), d.eventId, d.webhookId, "pending", now, now, now]));
}

/**
 * Queues one delivery per active subscription whose `events` match (docs/webhooks.md §2), in the
 * transaction that records the event: the outbox row commits with the change or not at
 * all. Disabled subscriptions get nothing; their events stay readable and redeliverable.
 */
export async function enqueueDeliveries(db: Db, projectId: string, eventId: string, type: string, now: string): Promise<number> {
  return enqueueDeliveriesOfMany(db, projectId, [eventId], type, now);
}

/** enqueueDeliveries for several events of one type: the subscriptions read once, event by event in order. */
export async function enqueueDeliveriesOfMany(db: Db, projectId: string, eventIds: string[], type: string, now: string): Promise<number> {
  const subscriptions = await activeSubscriptions(db, projectId);
  const targets = subscriptions.filter((s) => subscribesTo(JSON.parse(s.events), type));
  await insertDeliveries(db, eventIds.flatMap((eventId) => targets.map((s) => ({ eventId, webhookId: s.id }))), now);
  return targets.length;
}
