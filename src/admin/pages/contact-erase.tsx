import { Hono, type Context } from "hono";
import { eraseContact, erasurePreview, type Erasure } from "../../contacts/erase.ts";
import { formatContactId, requireContactNumber } from "../../contacts/service.ts";
import { isoNow } from "../../lib/time.ts";
import type { AdminEnv } from "../env.ts";
import { field } from "../security.ts";
import { ErrorSummary, Field, Layout, noErrors, PostForm, type FormErrors } from "../ui.tsx";
import { contactPath, contactsPath, displayName } from "./contact-common.ts";
import { loadShownContact } from "./contact-trash.tsx";

/**
 * A contact's "Erase" action (docs/import-export.md §3): a confirmation page that says what goes, what
 * stays scrubbed and what is out of reach, and asks for the contactId to be typed; then the
 * same erase as `crm contact erase`, in the console's write queue (docs/operations.md §3.1). No event
 * fires, so the dispatcher is not woken. The list it returns to names what was removed.
 */
export const contactErasePages = new Hono<AdminEnv>();

type Preview = Awaited<ReturnType<typeof erasurePreview>>;

const CONFIRM_ID = "f-confirm";

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

interface PageProps {
  c: Context<AdminEnv>;
  name: string;
  contactId: string;
  preview: Preview;
  typed?: string;
  errors?: FormErrors;
}

const ErasePage = ({ c, name, contactId, preview, typed, errors }: PageProps) => (
  <Layout title={`Erase ${name}`} session={c.var.session} project={c.var.project} section="contacts">
    <h1>Erase {name}</h1>
    <ErrorSummary errors={errors} ids={{ confirm: CONFIRM_ID }} />
    <div class="card">
      <p>
        <strong>This cannot be undone.</strong> Erasing removes this person's data from the project, as a request to be forgotten asks.
      </p>
      <h2>Deleted</h2>
      <ul>
        <li>the contact {contactId}: its fields, custom fields and notes</li>
        <li>{count(preview.interactionLogs, "interaction log")} on its timeline</li>
        <li>{count(preview.formSubmissions, "form submission")}</li>
        <li>{count(preview.tagLinks, "tag link")} (the tags themselves stay, as the project's vocabulary)</li>
        <li>its search terms</li>
      </ul>
      <h2>Emptied</h2>
      <p>
        {count(preview.events, "stored event")} about it stay in the event log with every contact field empty (null) but its contact id.
        Webhook deliveries not sent yet send them emptied; stored answers to repeated requests (Idempotency-Key) are emptied too.
      </p>
      <h2>Not reached</h2>
      <p>Webhook receivers that already got its data, and backups or replicas of the database until they are replaced (docs/import-export.md).</p>
      <p>
        {contactId} is never given to another contact. No webhook event is sent.
      </p>
    </div>
    <PostForm action={`${contactPath(c, contactId)}/erase`} token={c.var.session.csrfToken} class="card" label="Erase contact">
      <Field label={`Type ${contactId} to confirm`} name="confirm" id={CONFIRM_ID} value={typed} error={errors?.fields.confirm} autocomplete="off" />
      <div class="actions">
        <button type="submit" class="danger">
          Erase
        </button>
        <a href={contactPath(c, contactId)}>Cancel</a>
      </div>
    </PostForm>
  </Layout>
);

/** The confirmation page, for a live contact or one in the trash (docs/api.md §19.3); an unknown contact is the console's 404 page. */
async function confirmation(c: Context<AdminEnv>, extra: { typed?: string; errors?: FormErrors } = {}, status: 200 | 422 = 200) {
  const { db } = c.var.deps;
  const projectId = c.var.project.id;
  const n = requireContactNumber(c.req.param("contactId")!);
  const { contact } = await loadShownContact(db, projectId, n);
  const preview = await erasurePreview(db, projectId, n);
  return c.html(<ErasePage c={c} name={displayName(contact)} contactId={contact.contactId} preview={preview} {...extra} />, status);
}

contactErasePages.get("/:contactId/erase", (c) => confirmation(c));

contactErasePages.post("/:contactId/erase", async (c) => {
  const n = requireContactNumber(c.req.param("contactId"));
  const contactId = formatContactId(n);
  const typed = field(c, "confirm").trim();
  if (typed !== contactId) {
    const errors = noErrors();
    errors.fields.confirm = typed === "" ? `Type ${contactId} to confirm. Nothing was erased.` : `${typed} is not ${contactId}. Nothing was erased.`;
    return confirmation(c, { typed, errors }, 422);
  }
  const { deps, project } = c.var;
  const erasure = await eraseContact(deps.db, project.id, n, {
    writes: deps.writes,
    now: isoNow(deps.clock),
    secrets: deps.secrets,
    // The erase is done; the operator learns that its freed pages wait for a later checkpoint (docs/security.md §7).
    warn: (message) => deps.log.warn("erase: freed space not reclaimed yet", { requestId: c.var.requestId, projectId: project.id, message }),
  });
  return c.redirect(`${contactsPath(c)}?${noticeQuery(erasure)}`, 303);
});

/** What the list's notice says, carried in its URL (post/redirect/get): ids and counts only, never the person's data. */
function noticeQuery(e: Erasure): string {
  return new URLSearchParams({
    done: "erased",
    contactId: e.contactId,
    logs: String(e.removed.interactionLogs),
    tagLinks: String(e.removed.tagLinks),
    submissions: String(e.removed.formSubmissions),
    events: String(e.scrubbed.events),
    pending: String(e.scrubbed.pendingDeliveries),
  }).toString();
}

/** The contact list's notice after an erase (src/admin/pages/contacts.tsx); null unless the URL is one noticeQuery made. */
export function erasedNotice(c: Context<AdminEnv>): string | null {
  if (c.req.query("done") !== "erased") return null;
  const contactId = c.req.query("contactId") ?? "";
  const numbers = ["logs", "tagLinks", "submissions", "events", "pending"].map((k) => c.req.query(k) ?? "");
  if (!/^CR-\d{1,15}$/.test(contactId) || !numbers.every((v) => /^\d{1,9}$/.test(v))) return null;
  const [logs, tagLinks, submissions, events, pending] = numbers.map(Number) as [number, number, number, number, number];
  return (
    `${contactId} was erased. Deleted: the contact, ${count(logs, "interaction log")}, ${count(tagLinks, "tag link")}, ` +
    `${count(submissions, "form submission")} and its search terms. Its data was emptied in ${count(events, "stored event")} ` +
    `(${count(pending, "pending delivery", "pending deliveries")} will send them emptied). Its contact id is never given again.`
  );
}
