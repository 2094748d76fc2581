import { Hono, type Context } from "hono";
import { isoNow } from "../../lib/time.ts";
import { findTagIds } from "../../reference/repository.ts";
import { parseContactId } from "../../contacts/service.ts";
import { write } from "../actions.ts";
import { askToConfirm, confirmed } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { field, fields } from "../security.ts";
import { Layout, TableWrap } from "../ui.tsx";
import { contactPath, contactsPath, displayName } from "./contact-common.ts";
import { applyBulk, MAX_BULK, type BulkAction, type BulkOutcome } from "./contacts-bulk-apply.ts";
import { renderList } from "./contacts-list-page.tsx";
import { listHref, readQuery } from "./contacts-list-query.ts";

/**
 * The contacts list's bulk actions (docs/admin.md §3): the ticked contacts get a tag, lose
 * one, or go to the trash (after a confirmation), in one unit of work. A refused form (no
 * contact ticked, no tag) shows the list again with the boxes still ticked, 422; when every
 * contact was done the list's page comes back with a notice (post/redirect/get); otherwise
 * a page lists the contacts that failed and why.
 */
export const contactBulkPages = new Hono<AdminEnv>();

const ACTIONS = ["add-tag", "remove-tag", "delete"] as const;
const DONE = { "add-tag": "tagged", "remove-tag": "untagged", delete: "deleted" } as const;

contactBulkPages.post("/bulk", async (c) => {
  const projectId = c.var.project.id;
  // The list's address the form came from: only its query, read as the list reads it, so a redirect never leaves the list.
  const back = field(c, "back");
  const params = new URLSearchParams(back.startsWith("?") ? back.slice(1) : "");
  const { query, cursor } = readQuery(params);
  const listAddress = listHref(contactsPath(c), query, cursor);
  const selected = fields(c, "contactIds");
  const action = field(c, "action") as (typeof ACTIONS)[number];
  const tag = field(c, "bulkTag").trim();
  const refuse = (name: string, message: string) => renderList(c, params, { errors: { fields: { [name]: message }, general: [] }, selected, bulkTag: tag });

  if (!ACTIONS.includes(action)) return refuse("contactIds", "Choose Add tag, Remove tag or Delete selected.");
  if (selected.length === 0) return refuse("contactIds", "Select at least one contact.");
  if (new Set(selected).size > MAX_BULK) return refuse("contactIds", `Select at most ${MAX_BULK} contacts at a time.`);
  let work: BulkAction = { kind: "delete" };
  if (action !== "delete") {
    if (tag === "") return refuse("bulkTag", action === "add-tag" ? "Enter the tag to add." : "Enter the tag to remove.");
    if ([...tag].length > 64) return refuse("bulkTag", "A tag must be 1–64 characters.");
    if (action === "add-tag") work = { kind: "add-tag", tag };
    else {
      const ids = await findTagIds(c.var.deps.db, projectId, [tag]);
      if (ids === null) return refuse("bulkTag", `This project has no tag named "${tag}".`);
      work = { kind: "remove-tag", tagId: ids[0]! };
    }
  } else if (!confirmed(c)) {
    return askToConfirm(c, {
      title: selected.length === 1 ? "Delete 1 contact?" : `Delete ${selected.length} contacts?`,
      consequence: <DeleteConsequence names={await namesOf(c, selected)} />,
      button: "Delete contacts",
      back: listAddress,
      section: "contacts",
      carry: { contactIds: selected, action: "delete", back },
    });
  }

  const now = isoNow(c.var.deps.clock);
  const outcome = await write(c, projectId, (trx) => applyBulk(trx, projectId, selected, work, now));
  if (outcome.failed.length === 0) {
    const next = new URL(listAddress, "http://list");
    next.searchParams.set("done", DONE[action]);
    next.searchParams.set("n", String(outcome.done.length));
    if (outcome.unchanged.length > 0) next.searchParams.set("u", String(outcome.unchanged.length));
    return c.redirect(next.pathname + next.search, 303);
  }
  return c.html(<OutcomePage c={c} action={action} tag={tag} outcome={outcome} back={listAddress} />);
});

/** The names of the contacts about to be deleted, for the confirmation (those still live). */
async function namesOf(c: Context<AdminEnv>, contactIds: string[]): Promise<string[]> {
  const numbers = contactIds.map(parseContactId).filter((n): n is number => n !== null);
  if (numbers.length === 0) return [];
  const rows = await c.var.deps.db
    .selectFrom("contacts")
    .select(["contact_number", "first_name", "last_name", "business_name"])
    .where("project_id", "=", c.var.project.id)
    .where("contact_number", "in", numbers)
    .where("deleted_at", "is", null)
    .orderBy("contact_number")
    .execute();
  return rows.map((r) => {
    const contactId = `CR-${Number(r.contact_number)}`;
    const name = displayName({ contactId, firstName: r.first_name, lastName: r.last_name, businessName: r.business_name });
    return name === contactId ? contactId : `${name} (${contactId})`;
  });
}

const DeleteConsequence = ({ names }: { names: string[] }) => (
  <>
    <p>
      They go to the trash, as DELETE /v1/contacts/&#123;id&#125; does: they leave lists, search, duplicates and the quota, and fire contact.deleted.
      Each can be restored with its history within 30 days; after that it is erased.
    </p>
    <ul class="names">
      {names.map((n) => (
        <li>{n}</li>
      ))}
    </ul>
  </>
);

const VERBS = {
  "add-tag": (tag: string) => ({ done: `Tag "${tag}" added to`, same: "already had it" }),
  "remove-tag": (tag: string) => ({ done: `Tag "${tag}" removed from`, same: "did not have it" }),
  delete: () => ({ done: "Moved to the trash:", same: "" }),
};

const count = (n: number) => `${n} ${n === 1 ? "contact" : "contacts"}`;

/** Some contacts failed: what was done, and each failure with the API's reason. */
function OutcomePage({ c, action, tag, outcome, back }: { c: Context<AdminEnv>; action: (typeof ACTIONS)[number]; tag: string; outcome: BulkOutcome; back: string }) {
  const verb = VERBS[action](tag);
  const title = outcome.failed.length === 1 ? "1 contact was not changed" : `${outcome.failed.length} contacts were not changed`;
  return (
    <Layout title={title} session={c.var.session} project={c.var.project} section="contacts">
      <h1>{title}</h1>
      <p role="status">
        {verb.done} {count(outcome.done.length)}.{outcome.unchanged.length > 0 ? ` ${count(outcome.unchanged.length)} ${verb.same}.` : ""} The contacts
        below were left as they were.
      </p>
      <TableWrap label="Contacts not changed">
        <table>
          <thead>
            <tr>
              <th scope="col">Contact</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {outcome.failed.map((f) => (
              <tr>
                <td data-label="Contact" class="mono">
                  {f.contactId}
                </td>
                <td data-label="Reason" class="wrap">
                  {f.message}
                  {f.mergedInto ? (
                    <>
                      {" "}
                      <a href={contactPath(c, f.mergedInto)}>Open {f.mergedInto}</a>
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <p>
        <a href={back}>Back to contacts</a>
      </p>
    </Layout>
  );
}
