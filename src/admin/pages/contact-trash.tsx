import { Hono, type Context } from "hono";
import { findContactIdentity, findTrashedContactRow } from "../../contacts/repository.ts";
import type { Contact } from "../../contacts/schemas.ts";
import { contactOf, getContactWithSignal, requireContactNumber } from "../../contacts/service.ts";
import { restoreContact, trashContact, TRASH_DAYS } from "../../contacts/trash.ts";
import { notFound } from "../../errors.ts";
import { jsonColumn } from "../../storage/query.ts";
import type { Db } from "../../storage/schema.ts";
import { isoNow } from "../../lib/time.ts";
import { askToConfirm, confirmed } from "../confirm.tsx";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import type { FormErrors } from "../ui.tsx";
import { contactPath, displayName } from "./contact-common.ts";

/**
 * A contact's Delete and Restore (docs/admin.md §3; docs/api.md §19.3): Delete
 * asks first (src/admin/confirm.tsx), then moves the contact to the trash as
 * `DELETE /contacts/{contactId}` does; the trashed contact's page stays reachable (its
 * fields, timeline and Erase) and offers Restore, as `POST /contacts/{contactId}/restore`.
 * Both in the console's write queue (docs/operations.md §3.1), same events as the API.
 */

export type ShownContact = Contact & { duplicateSignal: { emailMatches: number; phoneMatches: number } };

/** A contact as its page shows it: live, or in the trash (`trashedAt`); its row id for the timeline. */
export interface Loaded {
  contact: ShownContact;
  id: number;
  contactNumber: number;
  /** When it went to the trash; null when live. */
  trashedAt: string | null;
}

/**
 * Contact `n` live or in the trash. A merged-away contact, an erased one or one that never
 * was is notFound (the console's 404 page, or the survivor's page through redirectMerged).
 */
export async function loadShownContact(db: Db, projectId: string, n: number): Promise<Loaded> {
  const identity = await findContactIdentity(db, projectId, n, { trashed: true });
  if (!identity || identity.merged_into !== null) throw notFound("Contact");
  const id = Number(identity.id);
  if (identity.deleted_at === null) return { contact: await getContactWithSignal(db, projectId, n), id, contactNumber: n, trashedAt: null };
  const row = await findTrashedContactRow(db, projectId, n);
  if (!row) throw notFound("Contact");
  // Its tags wait in trashed_tags (docs/api.md §19.3): shown by the names they have now.
  const tagIds = jsonColumn<string[]>(row.trashed_tags ?? "[]");
  const tags = tagIds.length
    ? await db.selectFrom("tags").select(["id", "name"]).where("project_id", "=", projectId).where("id", "in", tagIds).orderBy("name").execute()
    : [];
  const contact = { ...contactOf({ ...row, tags: [] }), tags };
  return { contact: { ...contact, duplicateSignal: { emailMatches: 0, phoneMatches: 0 } }, id, contactNumber: n, trashedAt: row.deleted_at };
}

/** When a contact trashed at `trashedAt` is purged (docs/api.md §19.3), unless restored before. */
export const purgeAt = (trashedAt: string) => new Date(Date.parse(trashedAt) + TRASH_DAYS * 86_400_000).toISOString();

/** Re-renders the contact's page with a refusal (a restore refused 402 or 409). */
export type ShowRefusal = (c: Context<AdminEnv>, errors: FormErrors, status: 402 | 404 | 409 | 422) => Promise<Response>;

export function trashPages(show: ShowRefusal) {
  const pages = new Hono<AdminEnv>();

  pages.post("/:contactId/delete", async (c) => {
    const projectId = c.var.project.id;
    const n = requireContactNumber(c.req.param("contactId"));
    const { contact, trashedAt } = await loadShownContact(c.var.deps.db, projectId, n);
    const here = contactPath(c, contact.contactId);
    // In the trash already (a second click, another tab): its page says so and offers Restore.
    if (trashedAt) return c.redirect(`${here}?done=trashed`, 303);
    if (!confirmed(c)) {
      return askToConfirm(c, {
        title: `Delete ${displayName(contact)}?`,
        consequence: (
          <>
            <p>
              {contact.contactId} moves to the trash: it leaves the contact list, search and duplicates, and the API answers 404 for it. Its
              timeline stays with it.
            </p>
            <p>It can be restored from its page for {TRASH_DAYS} days; then it is erased.</p>
          </>
        ),
        button: "Delete contact",
        back: here,
        section: "contacts",
      });
    }
    try {
      const now = isoNow(c.var.deps.clock);
      await write(c, projectId, (trx) => trashContact(trx, projectId, n, now));
    } catch (error) {
      return show(c, formErrors(error), statusOf(error));
    }
    return c.redirect(`${here}?done=trashed`, 303);
  });

  /** Not destructive: no confirmation. 409 (a unique value taken meanwhile) and 402 (the quota) are said on the page. */
  pages.post("/:contactId/restore", async (c) => {
    const projectId = c.var.project.id;
    const n = requireContactNumber(c.req.param("contactId"));
    try {
      const now = isoNow(c.var.deps.clock);
      const contact = await write(c, projectId, (trx) => restoreContact(trx, projectId, n, now));
      return c.redirect(`${contactPath(c, contact.contactId)}?done=restored`, 303);
    } catch (error) {
      return show(c, formErrors(error), statusOf(error));
    }
  });

  return pages;
}

function statusOf(error: unknown): 402 | 404 | 409 | 422 {
  const status = (error as { status?: number }).status;
  return status === 402 || status === 404 || status === 409 ? status : 422;
}
