import { preparedQuery } from "../storage/prepared.ts";
import type { Db } from "../storage/schema.ts";
import { newId } from "../lib/ids.ts";

/** Whether a subscription's `events` take an event type. */
export const subscribesTo = (events: string[], type: string) => events.includes("*") || events.includes(type);

const activeSubscriptions = preparedQuery<[string], { id: string; events: string }>(1, (db, projectId) =>
  db.selectFrom("webhooks").select(["id", "events"]).where("project_id", "=", projectId).where("status", "=", "active"),
);

/** Transactions that queued deliveries: only their commits need to wake the dispatcher. */
const queuedIn = new WeakSet<object>();

/** Whether `trx` (a request's transaction, or the batch it shares) queued a delivery. */
export const queuedDeliveries = (trx: Db): boolean => queuedIn.has(trx);

/** Deliveries became due in `trx` (queued, or their subscription enabled again): its commit wakes the dispatcher. */
export const markDeliveriesDue = (trx: Db): void => void queuedIn.add(trx);

/**
 * Queues one delivery per active subscription whose `events` match (decisions §7), in the
 * transaction that records the event: the outbox row commits with the change or not at
 * all. Disabled subscriptions get nothing; their events stay readable and redeliverable.
 */
export async function enqueueDeliveries(db: Db, projectId: string, eventId: string, type: string, now: string): Promise<number> {
  const subscriptions = await activeSubscriptions(db, projectId);
  const targets = subscriptions.filter((s) => subscribesTo(JSON.parse(s.events), type));
  if (targets.length === 0) return 0;
  markDeliveriesDue(db);
  await db
    .insertInto("deliveries")
    .values(
      targets.map((s) => ({
        id: newId("dlv"),
        event_id: eventId,
        webhook_id: s.id,
        status: "pending",
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  return targets.length;
}
