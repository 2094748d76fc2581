import { Hono, type Context } from "hono";
import { notFound } from "../../errors.ts";
import { FormFieldsError } from "../../forms/fields.ts";
import { countSubmissions, findProjectForm, FormRefusedError, listSubmissions, removeForm, updateForm, type SubmissionRow } from "../../forms/edit.ts";
import type { Form } from "../../forms/service.ts";
import type { CustomField } from "../../reference/custom-fields.ts";
import { archivedFieldIds } from "../../reference/archive.ts";
import { allCustomFields } from "../../reference/repository.ts";
import { write } from "../actions.ts";
import { askToConfirm, confirmed } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { field, fields } from "../security.ts";
import { ErrorSummary, Layout, noErrors, Notice, PostForm, projectPath, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { errorsOf, FormInputs, ids, type FormValues } from "./form-fields.tsx";

/**
 * A web form's own page (docs/admin.md §3): its fields and redirect URL edited under
 * createForm's rules (src/forms/edit.ts), its submissions newest first, 50 a page, each
 * linking to its contact, and Delete for a form nobody has submitted yet (after a
 * confirmation).
 */
export const formPage = new Hono<AdminEnv>();

const PAGE = 50;

/** A page position: the last row's time and id, base64url. */
const encode = (at: string, id: string) => Buffer.from(JSON.stringify([at, id])).toString("base64url");
function decode(text: string | undefined): [string, string] | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(Buffer.from(text, "base64url").toString()) as unknown;
    return Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === "string") ? (v as [string, string]) : undefined;
  } catch {
    return undefined;
  }
}

/** A submitted value as text: custom fields by title, lists joined, booleans as yes/no. */
const valueText = (v: unknown) => (Array.isArray(v) ? v.join(", ") : typeof v === "boolean" ? (v ? "yes" : "no") : String(v ?? ""));

const Submissions = (p: { c: Context<AdminEnv>; form: Form; rows: SubmissionRow[]; total: number; custom: CustomField[]; after?: string }) => {
  const shown = p.rows.slice(0, PAGE);
  const last = shown.at(-1);
  const base = `${projectPath(p.c.var.project, "forms")}/${encodeURIComponent(p.form.id)}`;
  const contacts = projectPath(p.c.var.project, "contacts");
  const title = (key: string) => p.custom.find((f) => f.id === key)?.title ?? key;
  return (
    <section aria-labelledby="submissions">
      <h2 id="submissions">Submissions ({p.total.toLocaleString("en")})</h2>
      {shown.length === 0 ? (
        <p class="none">{p.after ? "No older submissions." : "No submissions yet."}</p>
      ) : (
        <TableWrap label="Submissions, newest first">
          <table>
            <thead>
              <tr>
                <th scope="col">Submitted</th>
                <th scope="col">Contact</th>
                <th scope="col">Values</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <tr>
                  <td data-label="Submitted">
                    <Time at={s.submittedAt} />
                  </td>
                  <td data-label="Contact">
                    <a href={`${contacts}/CR-${s.contactNumber}`}>CR-{s.contactNumber}</a>
                    {s.contactDeleted ? <span class="none"> (deleted or merged)</span> : null}
                  </td>
                  <td data-label="Values" class="prewrap">
                    {Object.entries(s.values)
                      .map(([k, v]) => `${title(k)}: ${valueText(v)}`)
                      .join("\n")}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <nav class="pager" aria-label="Submission pages">
        {p.after ? <a href={`${base}#submissions`}>Newest</a> : null}
        {p.rows.length > PAGE && last ? <a href={`${base}?after=${encode(last.submittedAt, last.id)}#submissions`}>Older</a> : null}
      </nav>
    </section>
  );
};

interface PageData {
  form: Form;
  custom: CustomField[];
  archived: Set<string>;
  rows: SubmissionRow[];
  total: number;
}

const FormPage = (p: { c: Context<AdminEnv>; data: PageData; values?: FormValues; errors?: FormErrors; done?: string; after?: string }) => {
  const { c, data } = p;
  const { form } = data;
  const values = p.values ?? { name: form.name, fields: form.fields, redirectUrl: form.redirectUrl ?? "" };
  const path = `${projectPath(c.var.project, "forms")}/${encodeURIComponent(form.id)}`;
  return (
    <Layout title={`Form ${form.name}`} session={c.var.session} project={c.var.project} section="forms">
      <p class="crumbs">
        <a href={projectPath(c.var.project, "forms")}>Forms</a> / {form.id}
      </p>
      <h1>Form {form.name}</h1>
      <Notice text={p.done === "saved" ? "Form saved." : null} />
      <ErrorSummary errors={p.errors} ids={ids} />
      <p>
        Public page: <a href={`/f/${encodeURIComponent(form.id)}`}>/f/{form.id}</a>
      </p>
      <Submissions c={c} form={form} rows={data.rows} total={data.total} custom={data.custom} after={p.after} />
      <section class="card" aria-labelledby="edit-form">
        <h2 id="edit-form">Edit</h2>
        <PostForm action={path} token={c.var.session.csrfToken} label="Edit form">
          <FormInputs
            values={values}
            custom={data.custom}
            archived={data.archived}
            errors={p.errors}
            redirectHint="Optional: where the page sends the visitor after a submission. Blank: the page thanks them itself."
          />
          <button type="submit">Save form</button>
        </PostForm>
      </section>
      <section class="card" aria-labelledby="delete-form">
        <h2 id="delete-form">Delete</h2>
        <p class="hint">Only a form without submissions can be deleted: submissions are part of their contacts' timelines.</p>
        <PostForm action={`${path}/delete`} token={c.var.session.csrfToken} label="Delete form">
          <button type="submit" class="danger">
            Delete form
          </button>
        </PostForm>
      </section>
    </Layout>
  );
};

async function load(c: Context<AdminEnv>, after?: [string, string]): Promise<PageData> {
  const { db } = c.var.deps;
  const form = await findProjectForm(db, c.var.project.id, c.req.param("formId")!);
  if (!form) throw notFound("Form");
  const [custom, archived, rows, total] = await Promise.all([
    allCustomFields(db, c.var.project.id),
    archivedFieldIds(db, c.var.project.id),
    listSubmissions(db, form.id, PAGE, after),
    countSubmissions(db, form.id),
  ]);
  // An archived field stays on a form that asks for it, and is offered to no other (docs/admin.md §3.4).
  return { form, custom: custom.sort((a, b) => a.title.localeCompare(b.title)), archived, rows, total };
}

formPage.get("/:formId", async (c) => {
  const after = c.req.query("after");
  return c.html(<FormPage c={c} data={await load(c, decode(after))} done={c.req.query("done")} after={decode(after) ? after : undefined} />);
});

formPage.post("/:formId", async (c) => {
  const data = await load(c);
  const values: FormValues = { name: field(c, "name"), fields: fields(c, "fields"), redirectUrl: field(c, "redirectUrl").trim() };
  const projectId = c.var.project.id;
  try {
    await write(c, projectId, (trx) => updateForm(trx, projectId, data.form.id, { ...values, redirectUrl: values.redirectUrl || null }));
  } catch (error) {
    if (!(error instanceof FormFieldsError)) throw error;
    return c.html(<FormPage c={c} data={data} values={values} errors={errorsOf(error)} />, 422);
  }
  return c.redirect(`${projectPath(c.var.project, "forms")}/${encodeURIComponent(data.form.id)}?done=saved`, 303);
});

formPage.post("/:formId/delete", async (c) => {
  const data = await load(c);
  const { form } = data;
  if (!confirmed(c)) {
    return askToConfirm(c, {
      title: `Delete the form "${form.name}"?`,
      consequence: <p>Its page /f/{form.id} stops answering at once, and a site that embeds it shows "not found". A form with submissions cannot be deleted.</p>,
      button: "Delete form",
      back: `${projectPath(c.var.project, "forms")}/${encodeURIComponent(form.id)}`,
      section: "forms",
    });
  }
  try {
    await write(c, c.var.project.id, (trx) => removeForm(trx, c.var.project.id, form.id));
  } catch (error) {
    if (!(error instanceof FormRefusedError)) throw error;
    const errors = noErrors();
    errors.general.push(error.message);
    return c.html(<FormPage c={c} data={data} errors={errors} />, 409);
  }
  return c.redirect(`${projectPath(c.var.project, "forms")}?done=deleted`, 303);
});
