import type { Context } from "hono";
import { ADDRESS_KEYS } from "../../contacts/schemas.ts";
import type { AdminEnv } from "../env.ts";
import { Field, Time } from "../ui.tsx";
import { contactPath, contactsPath, shownValue } from "./contact-common.ts";
import type { ShownContact } from "./contact-trash.tsx";
import { comparePath } from "./merge-choices.ts";

/**
 * The fields column of a contact's page (docs/admin.md §3): every field, tags, custom fields
 * by title, its notes, and its possible duplicates with "Compare and merge" (docs/api.md
 * §20.1); "Merge with other contacts" opens the comparison with contacts typed by id.
 */

const Value = ({ v }: { v: string | null | undefined }) => (v ? <>{v}</> : <span class="none">—</span>);
const others = (n: number, what: string) => `${n} other contact${n === 1 ? "" : "s"} with this ${what}`;

interface Props {
  c: Context<AdminEnv>;
  contact: ShownContact;
  customTitles: Map<string, string>;
  duplicates: string[];
  trashed: boolean;
}

export const ContactFields = ({ c, contact, customTitles, duplicates, trashed }: Props) => {
  const address = ADDRESS_KEYS.map((k) => contact.address[k]).filter((v): v is string => !!v);
  const dup = contact.duplicateSignal;
  return (
    <>
      <h2 class="first">Fields</h2>
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
        {trashed ? null : (
          <>
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
          </>
        )}
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
      {trashed ? null : (
        <details class="card merge-with" id="merge-with">
          <summary>Merge with other contacts</summary>
          <MergeWithForm c={c} contactId={contact.contactId} ids={duplicates.join(", ")} />
        </details>
      )}
    </>
  );
};

/**
 * "Merge with other contacts": a GET form to src/admin/pages/contact-merge-with.tsx, which
 * sends typed ids on to the comparison and asks again when none was typed. Nothing merges
 * before "Confirm merge".
 */
export const MergeWithForm = ({ c, contactId, ids, error }: { c: Context<AdminEnv>; contactId: string; ids: string; error?: string }) => (
  <form method="get" action={`${contactPath(c, contactId)}/merge-with`} aria-label="Merge with other contacts">
    <Field
      label="Contact ids"
      name="ids"
      id="f-merge-ids"
      value={ids}
      required
      error={error}
      hint="Separated by commas, such as CR-12, CR-40; this contact is kept unless you choose another."
      autocomplete="off"
    />
    <button type="submit" class="secondary">
      Compare
    </button>
  </form>
);
