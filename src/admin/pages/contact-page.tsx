import { Hono, type Context } from "hono";
import { requireContactNumber } from "../../contacts/service.ts";
import { isoNow } from "../../lib/time.ts";
import { listNamed } from "../../reference/repository.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout, Notice, PostForm, Time, type FormErrors } from "../ui.tsx";
import { contactPath, contactsPath, displayName, loadReference } from "./contact-common.ts";
import { contactErasePages } from "./contact-erase.tsx";
import { ContactFields } from "./contact-fields.tsx";
import { AddToTimeline, interactionPages, type InteractionFormState, type InteractionType } from "./contact-interaction-form.tsx";
import { PARAMS, readTimeline, TimelineList, type TimelinePage, type TimelineQuery } from "./contact-timeline.tsx";
import { loadShownContact, purgeAt, trashPages, type Loaded } from "./contact-trash.tsx";
import { comparePath, duplicatesOfContact } from "./merge-choices.ts";
import { mergeUndoPages } from "./merge-undo.tsx";

/**
 * A contact's page (docs/admin.md §3): its fields beside its timeline on a wide
 * screen, one column on a phone. The fields: every field, tags, custom fields by title,
 * duplicateSignal with "Compare and merge" (docs/api.md §20). The timeline
 * (src/admin/pages/contact-timeline.tsx): interactions of every type, changes, form
 * submissions and merges, with "Add note" and an interaction of any type above it. Actions:
 * Edit, Delete (asks first) or, in the trash, Restore; Merge; Erase (docs/import-export.md §3).
 */
export const contactPagePages = new Hono<AdminEnv>();

/** Most interaction types the form offers; a project has a handful (docs/api.md §10.2). */
const MAX_TYPES = 200;

const DONE: Record<string, string> = {
  created: "Contact created.",
  saved: "Contact saved.",
  unchanged: "Nothing was changed, so nothing was saved.",
  noted: "Note added.",
  logged: "Interaction added.",
  trashed: "Contact moved to the trash.",
  restored: "Contact restored from the trash.",
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

interface PageProps {
  c: Context<AdminEnv>;
  loaded: Loaded;
  customTitles: Map<string, string>;
  timeline: TimelinePage;
  types: InteractionType[];
  /** Contacts sharing a duplicate key with this one (docs/api.md §20.1). */
  duplicates: string[];
  state: InteractionFormState;
  errors?: FormErrors;
}

/** The page's buttons: a live contact's Edit, Delete, Merge and Erase; a trashed one's Restore and Erase. */
const Actions = ({ c, loaded, here, duplicates }: { c: Context<AdminEnv>; loaded: Loaded; here: string; duplicates: string[] }) => {
  const token = c.var.session.csrfToken;
  const id = loaded.contact.contactId;
  if (loaded.trashedAt) {
    return (
      <div class="actions">
        <PostForm action={`${here}/restore`} token={token} class="inline" label="Restore contact">
          <button type="submit">Restore</button>
        </PostForm>
        <a class="button secondary" href={`${here}/erase`}>
          Erase
        </a>
        <a href={contactsPath(c)}>All contacts</a>
      </div>
    );
  }
  return (
    <div class="actions">
      <a class="button secondary" href={`${here}/edit`}>
        Edit
      </a>
      <a class="button secondary" href={duplicates.length ? comparePath(c, [id, ...duplicates], id) : "#merge-with"}>
        Merge
      </a>
      <PostForm action={`${here}/delete`} token={token} class="inline" label="Delete contact">
        <button type="submit" class="secondary">
          Delete
        </button>
      </PostForm>
      <a class="button secondary" href={`${here}/erase`}>
        Erase
      </a>
      <a href={contactsPath(c)}>All contacts</a>
    </div>
  );
};

const ContactPage = ({ c, loaded, customTitles, timeline, types, duplicates, state, errors }: PageProps) => {
  const { contact, trashedAt } = loaded;
  const name = displayName(contact);
  const here = contactPath(c, contact.contactId);
  return (
    <Layout title={name} session={c.var.session} project={c.var.project} section="contacts">
      <h1>
        {name}
        {trashedAt ? (
          <>
            {" "}
            <span class="badge bad">In the trash</span>
          </>
        ) : null}
      </h1>
      <Notice text={doneText(c)} />
      <ErrorSummary errors={errors} />
      {trashedAt ? (
        <p class="card trashed" role="note">
          In the trash since <Time at={trashedAt} />: the API answers 404 for it and it is in no list. Restore brings it back with its timeline
          and the tags that still exist; otherwise it is erased <Time at={purgeAt(trashedAt)} />.
        </p>
      ) : null}
      <Actions c={c} loaded={loaded} here={here} duplicates={duplicates} />
      <div class="contact-layout">
        <div class="contact-fields">
          <ContactFields c={c} contact={contact} customTitles={customTitles} duplicates={duplicates} trashed={trashedAt !== null} />
        </div>
        <section class="contact-timeline" aria-labelledby="timeline">
          <h2 id="timeline">Timeline</h2>
          {trashedAt ? null : <AddToTimeline c={c} here={here} types={types} state={state} />}
          <TimelineList page={timeline} here={here} customTitles={customTitles} />
        </section>
      </div>
    </Layout>
  );
};

async function show(c: Context<AdminEnv>, extra: { state?: InteractionFormState; errors?: FormErrors } = {}, status: 200 | 402 | 404 | 409 | 422 = 200) {
  const { db, cursors } = c.var.deps;
  const projectId = c.var.project.id;
  const n = requireContactNumber(c.req.param("contactId")!);
  const loaded = await loadShownContact(db, projectId, n);
  // A refused form shows the timeline's first page; a GET, the page its query names.
  const query: TimelineQuery = c.req.method === "GET" ? Object.fromEntries(PARAMS.map((p) => [p, c.req.query(p)])) : {};
  const [reference, types, timeline, duplicates] = await Promise.all([
    loadReference(db, projectId),
    listNamed(db, "interaction_types", projectId, MAX_TYPES),
    readTimeline(db, cursors, projectId, loaded, query, isoNow(c.var.deps.clock)),
    loaded.trashedAt ? Promise.resolve([]) : duplicatesOfContact(db, projectId, n),
  ]);
  const customTitles = new Map(reference.customFields.map((f) => [f.id, f.title]));
  const shownTypes = types.slice(0, MAX_TYPES).map((t) => ({ id: t.id, name: t.name }));
  return c.html(
    <ContactPage c={c} loaded={loaded} customTitles={customTitles} timeline={timeline} types={shownTypes} duplicates={duplicates} state={extra.state ?? {}} errors={extra.errors} />,
    status,
  );
}

contactPagePages.get("/:contactId", (c) => show(c));

contactPagePages.route("/", interactionPages((c, state, status) => show(c, { state }, status)));
contactPagePages.route("/", trashPages((c, errors, status) => show(c, { errors }, status)));
contactPagePages.route("/", contactErasePages);
contactPagePages.route("/", mergeUndoPages);
