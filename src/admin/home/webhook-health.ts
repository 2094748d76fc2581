import { sql } from "kysely";
import type { Db } from "../../storage/schema.ts";

const HOUR_MS = 3_600_000;
/** Subscriptions the home page shows; a project has a handful (the Webhooks page lists them all). */
export const MAX_SUBSCRIPTIONS = 50;
/** Pending deliveries are counted up to this; beyond, the page says "more than". */
export const PENDING_CAP = 10_000;

/** One subscription's last 24 hours (docs/admin.md §3, Home; docs/webhooks.md §2). */
export interface SubscriptionHealth {
  id: string;
  url: string;
  description: string | null;
  status: "active" | "disabled";
  consecutiveFailures: number;
  lastFailureReason: string | null;
  /** Attempts the receiver answered with 2xx: deliveries delivered in the window. */
  delivered: number;
  /** Attempts that failed in the window (each retry counts). */
  failed: number;
  /** Deliveries waiting now (to be tried, or parked while disabled), up to PENDING_CAP + 1. */
  pending: number;
  /** Per UTC hour, oldest first, the last one being the current hour. */
  hours: Array<{ hour: string; delivered: number; failed: number }>;
}

/** The 24 UTC hours ending with the current one, as YYYY-MM-DDTHH. */
export function utcHours(now: number, hours = 24): string[] {
  const current = Math.floor(now / HOUR_MS) * HOUR_MS;
  return Array.from({ length: hours }, (_, i) => new Date(current - (hours - 1 - i) * HOUR_MS).toISOString().slice(0, 13));
}

/**
 * Each subscription's health (docs/admin.md §3.1): disabled ones first, then failing ones
 * (active, the last attempts failed), then the others, oldest first within each; the 50
 * shown are the first 50 in that order. Attempts since the start of the 24th hour back,
 * read through delivery_attempts_webhook (webhook_id, at), and its pending deliveries
 * counted through deliveries_webhook_due (webhook_id, status, …), neither reading rows
 * outside the window or the backlog.
 */
export async function webhookHealth(db: Db, projectId: string, now: number): Promise<{ subscriptions: SubscriptionHealth[]; more: boolean }> {
  const hooks = await db
    .selectFrom("webhooks")
    .select(["id", "url", "description", "status", "consecutive_failures", "last_failure_reason", "created_at"])
    .where("project_id", "=", projectId)
    .orderBy(sql`case when status = 'disabled' then 0 when consecutive_failures > 0 then 1 else 2 end`)
    .orderBy("created_at")
    .orderBy("id")
    .limit(MAX_SUBSCRIPTIONS + 1)
    .execute();
  const more = hooks.length > MAX_SUBSCRIPTIONS;
  const shown = hooks.slice(0, MAX_SUBSCRIPTIONS);
  if (shown.length === 0) return { subscriptions: [], more };
  const hourList = utcHours(now);
  const since = `${hourList[0]}:00:00.000Z`;
  const ids = shown.map((h) => h.id);
  const [attempts, pending] = await Promise.all([
    sql<{ webhook_id: string; hour: string; ok: number; n: number }>`
      select webhook_id, substr(at, 1, 13) as hour,
             case when status_code >= 200 and status_code < 300 then 1 else 0 end as ok, count(*) as n
      from delivery_attempts
      where webhook_id in (${sql.join(ids)}) and at >= ${since}
      group by webhook_id, substr(at, 1, 13), case when status_code >= 200 and status_code < 300 then 1 else 0 end`.execute(db),
    Promise.all(ids.map((id) => pendingCount(db, id))),
  ]);
  const index = new Map(hourList.map((h, i) => [h, i]));
  const subscriptions = shown.map((h, i): SubscriptionHealth => ({
    id: h.id,
    url: h.url,
    description: h.description,
    status: h.status as SubscriptionHealth["status"],
    consecutiveFailures: Number(h.consecutive_failures),
    lastFailureReason: h.last_failure_reason,
    delivered: 0,
    failed: 0,
    pending: pending[i]!,
    hours: hourList.map((hour) => ({ hour, delivered: 0, failed: 0 })),
  }));
  const byId = new Map(subscriptions.map((s) => [s.id, s]));
  for (const r of attempts.rows) {
    const s = byId.get(r.webhook_id);
    const slot = index.get(r.hour);
    if (!s || slot === undefined) continue;
    const n = Number(r.n);
    if (Number(r.ok) === 1) {
      s.delivered += n;
      s.hours[slot]!.delivered += n;
    } else {
      s.failed += n;
      s.hours[slot]!.failed += n;
    }
  }
  return { subscriptions, more };
}

async function pendingCount(db: Db, webhookId: string): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb.selectFrom("deliveries").select("id").where("webhook_id", "=", webhookId).where("status", "=", "pending").limit(PENDING_CAP + 1).as("waiting"),
    )
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
