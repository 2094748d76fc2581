import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { ReferenceInUseError } from "../../reference/edit.ts";
import { ReferenceInputError } from "../../reference/service.ts";
import { write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout, noErrors, PostForm, projectPath, type FormErrors } from "../ui.tsx";
import { KINDS, type Kind } from "./reference-sections.tsx";

/**
 * A reference record's own page (docs/admin.md §3): its edit form, and its Delete (or
 * Merge) behind a confirmation (src/admin/confirm.tsx). Routes: reference-edit.tsx,
 * reference-tags.tsx.
 */

/** After an edit or a removal, the list says what was done (`?done=`, post/redirect/get). */
export const DONE_EDITS: Record<string, string> = {
  "contact-type-saved": "Contact type saved.",
  "contact-type-deleted": "Contact type deleted.",
  "interaction-type-saved": "Interaction type saved.",
  "interaction-type-deleted": "Interaction type deleted.",
  "custom-field-saved": "Custom field saved.",
  "custom-field-deleted": "Custom field deleted.",
  "custom-field-archived": "Custom field archived: the console's contact form and new web forms no longer offer it.",
  "custom-field-restored": "Custom field restored: the console offers it again.",
  "tag-saved": "Tag renamed.",
  "tag-deleted": "Tag deleted: no contact has it any more.",
  "tag-merged": "Tags merged: their contacts have the tag merged into.",
};

export const listPath = (c: Context<AdminEnv>, kind: Kind, done?: string) =>
  `${projectPath(c.var.project, "reference")}${done ? `?done=${kind}-${done}` : ""}#${KINDS[kind].path}`;

/**
 * Runs a reference write in the write queue; a refusal comes back as the form's errors:
 * the rules' (ReferenceInputError) at its field, labelled as on the page; "in use"
 * (ReferenceInUseError) as a sentence of its own. Anything else is thrown on.
 */
export async function attempt(c: Context<AdminEnv>, labels: Record<string, string>, work: Parameters<typeof write>[2]): Promise<FormErrors | null> {
  try {
    await write(c, c.var.project.id, work);
    return null;
  } catch (error) {
    const errors = noErrors();
    if (error instanceof ReferenceInputError) errors.fields[error.field] = `${labels[error.field] ?? error.field} ${error.predicate}.`;
    else if (error instanceof ReferenceInUseError) errors.general.push(error.message);
    else throw error;
    return errors;
  }
}

interface RecordPageProps {
  c: Context<AdminEnv>;
  kind: Kind;
  /** The record's name, its page's heading. */
  name: string;
  /** Ids of the fields, for the error summary's links. */
  ids: Record<string, string>;
  errors?: FormErrors;
  /** The edit form's fields and button (posted to the record's path). */
  edit: Child;
  /** More sections between the edit form and Delete (a tag's Merge). */
  more?: Child;
  /** What Delete does, said before its button; null: it cannot be deleted here. */
  remove: { says: Child; button: string } | null;
  facts?: Child;
}

export const RecordPage = (p: RecordPageProps) => {
  const { c, kind } = p;
  const path = c.req.path.replace(/\/(delete|merge|archive|restore)$/, "");
  const what = KINDS[kind].heading.replace(/s$/, "");
  return (
    <Layout title={`${what} ${p.name}`} session={c.var.session} project={c.var.project} section="reference">
      <p class="crumbs">
        <a href={listPath(c, kind)}>Reference data</a> / {KINDS[kind].heading}
      </p>
      <h1>
        {what} {p.name}
      </h1>
      <ErrorSummary errors={p.errors} ids={p.ids} />
      {p.facts}
      <section class="card" aria-labelledby="edit-record">
        <h2 id="edit-record">Edit</h2>
        <PostForm action={path} token={c.var.session.csrfToken} label={`Edit ${what.toLowerCase()}`}>
          {p.edit}
        </PostForm>
      </section>
      {p.more}
      {p.remove ? (
        <section class="card" aria-labelledby="remove-record">
          <h2 id="remove-record">Delete</h2>
          <p class="hint">{p.remove.says}</p>
          <PostForm action={`${path}/delete`} token={c.var.session.csrfToken} label={`Delete ${what.toLowerCase()}`}>
            <button type="submit" class="danger">
              {p.remove.button}
            </button>
          </PostForm>
        </section>
      ) : null}
    </Layout>
  );
};
