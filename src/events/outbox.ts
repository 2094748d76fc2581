import { preparedInsert, preparedQuery } from "../storage/prepared.ts";
import type { Db } from "../storage/schema.ts";
import { afterCommit } from "../storage/unit-of-work.ts";
import { newId } from "../lib/ids.ts";
import { passesFilter, type EventSubject, type SubscriptionFilter } from "../webhooks/filter.ts";

/**
 * The outbox's writes (docs/webhooks.md §2): events own them. A delivery is queued in the unit
 * that records its event (src/changes/record.ts, at the end of a unit) or asks for it again (the webhooks' redeliver), so
 * it commits with that change or not at all; the unit's commit then wakes the dispatcher.
 */

/** Whether a subscription's `events` take an event type. */
export const subscribesTo = (events: string[], type: string) => events.includes("*") || events.includes(type);

const activeSubscriptions = preparedQuery<[string], { id: string; events: string; filter: string | null }>(1, (db, projectId) =>
  db.selectFrom("webhooks").select(["id", "events", "filter"]).where("project_id", "=", projectId).where("status", "=", "active"),
);

/**
 * Deliveries became due in the running unit (queued, or their subscription enabled again):
 * its commit wakes the dispatcher. A unit that queued none spares the dispatcher a look.
 */
export const deliveriesDue = (): void => afterCommit("deliveries-due");

const insertDeliveryRows = preparedInsert(
  "deliveries",
  ["id", "event_id", "webhook_id", "status", "next_attempt_at", "created_at", "updated_at", "contact_id", "position"],
  { maxRows: 256 },
);

/** One delivery to add: for an event's subscribers, its contact and place in that contact's order (docs/webhooks.md §8). */
export interface NewDelivery {
  eventId: string;
  webhookId: string;
  contactId?: number | null;
  position?: number | null;
}

/** Adds one pending delivery, due `now`, per (event, subscription): the one outbox insert, for new events and redeliveries alike. */
export async function insertDeliveries(db: Db, deliveries: NewDelivery[], now: string): Promise<void> {
  if (deliveries.length === 0) return;
  deliveriesDue();
  await insertDeliveryRows(
    db,
    deliveries.map((d) => [newId("dlv"), d.eventId, d.webhookId, "pending", now, now, now, d.contactId ?? null, d.position ?? null]),
  );
}

/** An event being recorded, as the outbox sees it: its subscribers are chosen by type and filter. */
export interface OutboxEvent {
  id: string;
  type: string;
  /** Its place in its contact's order: the change's seq × 4 + the event's index in that change. */
  position: number | null;
  /** The contact as the event shows it; null for an event about no contact. */
  subject: EventSubject | null;
}

/**
 * Queues one delivery per active subscription whose `events` and `filter` take the event
 * (docs/webhooks.md §2, §8), in the transaction that records it: the outbox rows commit
 * with the change or not at all. Disabled subscriptions get nothing; their events stay
 * readable and redeliverable. Subscriptions are read once for all the events given.
 */
export async function enqueueEvents(db: Db, projectId: string, events: OutboxEvent[], now: string): Promise<void> {
  if (events.length === 0) return;
  const subscriptions = (await activeSubscriptions(db, projectId)).map((s) => ({
    id: s.id,
    events: JSON.parse(s.events) as string[],
    filter: s.filter === null ? null : (JSON.parse(s.filter) as SubscriptionFilter),
  }));
  if (subscriptions.length === 0) return;
  const deliveries: NewDelivery[] = [];
  for (const event of events) {
    for (const s of subscriptions) {
      if (!subscribesTo(s.events, event.type) || !passesFilter(s.filter, event.type, event.subject)) continue;
      deliveries.push({ eventId: event.id, webhookId: s.id, contactId: event.subject?.contactId ?? null, position: event.position });
    }
  }
  await insertDeliveries(db, deliveries, now);
}
