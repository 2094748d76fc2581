import { Hono, type Context } from "hono";
import { ADDRESS_KEYS, type Contact } from "../../contacts/schemas.ts";
import { getContactWithSignal, requireContactNumber } from "../../contacts/service.ts";
import { ApiError } from "../../errors.ts";
import { validationFailure } from "../../http/validation.ts";
import { CreateInteractionBody } from "../../interactions/schemas.ts";
import { createInteraction } from "../../interactions/service.ts";
import { isoNow } from "../../lib/time.ts";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout, Notice, PostForm, TextArea, Time, type FormErrors } from "../ui.tsx";
import { contactPath, contactsPath, displayName, idOf, loadReference, shownValue } from "./contact-common.ts";
import { contactErasePages } from "./contact-erase.tsx";
import { comparePath, duplicatesOfContact } from "./merge-choices.ts";
import { mergeUndoPages } from "./merge-undo.tsx";
import { readTimeline, TimelineList, type TimelinePage, type TimelineQuery } from "./contact-history.tsx";
import { field } from "../security.ts";

/**
 * A contact's page (docs/admin.md §3): every field, tags, custom fields, duplicateSignal, the
 * timeline (its interactions and its change history, docs/api.md §19, with "Undo merge" on the
 * merges it survived, §20.4) and "Add note"; "Erase" (docs/import-export.md §3); "Compare and
 * merge" with its possible duplicates (§20).
 */
export const contactPagePages = new Hono<AdminEnv>();

const DONE: Record<string, string> = {
  created: "Contact created.",
  saved: "Contact saved.",
  unchanged: "Nothing was changed, so nothing was saved.",
  noted: "Note added.",
  merged: "Contacts merged into this one. Their contact ids lead here now; the merge can be undone from the timeline for 30 days.",
  unmerged: "Merge undone: the merged contacts are back.",
};

/** The notice after an action, or of a page reached through a merged-away contactId (src/admin/pages/merge-undo.tsx redirectMerged). */
function doneText(c: Context<AdminEnv>): string | null {
  const done = c.req.query("done");
  const from = c.req.query("from") ?? "";
  if (done === "mergedaway") return /^CR-\d{1,15}$/.test(from) ? `${from} was merged into this contact.` : null;
  return done ? (DONE[done] ?? null) : null;
}

type Shown = Contact & { duplicateSignal: { emailMatches: number; phoneMatches: number } };

const Value = ({ v }: { v: string | null | undefined }) => (v ? <>{v}</> : <span class="none">—</span>);
const others = (n: number, what: string) => `${n} other contact${n === 1 ? "" : "s"} with this ${what}`;

interface PageProps {
  c: Context<AdminEnv>;
  contact: Shown;
  customTitles: Map<string, string>;
  timeline: TimelinePage;
  /** Contacts sharing a duplicate key with this one (docs/api.md §20.1). */
  duplicates: string[];
  note?: string;
  errors?: FormErrors;
}

const ContactPage = ({ c, contact, customTitles, timeline, duplicates, note, errors }: PageProps) => {
  const name = displayName(contact);
  const here = contactPath(c, contact.contactId);
  const address = ADDRESS_KEYS.map((k) => contact.address[k]).filter((v): v is string => !!v);
  const dup = contact.duplicateSignal;
  return (
    <Layout title={name} session={c.var.session} project={c.var.project} section="contacts">
      <h1>{name}</h1>
      <Notice text={doneText(c)} />
      <p class="actions">
        <a class="button secondary" href={`${here}/edit`}>
          Edit
        </a>
        <a class="button secondary" href={`${here}/erase`}>
          Erase
        </a>
        <a href={contactsPath(c)}>All contacts</a>
      </p>
      <dl class="props card">
        <dt>Contact id</dt>
        <dd class="mono">{contact.contactId}</dd>
        <dt>Identity</dt>
        <dd>{contact.identityType}</dd>
        <dt>First name</dt>
        <dd><Value v={contact.firstName} /></dd>
        <dt>Last name</dt>
        <dd><Value v={contact.lastName} /></dd>
        <dt>Business name</dt>
        <dd><Value v={contact.businessName} /></dd>
        <dt>Email</dt>
        <dd><Value v={contact.email} /></dd>
        <dt>Phone</dt>
        <dd><Value v={contact.phone} /></dd>
        <dt>Website</dt>
        <dd>{contact.website && /^https?:\/\//i.test(contact.website) ? <a href={contact.website} rel="noopener noreferrer nofollow">{contact.website}</a> : <Value v={contact.website} />}</dd>
        <dt>Address</dt>
        <dd>{address.length ? address.map((line) => <div>{line}</div>) : <Value v={null} />}</dd>
        <dt>Contact type</dt>
        <dd>{contact.contactType ? contact.contactType.name === contact.contactType.category ? contact.contactType.name : `${contact.contactType.name} (${contact.contactType.category})` : <Value v={null} />}</dd>
        <dt>Tags</dt>
        <dd>{contact.tags.length ? contact.tags.map((t) => <span class="badge off tag">{t.name}</span>) : <Value v={null} />}</dd>
        <dt>Subscribed</dt>
        <dd>{contact.subscribed ? "Yes" : "No"}</dd>
        <dt>SMS subscribed</dt>
        <dd>{contact.smsSubscribed ? "Yes" : "No"}</dd>
        <dt>Source</dt>
        <dd><Value v={contact.source} /></dd>
        <dt>Created</dt>
        <dd><Time at={contact.createdAt} /></dd>
        <dt>Updated</dt>
        <dd><Time at={contact.updatedAt} /></dd>
        <dt>Possible duplicates</dt>
        <dd>
          {others(dup.emailMatches, "email")}
          {dup.emailMatches > 0 && contact.email ? <> (<a href={`${contactsPath(c)}?${new URLSearchParams({ email: contact.email })}`}>show</a>)</> : null}
          ; {others(dup.phoneMatches, "phone")}
          {dup.phoneMatches > 0 && contact.phone ? <> (<a href={`${contactsPath(c)}?${new URLSearchParams({ phone: contact.phone })}`}>show</a>)</> : null}
          {duplicates.length > 0 ? (
            <div>
              <a href={comparePath(c, [contact.contactId, ...duplicates], contact.contactId)}>Compare and merge</a> with {duplicates.join(", ")}
            </div>
          ) : null}
        </dd>
      </dl>
      <h2>Custom fields</h2>
      {Object.keys(contact.customFields).length === 0 ? (
        <p class="none">None set.</p>
      ) : (
        <dl class="props card">
          {Object.entries(contact.customFields).map(([id, v]) => (
            <>
              <dt>{customTitles.get(id) ?? id}</dt>
              <dd>{shownValue(v)}</dd>
            </>
          ))}
        </dl>
      )}
      <h2>Notes</h2>
      {contact.notes ? <p class="card prewrap">{contact.notes}</p> : <p class="none">None.</p>}
      <section aria-labelledby="timeline">
        <h2 id="timeline">Timeline</h2>
        <div class="card">
          <ErrorSummary errors={errors} ids={{ note: idOf("note") }} />
          <PostForm action={`${here}/notes#timeline`} token={c.var.session.csrfToken}>
            <TextArea label="Note" name="note" id={idOf("note")} value={note} error={errors?.fields.note} rows={3} />
            <button type="submit">Add note</button>
          </PostForm>
        </div>
        <TimelineList page={timeline} here={here} customTitles={customTitles} />
      </section>
    </Layout>
  );
};

async function show(c: Context<AdminEnv>, extra: { note?: string; errors?: FormErrors; from?: TimelineQuery } = {}, status: 200 | 422 = 200) {
  const { db, cursors } = c.var.deps;
  const projectId = c.var.project.id;
  const n = requireContactNumber(c.req.param("contactId")!);
  const contact = await getContactWithSignal(db, projectId, n);
  const reference = await loadReference(db, projectId);
  const [timeline, duplicates] = await Promise.all([readTimeline(db, cursors, projectId, n, extra.from ?? {}, isoNow(c.var.deps.clock)), duplicatesOfContact(db, projectId, n)]);
  const customTitles = new Map(reference.customFields.map((f) => [f.id, f.title]));
  return c.html(<ContactPage c={c} contact={contact} customTitles={customTitles} timeline={timeline} duplicates={duplicates} note={extra.note} errors={extra.errors} />, status);
}

contactPagePages.get("/:contactId", (c) => show(c, { from: { cursor: c.req.query("cursor"), changes: c.req.query("changes") } }));

/** Adds a note to the timeline as POST /v1/contacts/{id}/interactions with `type: "note"` does (docs/api.md §12): interaction_log.created. */
contactPagePages.post("/:contactId/notes", async (c) => {
  const projectId = c.var.project.id;
  const n = requireContactNumber(c.req.param("contactId"));
  const note = field(c, "note").replace(/\r\n?/g, "\n");
  const refused = (error: unknown) => show(c, { note, errors: formErrors(error) }, 422);
  if (note.trim() === "") return refused(new ApiError("ERR_FORM_VALIDATION", "Write the note to add.", "note"));
  const body = { type: "note", note };
  const parsed = CreateInteractionBody.safeParse(body);
  if (!parsed.success) return refused(validationFailure(parsed.error, { input: body, target: "json" }));
  try {
    const now = isoNow(c.var.deps.clock);
    const { log } = await write(c, projectId, (trx) => createInteraction(trx, projectId, n, parsed.data, now));
    return c.redirect(`${contactPath(c, log.contactId)}?done=noted#timeline`, 303);
  } catch (error) {
    return refused(error);
  }
});

contactPagePages.route("/", contactErasePages);
contactPagePages.route("/", mergeUndoPages);
