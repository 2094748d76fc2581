import { filterOnlyIn } from "../../storage/query.ts";
import type { Db } from "../../storage/schema.ts";
import { CATEGORIES } from "../../reference/schemas.ts";

/** A count of live contacts (docs/admin.md §3, Home): in all, per contact-type category, and without a type. */
export interface ContactTotals {
  all: number;
  byCategory: Array<{ category: (typeof CATEGORIES)[number]; count: number }>;
  untyped: number;
}

/**
 * The home page's totals, without reading the project's contacts one by one: the project's
 * counter (projects.contact_count: live contacts, kept with every create, trash, restore,
 * merge and erasure), each type's rows from contacts_type (contact_type_id first: an
 * index-only count), less that type's trashed and merged-away rows, which the partial
 * index contacts_trash finds. Contacts without a type are what the types leave of the total.
 */
export async function contactTotals(db: Db, project: { id: string; contactCount: number }): Promise<ContactTotals> {
  const types = await db.selectFrom("contact_types").select(["id", "category"]).where("project_id", "=", project.id).execute();
  const live = new Map<string, number>();
  if (types.length > 0) {
    const filterOnly = filterOnlyIn(db);
    const ids = types.map((t) => t.id);
    const [rows, gone] = await Promise.all([
      db
        .selectFrom("contacts")
        .select(["contact_type_id", (eb) => eb.fn.countAll<number>().as("n")])
        .where("contact_type_id", "in", ids)
        .groupBy("contact_type_id")
        .execute(),
      // Driven by contacts_trash alone: the project and the grouping must not steer SQLite
      // onto an index that walks the project's every contact (src/storage/sqlite/statistics.ts).
      db
        .selectFrom("contacts")
        .select(["contact_type_id", (eb) => eb.fn.countAll<number>().as("n")])
        .where("deleted_at", "is not", null)
        .where(filterOnly("project_id"), "=", project.id)
        .groupBy(filterOnly("contact_type_id"))
        .execute(),
    ]);
    for (const r of rows) live.set(r.contact_type_id!, Number(r.n));
    for (const r of gone) if (r.contact_type_id !== null) live.set(r.contact_type_id, (live.get(r.contact_type_id) ?? 0) - Number(r.n));
  }
  const byCategory = CATEGORIES.map((category) => ({
    category,
    count: types.filter((t) => t.category === category).reduce((sum, t) => sum + Math.max(0, live.get(t.id) ?? 0), 0),
  }));
  const typed = byCategory.reduce((sum, c) => sum + c.count, 0);
  return { all: project.contactCount, byCategory, untyped: Math.max(0, project.contactCount - typed) };
}
