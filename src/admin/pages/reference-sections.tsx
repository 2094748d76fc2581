import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { Db } from "../../storage/schema.ts";
import { CUSTOM_FIELD_TYPES, READ_ONLY_TYPES } from "../../reference/custom-fields.ts";
import { listCustomFields, listNamed } from "../../reference/repository.ts";
import { CATEGORIES } from "../../reference/schemas.ts";
import type { AdminEnv } from "../env.ts";
import { Checkbox, ErrorSummary, Field, PostForm, projectPath, Select, TableWrap, type FormErrors } from "../ui.tsx";

/** The reference page's four lists and their create forms (docs/api.md §10, docs/admin.md §3); the routes are in reference.tsx. */

/** Most rows a list shows; reference data is small, tags may not be. */
export const SHOWN = 1000;

export async function loadReference(db: Db, projectId: string) {
  const [contactTypes, interactionTypes, customFields, tags] = await Promise.all([
    listNamed(db, "contact_types", projectId, SHOWN),
    listNamed(db, "interaction_types", projectId, SHOWN),
    listCustomFields(db, projectId, SHOWN),
    listNamed(db, "tags", projectId, SHOWN),
  ]);
  return {
    contactTypes: contactTypes as Array<{ id: string; name: string; category: string; is_default: number }>,
    interactionTypes: interactionTypes as Array<{ id: string; name: string }>,
    customFields,
    tags: tags as Array<{ id: string; name: string }>,
  };
}
export type ReferenceData = Awaited<ReturnType<typeof loadReference>>;

/** The four kinds: their form's path, the id of their section, their fields' labels. */
export const KINDS = {
  "contact-type": { path: "contact-types", heading: "Contact types", labels: { name: "Name", category: "Category" } },
  "interaction-type": { path: "interaction-types", heading: "Interaction types", labels: { name: "Name" } },
  "custom-field": { path: "custom-fields", heading: "Custom fields", labels: { title: "Title", type: "Type", options: "Options", unique: "Unique" } },
  tag: { path: "tags", heading: "Tags", labels: { name: "Name" } },
} as const;
export type Kind = keyof typeof KINDS;

/** A form sent back with its values and errors. */
export interface Failed {
  kind: Kind;
  values: Record<string, string>;
  errors: FormErrors;
}

/** One section: heading, table (or a line saying there is none), and its create form. */
const Section = (p: { c: Context<AdminEnv>; kind: Kind; count: number; table: Child; form: Child; failed?: Failed }) => {
  const { path, heading } = KINDS[p.kind];
  const ids = Object.fromEntries(Object.keys(KINDS[p.kind].labels).map((name) => [name, `${path}-${name}`]));
  return (
    <section aria-labelledby={path}>
      <h2 id={path}>{heading}</h2>
      {p.count === 0 ? <p class="none">None yet.</p> : <TableWrap label={heading}>{p.table}</TableWrap>}
      {p.count > SHOWN ? <p class="hint">The first {SHOWN.toLocaleString("en")} are shown.</p> : null}
      <div class="card">
        <h3>New {heading.toLowerCase().replace(/s$/, "")}</h3>
        <ErrorSummary errors={p.failed?.kind === p.kind ? p.failed.errors : undefined} ids={ids} />
        <PostForm action={`${projectPath(p.c.var.project, "reference")}/${path}#${path}`} token={p.c.var.session.csrfToken} label={`New ${heading.toLowerCase().replace(/s$/, "")}`}>
          {p.form}
        </PostForm>
      </div>
    </section>
  );
};

/** What a form shows: its values and errors when it was the one sent back. */
const formState = (kind: Kind, failed?: Failed) => (failed?.kind === kind ? failed : { values: {} as Record<string, string>, errors: undefined });

export const ContactTypes = (p: { c: Context<AdminEnv>; rows: ReferenceData["contactTypes"]; failed?: Failed }) => {
  const { values, errors } = formState("contact-type", p.failed);
  const table = (
    <table>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Category</th>
          <th scope="col">Default</th>
          <th scope="col">Id</th>
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {p.rows.slice(0, SHOWN).map((r) => (
          <tr>
            <td data-label="Name">{r.name}</td>
            <td data-label="Category">{r.category}</td>
            <td data-label="Default">{r.is_default === 1 ? "Default" : <span class="none">—</span>}</td>
            <td data-label="Id" class="mono">{r.id}</td>
            <EditCell c={p.c} kind="contact-type" id={r.id} name={r.name} />
          </tr>
        ))}
      </tbody>
    </table>
  );
  const form = (
    <>
      <Field label="Name" name="name" id="contact-types-name" value={values.name} hint="Blank: the category's name." error={errors?.fields.name} />
      <Select label="Category" name="category" id="contact-types-category" options={CATEGORIES.map((c) => [c, c])} value={values.category} error={errors?.fields.category} />
      <Checkbox label="Default for new contacts" name="isDefault" id="contact-types-isDefault" checked={values.isDefault === "on"} />
      <button type="submit">Create contact type</button>
    </>
  );
  return <Section c={p.c} kind="contact-type" count={p.rows.length} table={table} form={form} failed={p.failed} />;
};

export const InteractionTypes = (p: { c: Context<AdminEnv>; rows: ReferenceData["interactionTypes"]; failed?: Failed }) => {
  const { values, errors } = formState("interaction-type", p.failed);
  const table = <NameTable c={p.c} kind="interaction-type" rows={p.rows} />;
  const form = (
    <>
      <Field label="Name" name="name" id="interaction-types-name" value={values.name} required error={errors?.fields.name} />
      <button type="submit">Create interaction type</button>
    </>
  );
  return <Section c={p.c} kind="interaction-type" count={p.rows.length} table={table} form={form} failed={p.failed} />;
};

export const CustomFields = (p: { c: Context<AdminEnv>; rows: ReferenceData["customFields"]; failed?: Failed }) => {
  const { values, errors } = formState("custom-field", p.failed);
  const table = (
    <table>
      <thead>
        <tr>
          <th scope="col">Title</th>
          <th scope="col">Type</th>
          <th scope="col">Options</th>
          <th scope="col">Writable</th>
          <th scope="col">Unique</th>
          <th scope="col">Id</th>
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {p.rows.slice(0, SHOWN).map((r) => (
          <tr>
            <td data-label="Title">
              {r.title}
              {r.archived_at ? (
                <>
                  {" "}
                  <span class="badge off" title="Not offered by the console's contact form or for new web forms; the API still has it">
                    Archived
                  </span>
                </>
              ) : null}
            </td>
            <td data-label="Type">{r.type}</td>
            <td data-label="Options">{r.options ? (JSON.parse(r.options) as string[]).join(", ") : <span class="none">—</span>}</td>
            <td data-label="Writable">{READ_ONLY_TYPES.includes(r.type) ? "No (read-only)" : "Yes"}</td>
            <td data-label="Unique">{r.is_unique === 1 ? "Unique" : <span class="none">—</span>}</td>
            <td data-label="Id" class="mono">{r.id}</td>
            <EditCell c={p.c} kind="custom-field" id={r.id} name={r.title} />
          </tr>
        ))}
      </tbody>
    </table>
  );
  const form = (
    <>
      <Field label="Title" name="title" id="custom-fields-title" value={values.title} required hint="Unique in the project." error={errors?.fields.title} />
      <Select label="Type" name="type" id="custom-fields-type" options={CUSTOM_FIELD_TYPES.map((t) => [t, t])} value={values.type} error={errors?.fields.type} />
      <Field
        label="Options"
        name="options"
        id="custom-fields-options"
        value={values.options}
        hint="Comma-separated choices, such as gold, silver; required for select, radio and multiselect."
        error={errors?.fields.options}
      />
      {errors?.fields.unique ? (
        <p class="error" id="custom-fields-unique-error">
          {errors.fields.unique}
        </p>
      ) : null}
      <Checkbox label="Unique (no two contacts share a value; can be an upsert match key)" name="unique" id="custom-fields-unique" checked={values.unique === "on"} />
      <p class="hint">For text fields only; fixed once the field is created.</p>
      <button type="submit">Create custom field</button>
    </>
  );
  return <Section c={p.c} kind="custom-field" count={p.rows.length} table={table} form={form} failed={p.failed} />;
};

export const Tags = (p: { c: Context<AdminEnv>; rows: ReferenceData["tags"]; failed?: Failed }) => {
  const { values, errors } = formState("tag", p.failed);
  const form = (
    <>
      <Field label="Name" name="name" id="tags-name" value={values.name} required hint="1–64 characters." error={errors?.fields.name} />
      <button type="submit">Create tag</button>
    </>
  );
  return <Section c={p.c} kind="tag" count={p.rows.length} table={<NameTable c={p.c} kind="tag" rows={p.rows} />} form={form} failed={p.failed} />;
};

const NameTable = (p: { c: Context<AdminEnv>; kind: Kind; rows: Array<{ id: string; name: string }> }) => (
  <table>
    <thead>
      <tr>
        <th scope="col">Name</th>
        <th scope="col">Id</th>
        <th scope="col">Change</th>
      </tr>
    </thead>
    <tbody>
      {p.rows.slice(0, SHOWN).map((r) => (
        <tr>
          <td data-label="Name">{r.name}</td>
          <td data-label="Id" class="mono">{r.id}</td>
          <EditCell c={p.c} kind={p.kind} id={r.id} name={r.name} />
        </tr>
      ))}
    </tbody>
  </table>
);

/** A record's own page: edit, and remove where nothing refers to it (reference-edit.tsx, reference-tags.tsx). */
export const recordPath = (c: Context<AdminEnv>, kind: Kind, id: string) => `${projectPath(c.var.project, "reference")}/${KINDS[kind].path}/${encodeURIComponent(id)}`;

const EditCell = (p: { c: Context<AdminEnv>; kind: Kind; id: string; name: string }) => (
  <td data-label="Change">
    <a href={recordPath(p.c, p.kind, p.id)} aria-label={`Edit ${p.name}`}>
      Edit
    </a>
  </td>
);
