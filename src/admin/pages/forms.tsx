import { Hono, type Context } from "hono";
import { CONTACT_FIELD_NAMES, FormFieldsError, IDENTITY_FIELDS } from "../../forms/fields.ts";
import { listForms } from "../../forms/repository.ts";
import { isoNow } from "../../lib/time.ts";
import { createForm, toForm, type Form } from "../../forms/service.ts";
import type { CustomField } from "../../reference/custom-fields.ts";
import { READ_ONLY_TYPES } from "../../reference/custom-fields.ts";
import { allCustomFields } from "../../reference/repository.ts";
import { write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { field, fields } from "../security.ts";
import { Checkbox, ErrorSummary, Field, Layout, noErrors, Notice, PostForm, projectPath, TableWrap, Time, type FormErrors } from "../ui.tsx";

/**
 * Web forms of a project (docs/api.md §15, docs/admin.md §3): list, create under the rules of `crm form
 * create` (src/forms/service.ts createForm), open the public page /f/{id}.
 */
export const formPages = new Hono<AdminEnv>();

interface FormValues {
  name: string;
  fields: string[];
  redirectUrl: string;
}
const blank: FormValues = { name: "", fields: [], redirectUrl: "" };
const checkboxId = (name: string) => `f-fields-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;
const ids = { name: "f-name", fields: checkboxId(CONTACT_FIELD_NAMES[0]!), redirectUrl: "f-redirectUrl" };
const LABELS = { name: "Name", redirectUrl: "Redirect URL" } as const;

/** A refusal of createForm at its field: a field-list sentence as it is, a predicate after its field's label. */
function errorsOf(error: FormFieldsError): FormErrors {
  const errors = noErrors();
  const m = error.message;
  errors.fields[error.field] = error.field === "fields" ? `${m[0]!.toUpperCase()}${m.slice(1)}.` : `${LABELS[error.field]} ${m}.`;
  return errors;
}

const FieldChoices = (p: { custom: CustomField[]; checked: string[]; error?: string }) => {
  const writable = p.custom.filter((f) => !READ_ONLY_TYPES.includes(f.type));
  return (
    <fieldset class={p.error ? "invalid" : undefined} aria-describedby={p.error ? "f-fields-hint f-fields-error" : "f-fields-hint"}>
      <legend>Fields</legend>
      <p class="hint" id="f-fields-hint">
        The page shows them in this order; at least one of {IDENTITY_FIELDS.join(", ")}.
      </p>
      {p.error ? (
        <p class="error" id="f-fields-error">
          {p.error}
        </p>
      ) : null}
      {CONTACT_FIELD_NAMES.map((name) => (
        <Checkbox label={name} name="fields" value={name} id={checkboxId(name)} checked={p.checked.includes(name)} />
      ))}
      {writable.length > 0 ? <p class="group-label">Custom fields</p> : null}
      {writable.map((f) => (
        <Checkbox label={f.title} name="fields" value={f.id} id={checkboxId(f.id)} checked={p.checked.includes(f.id)} />
      ))}
    </fieldset>
  );
};

/** A form's fields by name: contact fields as they are, custom fields by title. */
const fieldNames = (form: Form, custom: CustomField[]) => form.fields.map((n) => custom.find((f) => f.id === n)?.title ?? n).join(", ");

const FormsTable = (p: { forms: Form[]; custom: CustomField[] }) => (
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
            <td id={`form-${form.id}`}>{form.name}</td>
            <td class="mono">{form.id}</td>
            <td>{fieldNames(form, p.custom)}</td>
            <td class="mono">{form.redirectUrl ?? <span class="none">—</span>}</td>
            <td>
              <Time at={form.createdAt} />
            </td>
            <td>
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

const FormsPage = (p: { c: Context<AdminEnv>; forms: Form[]; custom: CustomField[]; values?: FormValues; errors?: FormErrors; done?: string }) => {
  const { c } = p;
  const values = p.values ?? blank;
  return (
    <Layout title="Forms" session={c.var.session} project={c.var.project} section="forms">
      <h1>Forms</h1>
      <Notice text={p.done === "created" ? "Form created." : null} />
      {p.forms.length === 0 ? <p class="none">No forms yet.</p> : <FormsTable forms={p.forms} custom={p.custom} />}
      <section class="card" aria-labelledby="new-form">
        <h2 id="new-form">New form</h2>
        <ErrorSummary errors={p.errors} ids={ids} />
        <PostForm action={projectPath(c.var.project, "forms")} token={c.var.session.csrfToken}>
          <Field label="Name" name="name" value={values.name} required error={p.errors?.fields.name} />
          <FieldChoices custom={p.custom} checked={values.fields} error={p.errors?.fields.fields} />
          <Field
            label="Redirect URL"
            name="redirectUrl"
            id="f-redirectUrl"
            type="url"
            inputmode="url"
            value={values.redirectUrl}
            hint="Optional: where the page sends the visitor after a submission."
            error={p.errors?.fields.redirectUrl}
          />
          <button type="submit">Create form</button>
        </PostForm>
      </section>
    </Layout>
  );
};

/** The project's forms, newest first, and its custom fields. */
async function load(c: Context<AdminEnv>) {
  const { db } = c.var.deps;
  const [rows, custom] = await Promise.all([listForms(db, c.var.project.id), allCustomFields(db, c.var.project.id)]);
  return { forms: rows.map(toForm).reverse(), custom: custom.sort((a, b) => a.title.localeCompare(b.title)) };
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
