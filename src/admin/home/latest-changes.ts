import type { Actor } from "../../changes/actor.ts";
import { formatContactId } from "../../contacts/service.ts";
import type { Db } from "../../storage/schema.ts";

/** How many changes the home page lists (docs/admin.md §3, Home). */
export const LATEST_CHANGES = 20;

/** A change record as the home page lists it: what, when, by whom, about which contact as it is now. */
export interface LatestChange {
  seq: number;
  at: string;
  object: "contact" | "interaction_log";
  /** The contactId or interaction log id the record names. */
  objectId: string;
  action: string;
  /** The fields the change set (names only), in order. */
  fields: string[];
  /** The interaction type's name, for a log. */
  interactionType: string | null;
  /** Null once the contact was erased (docs/api.md §19.4). */
  actor: Actor | null;
  /** The API key's name, the admin's email; null when there is none to show. */
  actorName: string | null;
  /** The record's contact now (its current contactId and names), null once erased. */
  contact: { contactId: string; firstName: string | null; lastName: string | null; businessName: string | null; state: "live" | "deleted" | "merged" } | null;
}

/**
 * The project's latest change records (docs/api.md §19), newest first: the primary key
 * (project_id, seq) read backwards, each joined to its contact row; actors' names in one
 * statement per kind.
 */
export async function latestChanges(db: Db, projectId: string, limit = LATEST_CHANGES): Promise<LatestChange[]> {
  const rows = await db
    .selectFrom("changes")
    .leftJoin("contacts", "contacts.id", "changes.contact_id")
    .select([
      "changes.seq",
      "changes.at",
      "changes.object",
      "changes.object_id",
      "changes.action",
      "changes.changes",
      "changes.actor",
      "contacts.contact_number",
      "contacts.first_name",
      "contacts.last_name",
      "contacts.business_name",
      "contacts.deleted_at",
      "contacts.merged_into",
    ])
    .where("changes.project_id", "=", projectId)
    .orderBy("changes.seq", "desc")
    .limit(limit)
    .execute();
  const changes = rows.map((r): LatestChange => {
    const set: Array<{ field: string; to: unknown }> = r.changes ? JSON.parse(r.changes) : [];
    const type = set.find((c) => c.field === "interactionType")?.to;
    return {
      seq: Number(r.seq),
      at: r.at,
      object: r.object as LatestChange["object"],
      objectId: r.object_id,
      action: r.action,
      fields: set.map((c) => c.field),
      interactionType: typeof type === "string" ? type : type && typeof type === "object" && "name" in type ? String((type as { name: unknown }).name) : null,
      actor: r.actor ? (JSON.parse(r.actor) as Actor) : null,
      actorName: null,
      contact:
        r.contact_number === null
          ? null
          : { contactId: formatContactId(Number(r.contact_number)), firstName: r.first_name, lastName: r.last_name, businessName: r.business_name, state: r.merged_into !== null ? "merged" : r.deleted_at !== null ? "deleted" : "live" },
    };
  });
  await nameActors(db, projectId, changes);
  return changes;
}

/** Fills in the API keys' names and the admins' emails. */
async function nameActors(db: Db, projectId: string, changes: LatestChange[]): Promise<void> {
  const idsOf = (type: Actor["type"]) => [...new Set(changes.flatMap((c) => (c.actor?.type === type && c.actor.id ? [c.actor.id] : [])))];
  const keyIds = idsOf("api_key");
  const adminIds = idsOf("admin");
  const [keys, admins] = await Promise.all([
    keyIds.length === 0 ? [] : db.selectFrom("api_keys").select(["id", "name"]).where("project_id", "=", projectId).where("id", "in", keyIds).execute(),
    adminIds.length === 0 ? [] : db.selectFrom("admins").select(["id", "email"]).where("id", "in", adminIds).execute(),
  ]);
  const names = new Map<string, string | null>([...keys.map((k) => [k.id, k.name] as const), ...admins.map((a) => [a.id, a.email] as const)]);
  for (const c of changes) if (c.actor?.id) c.actorName = names.get(c.actor.id) ?? null;
}
