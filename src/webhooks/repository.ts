import type { Db, WebhookRow } from "../storage/schema.ts";
import { keysetAfter } from "../storage/keyset.ts";
import { parseFilter } from "./filter.ts";
import type { Webhook } from "./schemas.ts";

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events),
    description: row.description,
    status: row.status as Webhook["status"],
    consecutiveFailures: row.consecutive_failures,
    lastSuccessAt: row.last_success_at,
    lastFailureReason: row.last_failure_reason,
    filter: parseFilter(row.filter) as Webhook["filter"],
    ordering: row.ordering,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findWebhook(db: Db, projectId: string, id: string) {
  return db.selectFrom("webhooks").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

export async function listWebhooks(db: Db, projectId: string, limit: number, after?: [string, string]) {
  let q = db.selectFrom("webhooks").selectAll().where("project_id", "=", projectId);
  if (after) {
    q = q.where((eb) => keysetAfter(eb as never, ["created_at", "id"], after, "asc"));
  }
  return q.orderBy("created_at").orderBy("id").limit(limit + 1).execute();
}

export async function listAttempts(db: Db, webhookId: string, limit: number, after?: [string, string]) {
  let q = db.selectFrom("delivery_attempts").selectAll().where("webhook_id", "=", webhookId);
  if (after) {
    q = q.where((eb) => keysetAfter(eb as never, ["at", "id"], after, "desc"));
  }
  return q.orderBy("at", "desc").orderBy("id", "desc").limit(limit + 1).execute();
}
