import { Hono, type Context } from "hono";
import { formatContactId } from "../../contacts/service.ts";
import { readDuplicates, type DuplicateGroup } from "../../duplicates/service.ts";
import type { DuplicateReason } from "../../duplicates/keys.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout, projectPath, type FormErrors } from "../ui.tsx";
import { formErrors } from "../actions.ts";
import { contactPath, displayName } from "./contact-common.ts";
import { comparePath, MAX_COMPARED } from "./merge-choices.ts";
import { mergeConfirmPages } from "./merge-confirm.tsx";

/**
 * A project's possible duplicates (docs/api.md §20.1, the console's "Duplicates page"): the
 * groups of GET /duplicates, the group written to last first, each with why its contacts
 * look alike, their names, emails and phones, and a link to compare and merge them; pages
 * of GROUPS_PAGE.
 */
export const duplicatePages = new Hono<AdminEnv>();

const GROUPS_PAGE = 20;
/** Contacts a group lists by name; the rest are counted (a group holds up to 50). */
const SHOWN_MEMBERS = 8;

const REASONS: Record<DuplicateReason, string> = { email: "same email", phone: "same phone", name: "same name and business or email domain" };

interface Member {
  contactId: string;
  name: string;
  email: string | null;
  phone: string | null;
}

interface PageProps {
  c: Context<AdminEnv>;
  groups: DuplicateGroup[];
  members: Map<string, Member>;
  next: string | null;
  errors?: FormErrors;
}

const DuplicatesPage = ({ c, groups, members, next, errors }: PageProps) => {
  const base = projectPath(c.var.project, "duplicates");
  return (
    <Layout title="Duplicates" session={c.var.session} project={c.var.project} section="duplicates">
      <h1>Duplicates</h1>
      <ErrorSummary errors={errors} />
      <p class="hint">Contacts that share an email, a phone, or a full name together with a business name or an email domain (case and accents ignored). The group changed last comes first.</p>
      {errors ? null : groups.length === 0 ? (
        <p>No possible duplicates.</p>
      ) : (
        <div>
          {groups.map((g) => {
            const shown = g.contactIds.slice(0, SHOWN_MEMBERS);
            const compared = g.contactIds.slice(0, MAX_COMPARED);
            return (
              <section class="card" aria-label={`Possible duplicates: ${g.contactIds.join(", ")}`}>
                <p class="hint">
                  {g.contactIds.length} contacts · {g.reasons.map((r) => REASONS[r]).join("; ")}
                </p>
                <ul>
                  {shown.map((id) => {
                    const m = members.get(id);
                    return (
                      <li>
                        <a href={contactPath(c, id)} class="mono">
                          {id}
                        </a>{" "}
                        {m ? (
                          <>
                            {m.name !== id ? <strong>{m.name}</strong> : null}
                            {m.email ? <span class="prewrap"> · {m.email}</span> : null}
                            {m.phone ? <span class="nowrap"> · {m.phone}</span> : null}
                          </>
                        ) : null}
                      </li>
                    );
                  })}
                </ul>
                {g.contactIds.length > shown.length ? <p class="hint">and {g.contactIds.length - shown.length} more</p> : null}
                <div>
                  <a class="button secondary" href={comparePath(c, compared)}>
                    Compare and merge
                  </a>
                  {g.contactIds.length > compared.length ? <span class="hint"> the first {MAX_COMPARED} (a merge takes at most {MAX_COMPARED})</span> : null}
                </div>
              </section>
            );
          })}
        </div>
      )}
      {next ? (
        <nav class="pager" aria-label="Pages">
          <a href={`${base}?${new URLSearchParams({ cursor: next })}`}>Next page</a>
        </nav>
      ) : null}
    </Layout>
  );
};

/** Names, emails and phones of the contacts a page lists: one query. */
async function membersOf(c: Context<AdminEnv>, ids: string[]): Promise<Map<string, Member>> {
  const numbers = ids.map((id) => Number(id.slice(3)));
  if (numbers.length === 0) return new Map();
  const rows = await c.var.deps.db
    .selectFrom("contacts")
    .select(["contact_number", "first_name", "last_name", "business_name", "email", "phone"])
    .where("project_id", "=", c.var.project.id)
    .where("contact_number", "in", numbers)
    .where("deleted_at", "is", null)
    .execute();
  return new Map(
    rows.map((r) => {
      const contactId = formatContactId(Number(r.contact_number));
      const name = displayName({ contactId, firstName: r.first_name, lastName: r.last_name, businessName: r.business_name });
      return [contactId, { contactId, name, email: r.email, phone: r.phone }];
    }),
  );
}

duplicatePages.get("/", async (c) => {
  const { db, cursors } = c.var.deps;
  try {
    const page = await readDuplicates(db, cursors, c.var.project.id, { limit: GROUPS_PAGE, cursor: c.req.query("cursor") || undefined });
    const members = await membersOf(c, page.data.flatMap((g) => g.contactIds.slice(0, SHOWN_MEMBERS)));
    return c.html(<DuplicatesPage c={c} groups={page.data} members={members} next={page.pagination.nextCursor} />);
  } catch (error) {
    // A cursor from elsewhere (or tampered with) is the API's 422, shown on the page.
    return c.html(<DuplicatesPage c={c} groups={[]} members={new Map()} next={null} errors={formErrors(error)} />, 422);
  }
});

duplicatePages.route("/", mergeConfirmPages);
