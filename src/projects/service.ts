import type { Db } from "../storage/schema.ts";
import { DEFAULT_BATCH_ITEMS_PER_HOUR, DEFAULT_CONTACT_CREATES_PER_HOUR, DEFAULT_REQUESTS_PER_MINUTE } from "./limits.ts";
import { newId } from "../lib/ids.ts";

export interface ProjectSettings {
  contactQuota?: number | null;
  rateLimitPerMinute?: number;
  contactCreatesPerHour?: number;
  batchItemsPerHour?: number;
}

/** Reference data of a new project (docs/api.md §10). */
const DEFAULT_CONTACT_TYPES = [
  { name: "Lead", category: "Lead", isDefault: false },
  { name: "Customer", category: "Customer", isDefault: true },
  { name: "Personnel", category: "Personnel", isDefault: false },
  { name: "Other", category: "Other", isDefault: false },
];
const DEFAULT_INTERACTION_TYPES = ["Call", "Email", "Meeting", "Message"];

/** A project with its reference data (docs/cli.md §4, docs/api.md §10), created at `now` (the caller's clock). */
export async function createProject(db: Db, name: string, now: string, settings: ProjectSettings = {}) {
  const id = newId("prj");
  await db
    .insertInto("projects")
    .values({
      id,
      name,
      contact_quota: settings.contactQuota ?? null,
      rate_limit_per_minute: settings.rateLimitPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE,
      contact_creates_per_hour: settings.contactCreatesPerHour ?? DEFAULT_CONTACT_CREATES_PER_HOUR,
      batch_items_per_hour: settings.batchItemsPerHour ?? DEFAULT_BATCH_ITEMS_PER_HOUR,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto("contact_types")
    .values(
      DEFAULT_CONTACT_TYPES.map((t) => ({
        id: newId("ct"),
        project_id: id,
        name: t.name,
        category: t.category,
        is_default: t.isDefault ? 1 : 0,
        created_at: now,
      })),
    )
    .execute();
  await db
    .insertInto("interaction_types")
    .values(DEFAULT_INTERACTION_TYPES.map((n) => ({ id: newId("it"), project_id: id, name: n, created_at: now })))
    .execute();
  return (await findProject(db, id))!;
}

export async function updateProject(db: Db, id: string, settings: ProjectSettings & { name?: string }, now: string) {
  const patch: Record<string, unknown> = { updated_at: now };
  if (settings.name !== undefined) patch.name = settings.name;
  if (settings.contactQuota !== undefined) patch.contact_quota = settings.contactQuota;
  if (settings.rateLimitPerMinute !== undefined) patch.rate_limit_per_minute = settings.rateLimitPerMinute;
  if (settings.contactCreatesPerHour !== undefined) patch.contact_creates_per_hour = settings.contactCreatesPerHour;
  if (settings.batchItemsPerHour !== undefined) patch.batch_items_per_hour = settings.batchItemsPerHour;
  await db.updateTable("projects").set(patch).where("id", "=", id).execute();
  return findProject(db, id);
}

export async function findProject(db: Db, id: string) {
  const row = await db.selectFrom("projects").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? toProject(row) : null;
}

export async function listProjects(db: Db) {
  const rows = await db.selectFrom("projects").selectAll().orderBy("created_at").orderBy("id").execute();
  return rows.map(toProject);
}

function toProject(row: {
  id: string;
  name: string;
  contact_quota: number | null;
  rate_limit_per_minute: number;
  contact_creates_per_hour: number;
  batch_items_per_hour: number;
  contact_count: number;
  created_at: string;
}) {
  return {
    id: row.id,
    name: row.name,
    contactQuota: row.contact_quota,
    rateLimitPerMinute: row.rate_limit_per_minute,
    contactCreatesPerHour: row.contact_creates_per_hour,
    batchItemsPerHour: row.batch_items_per_hour,
    contactCount: row.contact_count,
    createdAt: row.created_at,
  };
}
