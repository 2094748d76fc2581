import type { Db, WebhookRow } from "../db/schema.ts";
import { notFound, validationError } from "../errors.ts";
import { newId } from "../lib/ids.ts";
import { isoNow, toIso } from "../lib/time.ts";
import { checkUrl, type Resolver } from "./address-policy.ts";
import { subscribesTo } from "./catalog.ts";
import { findWebhook, toWebhook } from "./repository.ts";
import type { SecretBox } from "./secret-box.ts";
import { postPinned } from "./sender.ts";
import { generateSecret, signatureHeaders } from "./signature.ts";

/** What webhook operations need besides the database. */
export interface WebhookEnv {
  secrets: SecretBox;
  env: "production" | "sandbox";
  resolve: Resolver;
  timeoutMs: number;
}

const ROTATION_OVERLAP_MS = 24 * 3_600_000;
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;

async function requireUrl(w: WebhookEnv, url: string) {
  const verdict = await checkUrl(url, w.env, w.resolve, false);
  if (!verdict.ok) throw validationError("url", verdict.reason);
}

export async function requireWebhook(db: Db, projectId: string, id: string): Promise<WebhookRow> {
  const row = await findWebhook(db, projectId, id);
  if (!row) throw notFound("Webhook");
  return row;
}

/** Secrets to sign with: the current one, then the previous one during its 24 h overlap. */
export function signingSecrets(
  row: Pick<WebhookRow, "secret" | "previous_secret" | "previous_secret_until">,
  box: SecretBox,
  now = Date.now(),
): string[] {
  const secrets = [box.open(row.secret)];
  if (row.previous_secret && row.previous_secret_until && Date.parse(row.previous_secret_until) > now) {
    secrets.push(box.open(row.previous_secret));
  }
  return secrets;
}

export async function createWebhook(db: Db, w: WebhookEnv, projectId: string, input: { url: string; events: string[]; description?: string | null }) {
  await requireUrl(w, input.url);
  const secret = generateSecret();
  const now = isoNow();
  const row: WebhookRow = {
    id: newId("wh"),
    project_id: projectId,
    url: input.url,
    events: JSON.stringify([...new Set(input.events)]),
    description: input.description ?? null,
    status: "active",
    secret: w.secrets.seal(secret),
    previous_secret: null,
    previous_secret_until: null,
    consecutive_failures: 0,
    last_success_at: null,
    last_failure_reason: null,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto("webhooks").values(row).execute();
  return { ...toWebhook(row), secret };
}

/** PATCH (decisions §7): url, events, description, status; re-activation resets the failure count. */
export async function patchWebhook(
  db: Db,
  w: WebhookEnv,
  projectId: string,
  id: string,
  input: { url?: string; events?: string[]; description?: string | null; status?: "active" | "disabled" },
) {
  const row = await requireWebhook(db, projectId, id);
  if (input.url !== undefined) await requireUrl(w, input.url);
  const patch: Partial<WebhookRow> = { updated_at: isoNow() };
  if (input.url !== undefined) patch.url = input.url;
  if (input.events !== undefined) patch.events = JSON.stringify([...new Set(input.events)]);
  if (input.description !== undefined) patch.description = input.description;
  if (input.status !== undefined) {
    patch.status = input.status;
    if (input.status === "active" && row.status === "disabled") patch.consecutive_failures = 0;
  }
  await db.updateTable("webhooks").set(patch).where("id", "=", id).execute();
  return toWebhook({ ...row, ...patch });
}

export async function deleteWebhook(db: Db, projectId: string, id: string) {
  await requireWebhook(db, projectId, id);
  await db.deleteFrom("webhooks").where("id", "=", id).execute();
}

/** New secret; the old one keeps signing (second) for 24 h (decisions §7). */
export async function rotateSecret(db: Db, w: WebhookEnv, projectId: string, id: string) {
  const row = await requireWebhook(db, projectId, id);
  const secret = generateSecret();
  const now = Date.now();
  const patch = {
    secret: w.secrets.seal(secret),
    previous_secret: row.secret,
    previous_secret_until: new Date(now + ROTATION_OVERLAP_MS).toISOString(),
    updated_at: new Date(now).toISOString(),
  };
  await db.updateTable("webhooks").set(patch).where("id", "=", id).execute();
  return { ...toWebhook({ ...row, ...patch }), secret };
}

/**
 * The test ping (decisions §7): signed like a delivery, sent at once outside the retry
 * schedule and the outbox; its outcome is the answer. Nothing is recorded.
 */
export async function sendTestPing(db: Db, w: WebhookEnv, projectId: string, id: string) {
  const row = await requireWebhook(db, projectId, id);
  const verdict = await checkUrl(row.url, w.env, w.resolve, true);
  if (!verdict.ok) return { delivered: false, statusCode: null, error: verdict.reason };
  const body = JSON.stringify({
    id: newId("evt"),
    event: "ping",
    apiVersion: "v1",
    projectId,
    createdAt: isoNow(),
    data: { webhookId: row.id, message: "Test ping: this subscription receives signed events." },
  });
  const deliveryId = newId("dlv");
  const headers = { "X-Service-Event": "ping", ...signatureHeaders(signingSecrets(row, w.secrets), deliveryId, Math.floor(Date.now() / 1000), body) };
  const result = await postPinned(verdict.url, verdict.addresses[0]!, headers, body, w.timeoutMs);
  const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  return { delivered, statusCode: result.statusCode, error: delivered ? null : result.error ?? `HTTP ${result.statusCode}` };
}

/** Queues events again, same event ids, new delivery ids (decisions §7). */
export async function redeliver(db: Db, projectId: string, id: string, input: { eventIds?: string[]; since?: string; until?: string }) {
  const webhook = await requireWebhook(db, projectId, id);
  const oldest = new Date(Date.now() - EVENT_RETENTION_MS).toISOString();
  let q = db.selectFrom("events").select(["id", "type"]).where("project_id", "=", projectId).where("created_at", ">=", oldest);
  if (input.eventIds) {
    const ids = [...new Set(input.eventIds)];
    const found = await q.where("id", "in", ids).execute();
    if (found.length !== ids.length) throw validationError("eventIds", "Some eventIds are unknown in this project (or older than 30 days).");
    return queue(db, webhook.id, found.map((e) => e.id));
  }
  const since = toIso(input.since!)!;
  q = q.where("created_at", ">=", since);
  if (input.until) q = q.where("created_at", "<=", toIso(input.until)!);
  const events = await q.orderBy("created_at").limit(100_000).execute();
  const subscribed = JSON.parse(webhook.events) as string[];
  return queue(db, webhook.id, events.filter((e) => subscribesTo(subscribed, e.type)).map((e) => e.id));
}

async function queue(db: Db, webhookId: string, eventIds: string[]) {
  const now = isoNow();
  for (let i = 0; i < eventIds.length; i += 500) {
    const chunk = eventIds.slice(i, i + 500);
    await db
      .insertInto("deliveries")
      .values(chunk.map((eventId) => ({ id: newId("dlv"), event_id: eventId, webhook_id: webhookId, status: "pending", next_attempt_at: now, created_at: now, updated_at: now })))
      .execute();
  }
  return { queued: eventIds.length };
}

