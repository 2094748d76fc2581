import { Hono, type Context, type MiddlewareHandler } from "hono";
import { findContactRow } from "../../contacts/repository.ts";
import { formatContactId, parseContactId, requireContactNumber } from "../../contacts/service.ts";
import { ApiError, notFound } from "../../errors.ts";
import { isoNow } from "../../lib/time.ts";
import { findMerge, mergedTarget } from "../../merges/repository.ts";
import { undoMerge } from "../../merges/undo.ts";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout, PostForm, Time, type FormErrors } from "../ui.tsx";
import { contactPath, contactsPath, displayName } from "./contact-common.ts";
import { listed } from "./merge-choices.ts";
import { mergesAt, undoState, type MergeInfo } from "./merge-timeline.tsx";

/**
 * "Undo merge" from the survivor's timeline (docs/api.md §20.4): a confirmation that says what
 * comes back and what stays, then the same undoMerge as `POST /merges/{mergeId}/undo`, in
 * the console's write queue (docs/operations.md §3.1). Mounted under a contact's page.
 */
export const mergeUndoPages = new Hono<AdminEnv>();


interface PageProps {
  c: Context<AdminEnv>;
  contactId: string;
  name: string;
  merge: MergeInfo;
  at: string;
  errors?: FormErrors;
}

const UndoPage = ({ c, contactId, name, merge, at, errors }: PageProps) => {
  const here = contactPath(c, contactId);
  const state = undoState(merge, isoNow(c.var.deps.clock));
  const ids = merge.mergedContactIds;
  return (
    <Layout title={`Undo merge into ${contactId}`} session={c.var.session} project={c.var.project} section="contacts">
      <h1>Undo merge into {contactId}</h1>
      <ErrorSummary errors={errors} />
      <div class="card">
        <p>
          On <Time at={at} />, {listed(ids)} {ids.length === 1 ? "was" : "were"} merged into {name} ({contactId}).
        </p>
        {state === "possible" ? (
          <>
            <p>
              Undoing it brings {listed(ids)} back with {ids.length === 1 ? "its" : "their"} contact id{ids.length === 1 ? "" : "s"}, fields, tags and interaction logs as before the
              merge. Interaction logs added to {contactId} since stay with it.
            </p>
            <p>The fields of {contactId} that the merge set and nobody changed since go back to their values before the merge; fields changed since keep their new values.</p>
            <p class="hint">
              Possible until <Time at={merge.undoUntil} />.
            </p>
          </>
        ) : (
          <p>
            <strong>
              {state === "undone" ? "This merge was undone already." : state === "expired" ? "This merge can no longer be undone: its 30 days have ended." : "This merge can no longer be undone: one of its contacts was erased."}
            </strong>
          </p>
        )}
      </div>
      {state === "possible" ? (
        <PostForm action={`${here}/merges/${encodeURIComponent(merge.id)}/undo`} token={c.var.session.csrfToken} class="card" label="Undo merge">
          <div class="actions">
            <button type="submit">Confirm undo</button>
            <a href={`${here}#timeline`}>Cancel</a>
          </div>
        </PostForm>
      ) : (
        <p>
          <a href={`${here}#timeline`}>Back to {contactId}</a>
        </p>
      )}
    </Layout>
  );
};

/** The confirmation; a merge this contact did not survive, or an unknown one, is the console's 404 page. */
async function confirmation(c: Context<AdminEnv>, errors?: FormErrors, status: 200 | 402 | 404 | 409 | 410 = 200) {
  const { db } = c.var.deps;
  const projectId = c.var.project.id;
  const n = requireContactNumber(c.req.param("contactId")!);
  const contact = await findContactRow(db, projectId, n);
  if (!contact) throw notFound("Contact");
  const row = await findMerge(db, projectId, c.req.param("mergeId")!);
  if (!row || row.survivor_id !== Number(contact.id)) throw notFound("Merge");
  const merge = (await mergesAt(db, row.survivor_id, [Date.parse(row.at)])).get(Date.parse(row.at))!;
  const name = displayName({ contactId: formatContactId(n), firstName: contact.first_name, lastName: contact.last_name, businessName: contact.business_name });
  return c.html(<UndoPage c={c} contactId={formatContactId(n)} name={name} merge={merge} at={row.at} errors={errors} />, status);
}

mergeUndoPages.get("/:contactId/merges/:mergeId/undo", (c) => confirmation(c));

mergeUndoPages.post("/:contactId/merges/:mergeId/undo", async (c) => {
  const projectId = c.var.project.id;
  const contactId = formatContactId(requireContactNumber(c.req.param("contactId")));
  const mergeId = c.req.param("mergeId");
  // The merge must be this contact's: the page that offered it says so (confirmation throws 404 otherwise).
  const row = await findMerge(c.var.deps.db, projectId, mergeId);
  const contact = await findContactRow(c.var.deps.db, projectId, requireContactNumber(contactId));
  if (!row || !contact || row.survivor_id !== Number(contact.id)) throw notFound("Merge");
  try {
    const now = isoNow(c.var.deps.clock);
    await write(c, projectId, (trx) => undoMerge(trx, projectId, mergeId, now));
    return c.redirect(`${contactPath(c, contactId)}?done=unmerged#timeline`, 303);
  } catch (error) {
    const errors = formErrors(error);
    const status = (error as ApiError).status;
    return confirmation(c, errors, status === 402 || status === 404 || status === 409 || status === 410 ? status : 409);
  }
});

/**
 * A merged-away contact's console pages (docs/api.md §20.3): a GET that found no such
 * contact goes to the page of the contact it was merged into (following later merges),
 * saying so; anything else is left as it was. 303, not 308: an undo brings the contact back.
 */
export function redirectMerged(): MiddlewareHandler<AdminEnv> {
  return async function redirectMerged(c, next) {
    await next();
    if ((c.req.method !== "GET" && c.req.method !== "HEAD") || !(c.error instanceof ApiError) || c.error.status !== 404) return;
    const contactId = c.req.param("contactId") ?? "";
    const n = parseContactId(contactId);
    if (n === null) return;
    const target = await mergedTarget(c.var.deps.db, c.var.project.id, n);
    if (target === null) return;
    const location = `${contactsPath(c)}/${formatContactId(target)}?${new URLSearchParams({ done: "mergedaway", from: formatContactId(n) })}`;
    // Not the 404 page's headers: a fresh answer.
    c.res = undefined as never;
    c.res = new Response(null, { status: 303, headers: { Location: location } });
  };
}
