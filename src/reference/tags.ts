import { patchContact } from "../contacts/service.ts";
import type { Db } from "../storage/schema.ts";
import { filtersNaming, ReferenceInUseError } from "./edit.ts";
import { ReferenceInputError } from "./service.ts";

/**
 * Renaming, merging and deleting tags (docs/admin.md §3). A rename changes the tag, not
 * the contacts (they hold its id). A merge or a deletion changes the tags of every contact
 * that has the tag, each through the API's own PATCH (src/contacts/service.ts
 * patchContact): a new version, a change record and a contact.updated event per contact,
 * as if each had been patched. Both run in steps of STEP contacts, one unit of work each;
 * the step that finds the last of them also fixes the trash and removes the tag, so an
 * interrupted run leaves every contact consistent and can simply be run again.
 */

/** Contacts changed per unit of work. */
export const TAG_STEP = 200;

/** The API's rule for a tag name (docs/api.md §11.9): 1–64 characters, trimmed. */
function checkTagName(value: string): string {
  const name = value.trim();
  if (name === "" || name.length > 64) throw new ReferenceInputError("name", "must have 1–64 characters");
  return name;
}

const tagOf = (db: Db, projectId: string, id: string) =>
  db.selectFrom("tags").select(["id", "name"]).where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();

/** A new name for a tag; another tag of that name (any case) is refused: merge into it instead. */
export async function renameTag(db: Db, projectId: string, id: string, name: string) {
  const checked = checkTagName(name);
  const other = await db.selectFrom("tags").select("id").where("project_id", "=", projectId).where("name_key", "=", checked.toLowerCase()).where("id", "!=", id).executeTakeFirst();
  if (other) throw new ReferenceInputError("name", "is already used by another tag: merge this one into it instead");
  const done = await db.updateTable("tags").set({ name: checked, name_key: checked.toLowerCase() }).where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
  if (Number(done.numUpdatedRows) === 0) throw new ReferenceInUseError("This tag no longer exists.");
}

/** What keeps a tag from going away: a subscription's filter naming it, a merge that can still be undone holding it. */
async function checkRemovable(db: Db, projectId: string, id: string) {
  const hooks = await filtersNaming(db, projectId, id);
  if (hooks.length > 0) throw new ReferenceInUseError(`The webhook filter of ${hooks.join(", ")} names this tag: change it first.`);
  const merges = await db.selectFrom("merges").select("id").where("project_id", "=", projectId).where("snapshot", "is not", null).where("snapshot", "like", `%"${id}"%`).executeTakeFirst();
  if (merges) throw new ReferenceInUseError("A merge of contacts that can still be undone holds this tag: try again once that undo has expired.");
}

/** How many live contacts have the tag. */
export async function contactsTagged(db: Db, id: string): Promise<number> {
  const row = await db
    .selectFrom("contact_tags")
    .innerJoin("contacts", "contacts.id", "contact_tags.contact_id")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("contact_tags.tag_id", "=", id)
    .where("contacts.deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * One step of moving the tag `fromId` off its contacts, onto `intoId` (a merge) or onto
 * nothing (a deletion). Returns how many contacts it changed and whether the tag is gone.
 */
export async function moveTagStep(db: Db, projectId: string, fromId: string, intoId: string | null, now: string): Promise<{ changed: number; done: boolean }> {
  if (!(await tagOf(db, projectId, fromId))) return { changed: 0, done: true };
  if (intoId !== null && (intoId === fromId || !(await tagOf(db, projectId, intoId)))) throw new ReferenceInUseError("The tag to merge into no longer exists.");
  await checkRemovable(db, projectId, fromId);
  const tagged = await db
    .selectFrom("contact_tags")
    .innerJoin("contacts", "contacts.id", "contact_tags.contact_id")
    .select(["contacts.id", "contacts.contact_number"])
    .where("contact_tags.tag_id", "=", fromId)
    .where("contacts.deleted_at", "is", null)
    .orderBy("contacts.id")
    .limit(TAG_STEP)
    .execute();
  for (const contact of tagged) {
    const links = await db.selectFrom("contact_tags").select("tag_id").where("contact_id", "=", contact.id).execute();
    const kept = links.map((l) => l.tag_id).filter((t) => t !== fromId);
    const tags = intoId !== null && !kept.includes(intoId) ? [...kept, intoId] : kept;
    await patchContact(db, projectId, contact.contact_number, { tags }, now);
  }
  if (tagged.length === TAG_STEP) return { changed: tagged.length, done: false };
  // The last step: contacts in the trash keep their tag ids to get back on restore (docs/api.md §19.3).
  const trashed = await db.selectFrom("contacts").select(["id", "trashed_tags"]).where("project_id", "=", projectId).where("trashed_tags", "like", `%"${fromId}"%`).execute();
  for (const row of trashed) {
    const ids = (JSON.parse(row.trashed_tags!) as string[]).filter((t) => t !== fromId);
    if (intoId !== null && !ids.includes(intoId)) ids.push(intoId);
    await db.updateTable("contacts").set({ trashed_tags: JSON.stringify(ids) }).where("id", "=", row.id).execute();
  }
  // A link made meanwhile by another node's write: one more step takes it.
  if (await db.selectFrom("contact_tags").select("contact_id").where("tag_id", "=", fromId).limit(1).executeTakeFirst()) return { changed: tagged.length, done: false };
  await db.deleteFrom("tags").where("project_id", "=", projectId).where("id", "=", fromId).execute();
  return { changed: tagged.length, done: true };
}
