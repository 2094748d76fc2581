import type { Db } from "../../storage/schema.ts";
import { keysetAfter } from "../../storage/keyset.ts";

/**
 * What the console's webhook pages read beyond the API's records (docs/admin.md §3): the
 * time of a subscription's last failure, each attempt's event name and its delivery's
 * state (next try, tried again, given up), and the deliveries still waiting. Every read
 * follows an index: delivery_attempts(webhook_id, at, id), deliveries(webhook_id, status,
 * next_attempt_at, id), events and deliveries by id.
 */

/** How far back the last failure is looked for (attempts, newest first). */
const FAILURE_LOOKBACK = 500;

export interface LastFailure {
  at: string;
  reason: string;
}

/**
 * Each subscription's latest failed attempt among its last 500 (a failed attempt is one
 * with an error: src/webhooks/outcome.ts), so the pages can say when the failure was, and
 * whether a success came after it.
 */
export async function lastFailures(db: Db, webhookIds: string[]): Promise<Map<string, LastFailure>> {
  const found = new Map<string, LastFailure>();
  for (const id of webhookIds) {
    const row = await db
      .selectFrom((eb) =>
        eb
          .selectFrom("delivery_attempts")
          .select(["at", "id", "error"])
          .where("webhook_id", "=", id)
          .orderBy("at", "desc")
          .orderBy("id", "desc")
          .limit(FAILURE_LOOKBACK)
          .as("recent"),
      )
      .select(["recent.at", "recent.error"])
      .where("recent.error", "is not", null)
      .orderBy("recent.at", "desc")
      .orderBy("recent.id", "desc")
      .limit(1)
      .executeTakeFirst();
    if (row?.error) found.set(id, { at: row.at, reason: row.error });
  }
  return found;
}

/** An attempt with the name of the event it carried and its delivery's state now. */
export interface AttemptView {
  id: string;
  at: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  snippet: string | null;
  eventId: string;
  /** The event's type (contact.created…); null once the event is past retention. */
  eventType: string | null;
  /** The delivery's status (pending, succeeded, failed), its attempts so far and when it is tried next; null when it is gone. */
  delivery: { status: string; attempts: number; nextAttemptAt: string } | null;
}

/** A page of a subscription's attempts, newest first, as GET /v1/webhooks/{id}/attempts pages them, with their events and deliveries. */
export async function attemptsWithEvents(db: Db, webhookId: string, limit: number, after?: [string, string]) {
  let q = db.selectFrom("delivery_attempts").selectAll().where("webhook_id", "=", webhookId);
  if (after) q = q.where((eb) => keysetAfter(eb as never, ["at", "id"], after, "desc"));
  const rows = await q.orderBy("at", "desc").orderBy("id", "desc").limit(limit + 1).execute();
  const eventIds = [...new Set(rows.map((r) => r.event_id))];
  const deliveryIds = [...new Set(rows.map((r) => r.delivery_id))];
  const [events, deliveries] = await Promise.all([
    eventIds.length === 0 ? [] : db.selectFrom("events").select(["id", "type"]).where("id", "in", eventIds).execute(),
    deliveryIds.length === 0 ? [] : db.selectFrom("deliveries").select(["id", "status", "attempts", "next_attempt_at"]).where("id", "in", deliveryIds).execute(),
  ]);
  const types = new Map(events.map((e) => [e.id, e.type]));
  const states = new Map(deliveries.map((d) => [d.id, { status: d.status, attempts: d.attempts, nextAttemptAt: d.next_attempt_at }]));
  return rows.map((r) => ({
    row: r,
    view: {
      id: r.id,
      at: r.at,
      attempt: r.attempt,
      statusCode: r.status_code,
      durationMs: r.duration_ms,
      error: r.error,
      snippet: r.response_snippet,
      eventId: r.event_id,
      eventType: types.get(r.event_id) ?? null,
      delivery: states.get(r.delivery_id) ?? null,
    } satisfies AttemptView,
  }));
}

/** A delivery still to be sent (a first try or a retry), with its event's name. */
export interface WaitingDelivery {
  id: string;
  eventId: string;
  eventType: string | null;
  attempts: number;
  nextAttemptAt: string;
}

/** How many waiting deliveries are counted exactly; past that the page says "more than". */
export const WAITING_COUNT_CAP = 1000;

/** The subscription's pending deliveries, soonest first (`limit` of them), and how many there are, up to the cap. */
export async function waitingDeliveries(db: Db, webhookId: string, limit: number): Promise<{ rows: WaitingDelivery[]; count: number }> {
  const pending = db.selectFrom("deliveries").where("webhook_id", "=", webhookId).where("status", "=", "pending");
  const [rows, counted] = await Promise.all([
    pending
      .leftJoin("events", "events.id", "deliveries.event_id")
      .select(["deliveries.id", "deliveries.event_id", "deliveries.attempts", "deliveries.next_attempt_at", "events.type"])
      .orderBy("deliveries.next_attempt_at")
      .orderBy("deliveries.id")
      .limit(limit)
      .execute(),
    db
      .selectFrom((eb) => pending.select("deliveries.id").limit(WAITING_COUNT_CAP + 1).as("capped"))
      .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
      .executeTakeFirst(),
  ]);
  return {
    rows: rows.map((r) => ({ id: r.id, eventId: r.event_id, eventType: r.type ?? null, attempts: r.attempts, nextAttemptAt: r.next_attempt_at })),
    count: Number(counted?.n ?? 0),
  };
}
