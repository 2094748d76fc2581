import { preparedInsert, preparedQuery } from "../storage/prepared.ts";
import type { Db } from "../storage/schema.ts";
import { newId } from "../lib/ids.ts";
import type { EventType } from "./catalog.ts";
import type { EventData } from "./payloads.ts";
import { enqueueDeliveries, enqueueDeliveriesOfMany } from "./outbox.ts";

export type { EventType };

const insertEvent = preparedQuery<[string, string, string, string, string], never>(5, (db, id, projectId, type, body, createdAt) =>
  db.insertInto("events").values({ id, project_id: projectId, type, body, created_at: createdAt }),
);

/**
 * Records an event in the caller's transaction (docs/webhooks.md §1: transactional outbox), with
 * its deliveries. The envelope of docs/webhooks.md §2 is serialised once here; every attempt
 * sends these exact bytes; `data` has the type of its event's schema (src/events/payloads.ts). `createdAt` is the service's clock (issue 11): the 30-day
 * retention and the deliveries' due time are measured from it.
 */
export async function recordEvent<T extends EventType>(
  db: Db,
  projectId: string,
  type: T,
  data: EventData<T>,
  createdAt: string,
): Promise<string> {
  const id = newId("evt");
  const body = JSON.stringify({ id, event: type, apiVersion: "v1", projectId, createdAt, data });
  await insertEvent(db, id, projectId, type, body, createdAt);
  await enqueueDeliveries(db, projectId, id, type, createdAt);
  return id;
}

const insertEventRows = preparedInsert("events", ["id", "project_id", "type", "body", "created_at"], { maxRows: 256 });

/**
 * recordEvent for many events of one type at once (a batch's items, docs/api.md §18.4):
 * the same envelopes and deliveries, in a few multi-row statements, in the order given.
 */
export async function recordEvents<T extends EventType>(db: Db, projectId: string, type: T, data: Array<EventData<T>>, createdAt: string): Promise<string[]> {
  const ids = data.map(() => newId("evt"));
  const rows = data.map((d, i) => [ids[i], projectId, type, JSON.stringify({ id: ids[i], event: type, apiVersion: "v1", projectId, createdAt, data: d }), createdAt]);
  await insertEventRows(db, rows);
  await enqueueDeliveriesOfMany(db, projectId, ids, type, createdAt);
  return ids;
}
