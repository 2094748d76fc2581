import { Hono, type Context } from "hono";
import { FormFieldsError } from "../../forms/fields.ts";
import { listForms } from "../../forms/repository.ts";
import { isoNow } from "../../lib/time.ts";
import { createForm, toForm, type Form } from "../../forms/service.ts";
import type { CustomField } from "../../reference/custom-fields.ts";
import { archivedFieldIds } from "../../reference/archive.ts";
import { allCustomFields } from "../../reference/repository.ts";
import { write } from "../actions.ts";
import { blank, fieldNames, FormInputs, ids, errorsOf, type FormValues } from "./form-fields.tsx";
import { formPage } from "./form-page.tsx";
import type { AdminEnv } from "../env.ts";
import { field, fields } from "../security.ts";
import { ErrorSummary, Layout, Notice, PostForm, projectPath, TableWrap, Time, type FormErrors } from "../ui.tsx";

/**
 * Web forms of a project (docs/api.md §15, docs/admin.md §3): list, create under the rules of `crm form
 * create` (src/forms/service.ts createForm), open the public page /f/{id}; a form's own page
 * (form-page.tsx) edits it, lists its submissions and deletes it.
 */
export const formPages = new Hono<AdminEnv>();

const DONE: Record<string, string> = { created: "Form created.", deleted: "Form deleted." };

const FormsTable = (p: { forms: Form[]; custom: CustomField[]; base: string }) => (
  <TableWrap label="Forms of this project">
    <table>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Id</th>
          <th scope="col">Fields</th>
          <th scope="col">Redirect URL</th>
          <th scope="col">Created</th>
          <th scope="col">Page</th>
        </tr>
      </thead>
      <tbody>
        {p.forms.map((form) => (
          <tr>
            <td data-label="Name" id={`form-${form.id}`}>
              <a href={`${p.base}/${encodeURIComponent(form.id)}`}>{form.name}</a>
            </td>
            <td data-label="Id" class="mono">{form.id}</td>
            <td data-label="Fields">{fieldNames(form, p.custom)}</td>
            <td data-label="Redirect URL" class="mono">{form.redirectUrl ?? <span class="none">—</span>}</td>
            <td data-label="Created">
              <Time at={form.createdAt} />
            </td>
            <td data-label="Page">
              <a href={`/f/${encodeURIComponent(form.id)}`} aria-describedby={`form-${form.id}`}>
                Open
              </a>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </TableWrap>
);

const FormsPage = (p: { c: Context<AdminEnv>; forms: Form[]; custom: CustomField[]; archived: Set<string>; values?: FormValues; errors?: FormErrors; done?: string }) => {
  const { c } = p;
  const values = p.values ?? blank;
  return (
    <Layout title="Forms" session={c.var.session} project={c.var.project} section="forms">
      <h1>Forms</h1>
      <Notice text={p.done ? DONE[p.done] : null} />
      {p.forms.length === 0 ? <p class="none">No forms yet.</p> : <FormsTable forms={p.forms} custom={p.custom} base={projectPath(c.var.project, "forms")} />}
      <section class="card" aria-labelledby="new-form">
        <h2 id="new-form">New form</h2>
        <ErrorSummary errors={p.errors} ids={ids} />
        <PostForm action={projectPath(c.var.project, "forms")} token={c.var.session.csrfToken}>
          <FormInputs values={values} custom={p.custom} archived={p.archived} errors={p.errors} redirectHint="Optional: where the page sends the visitor after a submission." />
          <button type="submit">Create form</button>
        </PostForm>
      </section>
    </Layout>
  );
};

formPages.route("/", formPage);

/** The project's forms, newest first, and its custom fields. */
async function load(c: Context<AdminEnv>) {
  const { db } = c.var.deps;
  const [rows, custom, archived] = await Promise.all([listForms(db, c.var.project.id), allCustomFields(db, c.var.project.id), archivedFieldIds(db, c.var.project.id)]);
  // An archived field is not offered for a new form (docs/admin.md §3.4).
  return { forms: rows.map(toForm).reverse(), custom: custom.sort((a, b) => a.title.localeCompare(b.title)), archived };
}

formPages.get("/", async (c) => c.html(<FormsPage c={c} {...await load(c)} done={c.req.query("done")} />));

formPages.post("/", async (c) => {
  const values: FormValues = { name: field(c, "name"), fields: fields(c, "fields"), redirectUrl: field(c, "redirectUrl").trim() };
  const projectId = c.var.project.id;
  const input = { projectId, name: values.name, fields: values.fields, redirectUrl: values.redirectUrl || null };
  try {
    await write(c, projectId, (trx) => createForm(trx, input, isoNow(c.var.deps.clock)));
  } catch (error) {
    if (!(error instanceof FormFieldsError)) throw error;
    return c.html(<FormsPage c={c} {...await load(c)} values={values} errors={errorsOf(error)} />, 422);
  }
  return c.redirect(`${projectPath(c.var.project, "forms")}?done=created`, 303);
});
