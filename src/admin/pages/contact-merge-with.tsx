import { Hono } from "hono";
import { formatContactId, parseContactId } from "../../contacts/service.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout } from "../ui.tsx";
import { contactPath } from "./contact-common.ts";
import { MergeWithForm } from "./contact-fields.tsx";
import { comparePath, idsOf } from "./merge-choices.ts";

/**
 * The target of a contact's "Merge with other contacts" form (docs/admin.md §3): the typed
 * contact ids go on to the comparison with this contact kept; with none but this contact
 * the person stays here and is asked for one, 422, rather than reaching a comparison with
 * nothing to merge.
 */
export const contactMergeWithPages = new Hono<AdminEnv>();

contactMergeWithPages.get("/:contactId/merge-with", (c) => {
  const n = parseContactId(c.req.param("contactId"));
  if (n === null) return c.notFound();
  const contactId = formatContactId(n);
  const typed = c.req.query("ids") ?? "";
  const others = idsOf(typed).filter((id) => id !== contactId);
  if (others.length > 0) return c.redirect(comparePath(c, [contactId, ...others], contactId), 303);
  const error =
    typed.trim() === "" || idsOf(typed).length > 0 ? "Name at least one other contact to merge with." : "Name at least one other contact to merge with, by contact id such as CR-12.";
  const title = `Merge ${contactId} with other contacts`;
  return c.html(
    <Layout title={title} session={c.var.session} project={c.var.project} section="contacts">
      <h1>{title}</h1>
      <ErrorSummary errors={{ fields: { ids: error }, general: [] }} ids={{ ids: "f-merge-ids" }} />
      <div class="card">
        <MergeWithForm c={c} contactId={contactId} ids={typed} error={error} />
      </div>
      <p>
        <a href={contactPath(c, contactId)}>Back to {contactId}</a>
      </p>
    </Layout>,
    422,
  );
});
