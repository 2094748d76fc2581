import type { Kysely } from "kysely";
import type { ClaimBook, Claims, DueDelivery } from "./port.ts";
import { preparedQuery } from "./prepared.ts";
import type { Database } from "./schema.ts";

/**
 * Ids of up to `limit` due deliveries of one subscription, oldest due first, from
 * deliveries_webhook_due alone (db/0005): the caller skips those it has in flight, which
 * costs index entries, not rows.
 */
const dueDeliveryIds = preparedQuery<[string, string, number], { id: string }>(3, (db, webhookId, now, limit) =>
  db
    .selectFrom("deliveries")
    .select("id")
    .where("webhook_id", "=", webhookId)
    .where("status", "=", "pending")
    .where("next_attempt_at", "<=", now)
    .orderBy("next_attempt_at")
    .limit(limit),
);

/**
 * dueDeliveryIds for a subscription with ordering "per-contact" (docs/webhooks.md §8.2): a
 * delivery about a contact only when no earlier one of that contact to the subscription is
 * pending (due, retrying later, or being sent: it stays pending until its attempt is
 * recorded), by position, then id, so two of one contact never both qualify. Each probe is
 * one seek in deliveries_contact_order (db/0010). Deliveries about no contact go as they come.
 */
const dueHeadIds = preparedQuery<[string, string, number], { id: string }>(3, (db, webhookId, now, limit) =>
  db
    .selectFrom("deliveries as d")
    .select("d.id")
    .where("d.webhook_id", "=", webhookId)
    .where("d.status", "=", "pending")
    .where("d.next_attempt_at", "<=", now)
    .where((eb) =>
      eb.or([
        eb("d.contact_id", "is", null),
        eb.not(
          eb.exists(
            eb
              .selectFrom("deliveries as e")
              .select("e.id")
              .whereRef("e.webhook_id", "=", "d.webhook_id")
              .whereRef("e.contact_id", "=", "d.contact_id")
              .where("e.status", "=", "pending")
              .where((x) => x.or([x("e.position", "<", x.ref("d.position")), x.and([x("e.position", "=", x.ref("d.position")), x("e.id", "<", x.ref("d.id"))])])),
          ),
        ),
      ]),
    )
    .orderBy("d.next_attempt_at")
    .limit(limit),
);

const orderingOf = preparedQuery<[string], { ordering: "none" | "per-contact" }>(1, (db, webhookId) =>
  db.selectFrom("webhooks").select("ordering").where("id", "=", webhookId),
);

/** One delivery with what sending it needs, while it is still pending for an active subscription. */
const pendingDelivery = preparedQuery<[string], DueDelivery>(1, (db, id) =>
  db
    // CROSS JOIN keeps the delivery outermost in SQLite whatever the statistics say (a
    // primary-key lookup, then one each in webhooks and events).
    .selectFrom("deliveries")
    .crossJoin("webhooks")
    .crossJoin("events")
    .whereRef("webhooks.id", "=", "deliveries.webhook_id")
    .whereRef("events.id", "=", "deliveries.event_id")
    .select([
      "deliveries.id",
      "deliveries.event_id",
      "deliveries.webhook_id",
      "webhooks.project_id",
      "deliveries.attempts",
      "deliveries.created_at",
      "events.type",
      "events.body",
      "webhooks.url",
      "webhooks.secret",
      "webhooks.previous_secret",
      "webhooks.previous_secret_until",
      "deliveries.contact_id",
      "webhooks.ordering",
    ])
    .where("deliveries.id", "=", id)
    .where("deliveries.status", "=", "pending")
    .where("webhooks.status", "=", "active"),
);

/**
 * Claims kept in this process's memory only (src/storage/port.ts, `Claims`): for a
 * database one process serves (SQLite), where no one else sends its deliveries. Due rows
 * are read from `reader` (a connection that never waits for writes); each is re-read and
 * entered in the book at once, so the tick and a slot claiming together never take the
 * same row. The subscription's cap is the process's own (FairShare), so `perSubscription`
 * needs no count here. With ordering "per-contact", a contact whose delivery this process
 * is sending (the book knows) gets no second one meanwhile, whatever its position.
 */
export function inProcessClaims(reader: Kysely<Database>): Claims {
  return {
    async claim(book: ClaimBook, { webhookId, now, n }): Promise<DueDelivery[]> {
      const ordered = (await orderingOf(reader, webhookId))[0]?.ordering === "per-contact";
      const ids = await (ordered ? dueHeadIds : dueDeliveryIds)(reader, webhookId, now, n + book.countOf(webhookId));
      const claimed: DueDelivery[] = [];
      for (const { id } of ids) {
        if (claimed.length >= n) break;
        if (book.has(id)) continue;
        const [d] = await pendingDelivery(reader, id);
        if (!d || book.has(id)) continue;
        if (d.ordering === "per-contact" && d.contact_id !== null && book.holdsContact(d.webhook_id, d.contact_id)) continue;
        book.add(d);
        claimed.push(d);
      }
      return claimed;
    },
    // Claims live in this process's book only: nothing in the database says a row is being sent.
    leased: async () => [],
  };
}
