import type { Db } from "../db/schema.ts";
import { newId } from "../lib/ids.ts";
import { isoNow } from "../lib/time.ts";

/** Event names of interface §6.1. */
export type EventType = "contact.created" | "contact.updated" | "interaction_log.created" | "web_form.submitted";

/**
 * Records an event in the caller's transaction (decisions §7: transactional outbox). The
 * envelope of interface §6.2 is serialised once here; deliveries send these exact bytes.
 */
export async function recordEvent(db: Db, projectId: string, type: EventType, data: unknown): Promise<string> {
  const id = newId("evt");
  const createdAt = isoNow();
  const body = JSON.stringify({ id, event: type, apiVersion: "v1", projectId, createdAt, data });
  await db.insertInto("events").values({ id, project_id: projectId, type, body, created_at: createdAt }).execute();
  return id;
}
