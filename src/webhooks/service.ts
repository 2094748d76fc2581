import type { Db, WebhookRow } from "../storage/schema.ts";
import { ApiError, notFound, validationError } from "../errors.ts";
import { retainedSince } from "../events/catalog.ts";
import { eventsBetween, findEvents } from "../events/repository.ts";
import { newId } from "../lib/ids.ts";
import { isoNow, toIso } from "../lib/time.ts";
import type { UrlCheck } from "./address-policy.ts";
import { attemptDelivery, type WebhookEnv } from "./attempt.ts";
import { failureReason, isSuccess } from "./outcome.ts";
import { deliveriesDue, insertDeliveries, subscribesTo } from "../events/outbox.ts";
import { resolveFilter, type Ordering, type WebhookFilterInput } from "./filter.ts";
import type { InFlight } from "./dispatcher.ts";
import { findWebhook, toWebhook } from "./repository.ts";
import { REDELIVER_MAX } from "./schemas.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import { generateSecret } from "./signature.ts";

const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/**
 * The URL's verdict, checked (DNS included) before the request's transaction opened
 * (docs/webhooks.md §4.4: no network I/O while a write transaction is open; see routes.ts).
 */
function requireCheckedUrl(url: string, checked: CheckedUrl | undefined): void {
  if (checked?.url !== url) throw new Error("the webhook URL was not checked before the transaction");
  if (!checked.verdict.ok) throw validationError("url", checked.verdict.reason);
}

/** A URL and the address policy's verdict on it. */
export interface CheckedUrl {
  url: string;
  verdict: UrlCheck;
}

export async function requireWebhook(db: Db, projectId: string, id: string): Promise<WebhookRow> {
  const row = await findWebhook(db, projectId, id);
  if (!row) throw notFound("Webhook");
  return row;
}

export async function createWebhook(
  db: Db,
  secrets: SecretBox,
  projectId: string,
  input: { url: string; events: string[]; description?: string | null; filter?: WebhookFilterInput | null; ordering?: Ordering },
  checked: CheckedUrl | undefined,
  now: string,
) {
  requireCheckedUrl(input.url, checked);
  const filter = await resolveFilter(db, projectId, input.filter);
  const secret = generateSecret();
  const row: WebhookRow = {
    id: newId("wh"),
    project_id: projectId,
    url: input.url,
    events: JSON.stringify([...new Set(input.events)]),
    description: input.description ?? null,
    status: "active",
    secret: secrets.seal(secret),
    previous_secret: null,
    previous_secret_until: null,
    consecutive_failures: 0,
    last_success_at: null,
    last_failure_reason: null,
    filter: filter === null ? null : JSON.stringify(filter),
    ordering: input.ordering ?? "none",
    created_at: now,
    updated_at: now,
  };
  await db.insertInto("webhooks").values(row).execute();
  return { ...toWebhook(row), secret };
}

/**
 * PATCH (docs/api.md §13.3): url, events, description, status, filter (replaced whole; null
 * removes it), ordering; re-activation resets the failure count. A new filter or ordering
 * judges events recorded from now on; deliveries already queued stay (docs/webhooks.md §8).
 */
export async function patchWebhook(
  db: Db,
  projectId: string,
  id: string,
  input: { url?: string; events?: string[]; description?: string | null; status?: "active" | "disabled"; filter?: WebhookFilterInput | null; ordering?: Ordering },
  checked: CheckedUrl | undefined,
  now: string,
) {
  const row = await requireWebhook(db, projectId, id);
  if (input.url !== undefined) requireCheckedUrl(input.url, checked);
  const patch: Partial<WebhookRow> = { updated_at: now };
  if (input.url !== undefined) patch.url = input.url;
  if (input.events !== undefined) patch.events = JSON.stringify([...new Set(input.events)]);
  if (input.description !== undefined) patch.description = input.description;
  if (input.filter !== undefined) {
    const filter = await resolveFilter(db, projectId, input.filter);
    patch.filter = filter === null ? null : JSON.stringify(filter);
  }
  if (input.ordering !== undefined) {
    patch.ordering = input.ordering;
    // Deliveries waiting behind an earlier one of their contact may be free to go now.
    deliveriesDue();
  }
  if (input.status !== undefined) {
    patch.status = input.status;
    if (input.status === "active" && row.status === "disabled") {
      patch.consecutive_failures = 0;
      deliveriesDue();
    }
  }
  await db.updateTable("webhooks").set(patch).where("id", "=", id).execute();
  return toWebhook({ ...row, ...patch });
}

export async function deleteWebhook(db: Db, projectId: string, id: string) {
  await requireWebhook(db, projectId, id);
  // Deliveries first, then the subscription: the order the dispatcher's outcome writes take
  // their row locks in (deliveries.ts: delivery, then subscription), so a DELETE during a
  // recorded failure waits for it on PostgreSQL instead of deadlocking with it.
  await db.deleteFrom("deliveries").where("webhook_id", "=", id).execute();
  await db.deleteFrom("webhooks").where("id", "=", id).execute();
}

/** New secret; the old one keeps signing (second) for 24 h from `now`, the service's clock (docs/api.md §13). */
export async function rotateSecret(db: Db, secrets: SecretBox, projectId: string, id: string, now: number) {
  const row = await requireWebhook(db, projectId, id);
  const secret = generateSecret();
  const patch = {
    secret: secrets.seal(secret),
    previous_secret: row.secret,
    previous_secret_until: new Date(now + ROTATION_OVERLAP_MS).toISOString(),
    updated_at: new Date(now).toISOString(),
  };
  await db.updateTable("webhooks").set(patch).where("id", "=", id).execute();
  return { ...toWebhook({ ...row, ...patch }), secret };
}

/**
 * The test ping (docs/webhooks.md §1.4): the dispatcher's attempt (check, sign, send), at once,
 * outside the retry schedule and the outbox; its outcome is the answer, and it never
 * counts as a delivery failure. Runs outside any transaction.
 */
export async function sendTestPing(db: Db, w: WebhookEnv, projectId: string, id: string) {
  const row = await requireWebhook(db, projectId, id);
  const body = JSON.stringify({
    id: newId("evt"),
    event: "ping",
    apiVersion: "v1",
    projectId,
    createdAt: isoNow(w.clock),
    data: { webhookId: row.id, message: "Test ping: this subscription receives signed events." },
  });
  const result = await attemptDelivery({ ...row, deliveryId: newId("dlv"), type: "ping", body }, w);
  const delivered = isSuccess(result);
  return { delivered, statusCode: result.statusCode, error: delivered ? null : failureReason(result) };
}

/**
 * Queues events again, same event ids, new delivery ids (docs/api.md §13), for an active
 * subscription only, at most 10,000 per call (docs/webhooks.md §5). An event is skipped only
 * when a delivery of it to the subscription is still waiting for its first attempt (pending,
 * never attempted, not being sent, as `inFlight` tells): that one will reach the receiver
 * after this call anyway. One sent, being sent, or retrying gets a new delivery. The filter
 * is not asked: the caller names the events. `queued` counts the deliveries actually added.
 */
export async function redeliver(
  db: Db,
  projectId: string,
  id: string,
  input: { eventIds?: string[]; since?: string; until?: string },
  now: number,
  inFlight: InFlight,
) {
  const webhook = await requireWebhook(db, projectId, id);
  if (webhook.status !== "active") {
    throw new ApiError("ERR_CONFLICT", "The subscription is disabled; enable it (PATCH status active) before redelivering.");
  }
  const oldest = retainedSince(now);
  let eventIds: string[];
  if (input.eventIds) {
    const ids = [...new Set(input.eventIds)];
    const found = await findEvents(db, projectId, ids, oldest);
    if (found.length !== ids.length) throw validationError("eventIds", "eventIds names events unknown in this project (or older than 30 days).");
    eventIds = ids;
  } else {
    const since = toIso(input.since!)!;
    const events = await eventsBetween(db, projectId, since > oldest ? since : oldest, input.until ? toIso(input.until)! : null, REDELIVER_MAX + 1);
    if (events.length > REDELIVER_MAX) {
      throw validationError("since", `since (to until) covers more than ${REDELIVER_MAX.toLocaleString("en")} events; redeliver a shorter range.`);
    }
    const subscribed = JSON.parse(webhook.events) as string[];
    eventIds = events.filter((e) => subscribesTo(subscribed, e.type)).map((e) => e.id);
  }
  return { queued: await queue(db, projectId, webhook.id, eventIds, new Date(now).toISOString(), inFlight) };
}

/** An event's contact and place in that contact's order (docs/webhooks.md §8.2). */
type Order = { contactId: number; position: number };

/**
 * Adds a pending delivery, due `now`, per event that has none waiting for its first attempt
 * (see `redeliver`), carrying the event's contact and position so per-contact ordering holds.
 */
async function queue(db: Db, projectId: string, webhookId: string, eventIds: string[], now: string, inFlight: InFlight): Promise<number> {
  let queued = 0;
  for (let i = 0; i < eventIds.length; i += 500) {
    const chunk = eventIds.slice(i, i + 500);
    // Keyed by event only, so deliveries_event is the one plan (a subscription's backlog is
    // never walked); the few deliveries of each event are filtered here.
    const existing = await db
      .selectFrom("deliveries")
      .select(["id", "event_id", "webhook_id", "status", "attempts", "contact_id", "position"])
      .where("event_id", "in", chunk)
      .execute();
    const waiting = existing.filter((d) => d.webhook_id === webhookId && d.status === "pending" && d.attempts === 0);
    const busy = waiting.length === 0 ? new Set<string>() : await inFlight(db, waiting.map((d) => d.id), now);
    const skip = new Set(waiting.filter((d) => !busy.has(d.id)).map((d) => d.event_id));
    const fresh = chunk.filter((eventId) => !skip.has(eventId));
    const orders = new Map<string, Order>();
    for (const d of existing) {
      if (d.contact_id !== null && d.position !== null) orders.set(d.event_id, { contactId: d.contact_id, position: d.position });
    }
    await ordersOfChanges(db, projectId, fresh.filter((e) => !orders.has(e)), orders);
    await insertDeliveries(db, fresh.map((eventId) => ({ eventId, webhookId, contactId: orders.get(eventId)?.contactId, position: orders.get(eventId)?.position })), now);
    queued += fresh.length;
  }
  return queued;
}

/**
 * The order of events no delivery was ever made of (a subscription's downtime): the contact
 * of the change each tells of (events.seq → changes), placed after that change's other events.
 * An event whose change is gone (retention, erasure) goes unordered.
 */
async function ordersOfChanges(db: Db, projectId: string, eventIds: string[], orders: Map<string, Order>): Promise<void> {
  if (eventIds.length === 0) return;
  const rows = await db
    .selectFrom("events")
    .innerJoin("changes", (j) => j.onRef("changes.project_id", "=", "events.project_id").onRef("changes.seq", "=", "events.seq"))
    .select(["events.id", "events.seq", "changes.contact_id"])
    .where("events.project_id", "=", projectId)
    .where("events.id", "in", eventIds)
    .execute();
  for (const r of rows) {
    if (r.contact_id !== null && r.seq !== null) orders.set(r.id, { contactId: r.contact_id, position: r.seq * 4 + 3 });
  }
}
