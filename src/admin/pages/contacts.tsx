import { Hono, type Context } from "hono";
import { listContacts } from "../../contacts/list.ts";
import { ListContactsQuery, type Contact } from "../../contacts/schemas.ts";
import { validationFailure } from "../../http/validation.ts";
import { CATEGORIES } from "../../reference/schemas.ts";
import { formErrors } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Field, Layout, Notice, Select, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { erasedNotice } from "./contact-erase.tsx";
import { contactFormPages } from "./contact-form.tsx";
import { contactPagePages } from "./contact-page.tsx";
import { contactPath, contactsPath, displayName, loadReference, type Reference } from "./contact-common.ts";

/** Contacts of a project (docs/admin.md §3): the list with search, filters and pages; a contact's page; create and edit. */
export const contactPages = new Hono<AdminEnv>();

/** The query parameters of GET /v1/contacts the list takes (src/contacts/schemas.ts ListContactsQuery), all but the cursor. */
const FILTERS = ["search", "contactTypeId", "contactTypeCategory", "tag", "email", "phone", "updatedSince", "limit"] as const;
/** Filters that have no field in the search form but come in links (a duplicate's "show") and stay on every page. */
const CARRIED = ["email", "phone", "updatedSince", "limit"] as const;

type Query = Array<[string, string]>;

/** The page's filters as sent, blank ones dropped; the tag field may name several tags, comma-separated. */
function readQuery(c: Context<AdminEnv>): Query {
  const query: Query = [];
  for (const name of FILTERS) {
    for (const raw of c.req.queries(name) ?? []) {
      const values = name === "tag" ? raw.split(",") : [raw];
      for (const v of values) if (v.trim() !== "") query.push([name, v.trim()]);
    }
  }
  return query;
}

/** The query as ListContactsQuery's input: one value a string, a repeated one a list (as Hono's query validator gives it). */
function asInput(query: Query, cursor?: string) {
  const input: Record<string, string | string[]> = {};
  for (const [k, v] of query) {
    const had = input[k];
    input[k] = had === undefined ? v : [had, v].flat();
  }
  if (cursor) input.cursor = cursor;
  return input;
}

const ids = { search: "f-search", contactTypeId: "f-contactTypeId", contactTypeCategory: "f-contactTypeCategory", tag: "f-tag" };

interface ListProps {
  c: Context<AdminEnv>;
  reference: Reference;
  query: Query;
  contacts: Contact[];
  next?: string | null;
  errors?: FormErrors;
}

const ContactsPage = ({ c, reference, query, contacts, next, errors }: ListProps) => {
  const get = (name: string) => query.filter(([k]) => k === name).map(([, v]) => v);
  const base = contactsPath(c);
  const filtered = query.some(([k]) => k !== "limit");
  return (
    <Layout title="Contacts" session={c.var.session} project={c.var.project} section="contacts">
      <h1>Contacts</h1>
      <Notice text={erasedNotice(c)} />
      {/* A button, as docs/admin.md §3 names it: a GET form navigates without script. */}
      <form method="get" action={`${base}/new`} class="actions">
        <button type="submit">New contact</button>
      </form>
      <ErrorSummary errors={errors} ids={ids} />
      <form method="get" action={base} class="card" role="search" aria-label="Contact filters">
        <div class="row">
          <Field label="Search" name="search" type="search" value={get("search")[0]} hint="The start of a name, an email or a contact id." error={errors?.fields.search} />
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
        {CARRIED.flatMap((name) => get(name).map((v) => <input type="hidden" name={name} value={v} />))}
        <div class="actions">
          <button type="submit">Search</button>
          {filtered ? <a href={base}>Clear</a> : null}
        </div>
      </form>
      {errors ? null : contacts.length === 0 ? (
        <p>{filtered ? "No contacts match." : "No contacts yet."}</p>
      ) : (
        <TableWrap label="Contacts">
          <table>
            <thead>
              <tr>
                <th scope="col">Contact id</th>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Phone</th>
                <th scope="col">Type</th>
                <th scope="col">Tags</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {contacts.map((contact) => (
                <tr>
                  <td class="mono">
                    <a href={contactPath(c, contact.contactId)}>{contact.contactId}</a>
                  </td>
                  <td>{displayName(contact)}</td>
                  <td>{contact.email ?? ""}</td>
                  <td class="nowrap">{contact.phone ?? ""}</td>
                  <td>{contact.contactType?.name ?? ""}</td>
                  <td>{contact.tags.map((t) => t.name).join(", ")}</td>
                  <td>
                    <Time at={contact.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {next ? (
        <nav class="pager" aria-label="Pages">
          <a href={`${base}?${new URLSearchParams([...query, ["cursor", next]])}`}>Next page</a>
        </nav>
      ) : null}
    </Layout>
  );
};

/** The list: GET /v1/contacts's query, rules and pages (docs/api.md §11); a refused filter is shown at its field, 422. */
contactPages.get("/", async (c) => {
  const { db, cursors } = c.var.deps;
  const projectId = c.var.project.id;
  const reference = await loadReference(db, projectId);
  const query = readQuery(c);
  const refused = (error: unknown) => c.html(<ContactsPage c={c} reference={reference} query={query} contacts={[]} errors={formErrors(error)} />, 422);
  const input = asInput(query, c.req.query("cursor") || undefined);
  const parsed = ListContactsQuery.safeParse(input);
  if (!parsed.success) return refused(validationFailure(parsed.error, { input, target: "query" }));
  try {
    const page = await listContacts(db, cursors, projectId, parsed.data);
    return c.html(<ContactsPage c={c} reference={reference} query={query} contacts={page.data} next={page.pagination.nextCursor} />);
  } catch (error) {
    return refused(error);
  }
});

// "/new" before "/:contactId": the first route that matches answers.
contactPages.route("/", contactFormPages);
contactPages.route("/", contactPagePages);
