import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { CONSOLE_SORTS, type ConsoleListPage, type ConsoleSort } from "../../contacts/console-list.ts";
import { CATEGORIES } from "../../reference/schemas.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Field, Layout, Notice, PostForm, Select, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { erasedNotice } from "./contact-erase.tsx";
import { contactPath, contactsPath, displayName, type Reference } from "./contact-common.ts";
import { CARRIED, listHref, SORT_LABELS, totalText, type Query } from "./contacts-list-query.ts";

/** The contacts list page (docs/admin.md §3): filters and sort, the total, the table with its bulk actions, Previous and Next. */

export const FIELD_IDS = {
  search: "f-search",
  contactTypeId: "f-contactTypeId",
  contactTypeCategory: "f-contactTypeCategory",
  tag: "f-tag",
  sort: "f-sort",
  bulkTag: "f-bulkTag",
  contactIds: "bulk-actions",
};

/** The filters folded under "More filters" (Search and Sort by stay in view). */
const MORE_FILTERS = ["contactTypeId", "contactTypeCategory", "tag"];

/** The name of the per-row boxes; the "select all" box ticks every box of this name in its form. */
export const SELECTED = "contactIds";

export interface ListProps {
  c: Context<AdminEnv>;
  reference: Reference;
  /** The project's tag names, offered to the bulk tag field. */
  tagNames: string[];
  query: Query;
  cursor?: string;
  /** Absent when the filters were refused. */
  page?: ConsoleListPage;
  errors?: FormErrors;
  /** Boxes ticked when the page is shown again after a refused bulk action, and the tag typed. */
  selected?: string[];
  bulkTag?: string;
}

/** What the last bulk action did (post/redirect/get carries it as `?done=&n=`). */
function bulkNotice(c: Context<AdminEnv>): string | null {
  const [n, u] = ["n", "u"].map((k) => c.req.query(k) ?? "0");
  if (!/^\d{1,4}$/.test(n!) || !/^\d{1,4}$/.test(u!)) return null;
  const count = (k: string) => `${Number(k).toLocaleString("en-US")} ${k === "1" ? "contact" : "contacts"}`;
  const rest = (what: string) => (u === "0" ? "" : ` ${count(u!)} ${what}.`);
  switch (c.req.query("done")) {
    case "tagged":
      return `Tag added to ${count(n!)}.${rest("already had it")}`;
    case "untagged":
      return `Tag removed from ${count(n!)}.${rest("did not have it")}`;
    case "deleted":
      return `Moved ${count(n!)} to the trash. Each can be restored within 30 days.`;
    default:
      return null;
  }
}

export const ContactsPage: FC<ListProps> = ({ c, reference, tagNames, query, cursor, page, errors, selected, bulkTag }) => {
  const get = (name: string) => query.filter(([k]) => k === name).map(([, v]) => v);
  const base = contactsPath(c);
  const filtered = query.some(([k]) => k !== "limit" && k !== "sort");
  const sort = (get("sort")[0] ?? "updated") as ConsoleSort;
  const ticked = new Set(selected ?? []);
  return (
    <Layout title="Contacts" session={c.var.session} project={c.var.project} section="contacts">
      <h1>Contacts</h1>
      <Notice text={erasedNotice(c) ?? bulkNotice(c)} />
      {/* A button, as docs/admin.md §3 names it: a GET form navigates without script. */}
      <form method="get" action={`${base}/new`} class="actions">
        <button type="submit">New contact</button>
      </form>
      <ErrorSummary errors={errors} ids={FIELD_IDS} />
      <form method="get" action={base} class="card" role="search" aria-label="Contact filters">
        <div class="row">
          <Field label="Search" name="search" type="search" value={get("search")[0]} hint="Names, an email or its domain, phone digits in any format, a contact id; accents and one typo do not matter." error={errors?.fields.search} />
          <Select label="Sort by" name="sort" value={sort} error={errors?.fields.sort} options={CONSOLE_SORTS.map((s): [string, string] => [s, SORT_LABELS[s]])} />
        </div>
        {/* Folded so a phone's first screen shows the contacts; open while one of them is set or refused. */}
        <details class="more-filters" open={MORE_FILTERS.some((k) => get(k).some((v) => v !== "") || !!errors?.fields[k])}>
          <summary>More filters</summary>
          <div class="row">
            <Select
              label="Contact type"
              name="contactTypeId"
              value={get("contactTypeId")[0]}
              error={errors?.fields.contactTypeId}
              options={[["", "Any"], ...reference.types.map((t): [string, string] => [t.id, t.name])]}
            />
            <Select
              label="Category"
              name="contactTypeCategory"
              value={get("contactTypeCategory")[0]}
              error={errors?.fields.contactTypeCategory}
              options={[["", "Any"], ...CATEGORIES.map((k): [string, string] => [k, k])]}
            />
            <Field label="Tag" name="tag" value={get("tag").join(", ")} hint="Separated by commas; every tag must match." error={errors?.fields.tag} />
          </div>
        </details>
        {CARRIED.flatMap((name) => get(name).map((v) => <input type="hidden" name={name} value={v} />))}
        <div class="actions">
          <button type="submit">Search</button>
          {filtered ? <a href={base}>Clear</a> : null}
        </div>
      </form>
      {!page ? null : page.contacts.length === 0 ? (
        <p>{filtered ? "No contacts match." : cursor ? "No more contacts." : "No contacts yet."}</p>
      ) : (
        <>
          <p class="total" id="contacts-total">
            {totalText(page.total, filtered)}
          </p>
          <PostForm action={`${base}/bulk`} token={c.var.session.csrfToken} label="Selected contacts" class="bulk">
            <input type="hidden" name="back" value={listHref("", query, cursor)} />
            <BulkActions tagNames={tagNames} error={errors?.fields.bulkTag} value={bulkTag} />
            <ContactsTable c={c} page={page} sort={sort} ticked={ticked} />
          </PostForm>
        </>
      )}
      {page && (page.previous !== null || page.next) ? (
        <nav class="pager" aria-label="Pages">
          {page.previous !== null ? <a href={listHref(base, query, page.previous)}>Previous page</a> : null}
          {page.next ? <a href={listHref(base, query, page.next)}>Next page</a> : null}
        </nav>
      ) : null}
    </Layout>
  );
};

/** Add or remove a tag, or delete, for the ticked contacts; "Add tag" first, so Enter in the tag field adds. */
const BulkActions: FC<{ tagNames: string[]; error?: string; value?: string }> = ({ tagNames, error, value }) => (
  <fieldset class="bulk-actions" id={FIELD_IDS.contactIds}>
    <legend>Selected contacts</legend>
    <div class="check select-all" hidden>
      <input type="checkbox" id="select-all" data-select-all={SELECTED} />
      <label for="select-all">Select all on this page</label>
    </div>
    <div class={error ? "field invalid" : "field"}>
      <label for={FIELD_IDS.bulkTag}>Tag to add or remove</label>
      {error ? (
        <p class="error" id={`${FIELD_IDS.bulkTag}-error`}>
          {error}
        </p>
      ) : null}
      <input
        id={FIELD_IDS.bulkTag}
        name="bulkTag"
        type="text"
        list="bulk-tag-names"
        value={value}
        autocomplete="off"
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${FIELD_IDS.bulkTag}-error` : undefined}
      />
      <datalist id="bulk-tag-names">
        {tagNames.map((name) => (
          <option value={name} />
        ))}
      </datalist>
    </div>
    <div class="actions">
      <button type="submit" name="action" value="add-tag">
        Add tag
      </button>
      <button type="submit" name="action" value="remove-tag" class="secondary">
        Remove tag
      </button>
      <button type="submit" name="action" value="delete" class="danger">
        Delete selected
      </button>
    </div>
  </fieldset>
);

const ContactsTable: FC<{ c: Context<AdminEnv>; page: ConsoleListPage; sort: ConsoleSort; ticked: Set<string> }> = ({ c, page, sort, ticked }) => {
  const byCreation = sort === "created";
  return (
    <TableWrap label="Contacts">
      <table>
        <thead>
          <tr>
            <th scope="col">Select</th>
            <th scope="col">Name</th>
            <th scope="col">Contact id</th>
            <th scope="col">Email</th>
            <th scope="col">Phone</th>
            <th scope="col">Type</th>
            <th scope="col">Tags</th>
            <th scope="col">{byCreation ? "Created" : "Updated"}</th>
          </tr>
        </thead>
        <tbody>
          {page.contacts.map((contact) => {
            const name = displayName(contact);
            return (
              <tr>
                <td data-label="Select" class="select">
                  <input type="checkbox" name={SELECTED} value={contact.contactId} checked={ticked.has(contact.contactId)} aria-label={`Select ${name}`} />
                </td>
                <td data-label="Name" class="name">
                  <a href={contactPath(c, contact.contactId)}>{name}</a>
                </td>
                <td data-label="Contact id" class="mono nowrap">
                  {contact.contactId}
                </td>
                <td data-label="Email" class="email">
                  {contact.email ? <BreakableEmail email={contact.email} /> : <None />}
                </td>
                <td data-label="Phone" class="nowrap">
                  {contact.phone ?? <None />}
                </td>
                <td data-label="Type">{contact.contactType?.name ?? <None />}</td>
                <td data-label="Tags" class="wrap">
                  {contact.tags.length ? contact.tags.map((t) => t.name).join(", ") : <None />}
                </td>
                <td data-label={byCreation ? "Created" : "Updated"}>
                  <Time at={byCreation ? contact.createdAt : contact.updatedAt} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
};

/** An empty cell, so a phone's card never shows a bare label. */
const None = () => <span class="none">—</span>;

/** An email that wraps only after its "@" and dots, never mid-word where the row has room (docs/admin.md §3.2). */
const BreakableEmail = ({ email }: { email: string }) => (
  <>
    {email.split(/(?<=[@.])/).map((part, i) => (
      <>
        {i > 0 ? <wbr /> : null}
        {part}
      </>
    ))}
  </>
);
