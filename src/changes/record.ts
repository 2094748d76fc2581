import { sql } from "kysely";
import { preparedInsert, preparedQuery } from "../storage/prepared.ts";
import type { Db } from "../storage/schema.ts";
import { runningUnit } from "../storage/unit-of-work.ts";
import { newId } from "../lib/ids.ts";
import type { EventType } from "../events/catalog.ts";
import type { EventData } from "../events/payloads.ts";
import { enqueueEvents, type OutboxEvent } from "../events/outbox.ts";
import type { EventSubject } from "../webhooks/filter.ts";
import { currentActing, type Acting } from "./actor.ts";

export type ChangeAction = "created" | "updated" | "deleted" | "restored" | "merged" | "erased";
export type ChangeObject = "contact" | "interaction_log";

/** One field a change set (docs/api.md §19.1): `email`, `address.city`, `customFields.<id>`, `tags` (names), `contactId`. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

/** An event told of a change: written with it, carrying its seq (docs/webhooks.md §8: per-contact order). */
export interface StagedEvent {
  id: string;
  type: EventType;
  data: unknown;
  createdAt: string;
  subject: EventSubject | null;
}

/** A change kept by its unit until the unit's work ends (src/storage/unit-of-work.ts). */
export interface StagedChange {
  projectId: string;
  object: ChangeObject;
  /** The contactId, or the interaction log's `il_` id. */
  id: string;
  /** The contact's internal id: its history follows it across relabels. */
  contactId: number | null;
  /** null: no change, only events about the object (a form submission that changed nothing). */
  action: ChangeAction | null;
  changes?: FieldChange[];
  at: string;
  events: StagedEvent[];
}

/** An event to record with a change: its data has the type of its event's schema (src/events/payloads.ts). */
export function eventOf<T extends EventType>(type: T, data: EventData<T>, createdAt: string, subject: EventSubject | null): StagedEvent {
  return { id: newId("evt"), type, data, createdAt, subject };
}

/**
 * Records a change and the events that tell of it (docs/api.md §19.1, docs/webhooks.md §1),
 * in the caller's transaction. Inside a unit of work the change is staged and written at the
 * unit's end (writeChanges), so the project's seq is taken as late as possible: on
 * PostgreSQL that lock is the last a transaction takes and is held only to its commit.
 * Outside a unit (a test's bare transaction) it is written at once.
 */
export async function recordChange(db: Db, change: StagedChange): Promise<void> {
  const unit = runningUnit();
  if (unit) unit.stageChange(change);
  else await writeChanges(db, [change], currentActing());
}

/** recordChange for many changes (a batch's items), in order. */
export async function recordChanges(db: Db, changes: StagedChange[]): Promise<void> {
  const unit = runningUnit();
  if (unit) for (const change of changes) unit.stageChange(change);
  else await writeChanges(db, changes, currentActing());
}

const insertChangeRows = preparedInsert(
  "changes",
  ["project_id", "seq", "at", "object", "object_id", "contact_id", "action", "changes", "actor", "request_id"],
  { maxRows: 256 },
);
const insertEventRows = preparedInsert("events", ["id", "project_id", "type", "body", "created_at", "seq"], { maxRows: 256 });

/**
 * Takes `count` seqs of the project: the last one given. The counter row stays locked to
 * the commit (PostgreSQL), so seq n + 1 is given only once n has committed, and a reader
 * never sees n + 1 while n can still appear (docs/scaling.md §8); a rollback gives the
 * numbers back, so there are no gaps.
 */
const takeSeqsQuery = preparedQuery<[string, number, number], { last_seq: number }>(3, (db, projectId, count, increment) =>
  db
    .insertInto("change_counters")
    .values({ project_id: projectId, last_seq: count })
    .onConflict((oc) => oc.column("project_id").doUpdateSet({ last_seq: sql<number>`change_counters.last_seq + ${increment}` }))
    .returning("last_seq"),
);

async function takeSeqs(db: Db, projectId: string, count: number): Promise<number> {
  const [row] = await takeSeqsQuery(db, projectId, count, count);
  return Number(row!.last_seq);
}

/** Writes staged changes with their seqs, then their events and deliveries: the end of every unit that changed something. */
export async function writeChanges(db: Db, staged: StagedChange[], acting: Acting): Promise<void> {
  if (staged.length === 0) return;
  const byProject = new Map<string, StagedChange[]>();
  for (const change of staged) byProject.set(change.projectId, [...(byProject.get(change.projectId) ?? []), change]);
  const actor = JSON.stringify(acting.actor);
  // Projects' counters in id order: two units writing to the same two projects never wait on each other in a cycle.
  for (const [projectId, changes] of [...byProject].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const count = changes.filter((c) => c.action !== null).length;
    // Taken even for events alone (count 0): their order waits for the changes before them.
    let seq = (await takeSeqs(db, projectId, count)) - count;
    const eventRows: unknown[][] = [];
    const outbox: OutboxEvent[] = [];
    const rows: unknown[][] = [];
    for (const c of changes) {
      // Events alone come after the change before them: the last of its four places.
      const offset = c.action === null ? 3 : 0;
      if (c.action !== null) {
        seq += 1;
        const fields = c.changes && c.changes.length > 0 ? JSON.stringify(c.changes) : null;
        // An erasure's own record is as redacted as the contact's others (docs/api.md §19.4): seq, at, object, id, action.
        const anonymous = c.action === "erased";
        rows.push([projectId, seq, c.at, c.object, c.id, c.contactId, c.action, anonymous ? null : fields, anonymous ? null : actor, anonymous ? null : acting.requestId]);
      }
      c.events.forEach((e, k) => {
        const body = JSON.stringify({ id: e.id, event: e.type, apiVersion: "v1", projectId, createdAt: e.createdAt, data: e.data });
        eventRows.push([e.id, projectId, e.type, body, e.createdAt, seq]);
        outbox.push({ id: e.id, type: e.type, position: seq * 4 + Math.min(k + offset, 3), subject: e.subject });
      });
    }
    if (rows.length > 0) await insertChangeRows(db, rows);
    if (eventRows.length === 0) continue;
    await insertEventRows(db, eventRows);
    await enqueueEvents(db, projectId, outbox, changes[0]!.at);
  }
}
