import { Hono, type Context } from "hono";
import { notFound } from "../../errors.ts";
import { isoNow } from "../../lib/time.ts";
import { setCustomFieldArchived } from "../../reference/archive.ts";
import { TYPES_WITH_OPTIONS } from "../../reference/custom-fields.ts";
import { editContactType, editCustomField, editInteractionType, removeContactType, removeCustomField, removeInteractionType } from "../../reference/edit.ts";
import { CATEGORIES } from "../../reference/schemas.ts";
import { askToConfirm, confirmed } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { field } from "../security.ts";
import { Checkbox, Field, PostForm, Select, Time, type FormErrors } from "../ui.tsx";
import { attempt, listPath, RecordPage } from "./reference-record.tsx";
import { KINDS, recordPath } from "./reference-sections.tsx";

/**
 * Editing and deleting contact types, interaction types and custom fields (docs/admin.md §3)
 * under the rules of src/reference/edit.ts. Delete asks for a confirmation first; a record
 * something refers to is refused with the reason, on its page. A custom field can also be
 * archived (asks first) and restored (src/reference/archive.ts). Tags: reference-tags.tsx.
 */
export const referenceEditPages = new Hono<AdminEnv>();

const one = async <T,>(q: Promise<T | undefined>, what: string): Promise<T> => {
  const row = await q;
  if (!row) throw notFound(what);
  return row;
};

// Contact types ---------------------------------------------------------------------------

const contactType = (c: Context<AdminEnv>) =>
  one(c.var.deps.db.selectFrom("contact_types").selectAll().where("project_id", "=", c.var.project.id).where("id", "=", c.req.param("id")!).executeTakeFirst(), "Contact type");

const ContactTypePage = (p: { c: Context<AdminEnv>; row: { id: string; name: string; category: string; is_default: number }; values?: Record<string, string>; errors?: FormErrors }) => {
  const v = p.values ?? { name: p.row.name, category: p.row.category };
  const isDefault = p.row.is_default === 1;
  const edit = (
    <>
      <Field label="Name" name="name" id="edit-name" value={v.name} hint="Blank: the category's name." error={p.errors?.fields.name} />
      <Select label="Category" name="category" id="edit-category" options={CATEGORIES.map((x) => [x, x])} value={v.category} error={p.errors?.fields.category} />
      {isDefault ? <p class="hint">The default for new contacts. To change that, make another type the default.</p> : <Checkbox label="Make it the default for new contacts" name="isDefault" id="edit-isDefault" checked={v.isDefault === "on"} />}
      <button type="submit">Save contact type</button>
    </>
  );
  const remove = isDefault ? null : { says: "Only a type no contact has (the trash included) can be deleted.", button: "Delete contact type" };
  return <RecordPage c={p.c} kind="contact-type" name={p.row.name} ids={{ name: "edit-name", category: "edit-category" }} errors={p.errors} edit={edit} remove={remove} facts={<p class="mono">{p.row.id}</p>} />;
};

referenceEditPages.get("/contact-types/:id", async (c) => c.html(<ContactTypePage c={c} row={await contactType(c)} />));

referenceEditPages.post("/contact-types/:id", async (c) => {
  const row = await contactType(c);
  const values = { name: field(c, "name"), category: field(c, "category"), isDefault: field(c, "isDefault") };
  const input = { name: values.name, category: values.category, makeDefault: values.isDefault !== "" };
  const errors = await attempt(c, KINDS["contact-type"].labels, (trx) => editContactType(trx, c.var.project.id, row.id, input));
  if (errors) return c.html(<ContactTypePage c={c} row={row} values={values} errors={errors} />, 422);
  return c.redirect(listPath(c, "contact-type", "saved"), 303);
});

referenceEditPages.post("/contact-types/:id/delete", async (c) => {
  const row = await contactType(c);
  if (!confirmed(c)) {
    return askToConfirm(c, {
      title: `Delete the contact type "${row.name}"?`,
      consequence: <p>It goes for good. Contacts keep their types: a type a contact has cannot be deleted.</p>,
      button: "Delete contact type",
      back: recordPath(c, "contact-type", row.id),
      section: "reference",
    });
  }
  const errors = await attempt(c, {}, (trx) => removeContactType(trx, c.var.project.id, row.id));
  if (errors) return c.html(<ContactTypePage c={c} row={row} errors={errors} />, 409);
  return c.redirect(listPath(c, "contact-type", "deleted"), 303);
});

// Interaction types -----------------------------------------------------------------------

const interactionType = (c: Context<AdminEnv>) =>
  one(c.var.deps.db.selectFrom("interaction_types").selectAll().where("project_id", "=", c.var.project.id).where("id", "=", c.req.param("id")!).executeTakeFirst(), "Interaction type");

const InteractionTypePage = (p: { c: Context<AdminEnv>; row: { id: string; name: string }; values?: Record<string, string>; errors?: FormErrors }) => {
  const edit = (
    <>
      <Field label="Name" name="name" id="edit-name" value={p.values?.name ?? p.row.name} required error={p.errors?.fields.name} />
      <button type="submit">Save interaction type</button>
    </>
  );
  const remove = { says: "Only a type no interaction log has can be deleted.", button: "Delete interaction type" };
  return <RecordPage c={p.c} kind="interaction-type" name={p.row.name} ids={{ name: "edit-name" }} errors={p.errors} edit={edit} remove={remove} facts={<p class="mono">{p.row.id}</p>} />;
};

referenceEditPages.get("/interaction-types/:id", async (c) => c.html(<InteractionTypePage c={c} row={await interactionType(c)} />));

referenceEditPages.post("/interaction-types/:id", async (c) => {
  const row = await interactionType(c);
  const values = { name: field(c, "name") };
  const errors = await attempt(c, KINDS["interaction-type"].labels, (trx) => editInteractionType(trx, c.var.project.id, row.id, values.name));
  if (errors) return c.html(<InteractionTypePage c={c} row={row} values={values} errors={errors} />, 422);
  return c.redirect(listPath(c, "interaction-type", "saved"), 303);
});

referenceEditPages.post("/interaction-types/:id/delete", async (c) => {
  const row = await interactionType(c);
  if (!confirmed(c)) {
    return askToConfirm(c, {
      title: `Delete the interaction type "${row.name}"?`,
      consequence: <p>It goes for good. A type an interaction log has cannot be deleted.</p>,
      button: "Delete interaction type",
      back: recordPath(c, "interaction-type", row.id),
      section: "reference",
    });
  }
  const errors = await attempt(c, {}, (trx) => removeInteractionType(trx, c.var.project.id, row.id));
  if (errors) return c.html(<InteractionTypePage c={c} row={row} errors={errors} />, 409);
  return c.redirect(listPath(c, "interaction-type", "deleted"), 303);
});

// Custom fields ---------------------------------------------------------------------------

const customField = (c: Context<AdminEnv>) =>
  one(c.var.deps.db.selectFrom("custom_fields").selectAll().where("project_id", "=", c.var.project.id).where("id", "=", c.req.param("id")!).executeTakeFirst(), "Custom field");

type CustomFieldRow = Awaited<ReturnType<typeof customField>>;

const CustomFieldPage = (p: { c: Context<AdminEnv>; row: CustomFieldRow; values?: Record<string, string>; errors?: FormErrors }) => {
  const options = p.row.options ? (JSON.parse(p.row.options) as string[]).join(", ") : "";
  const withOptions = TYPES_WITH_OPTIONS.includes(p.row.type);
  const edit = (
    <>
      <Field label="Title" name="title" id="edit-title" value={p.values?.title ?? p.row.title} required hint="Unique in the project." error={p.errors?.fields.title} />
      {withOptions ? (
        <Field
          label="Options"
          name="options"
          id="edit-options"
          value={p.values?.options ?? options}
          hint="Comma-separated choices. An option a contact holds cannot be taken away."
          error={p.errors?.fields.options}
        />
      ) : null}
      <button type="submit">Save custom field</button>
    </>
  );
  const facts = (
    <dl class="props card">
      <dt>Id</dt>
      <dd class="mono">{p.row.id}</dd>
      <dt>Type</dt>
      <dd>{p.row.type} (fixed once created)</dd>
      <dt>Unique</dt>
      <dd>{p.row.is_unique === 1 ? "Unique" : "No"}</dd>
      <dt>Status</dt>
      <dd>
        {p.row.archived_at ? (
          <>
            <span class="badge off">Archived</span> since <Time at={p.row.archived_at} />
          </>
        ) : (
          "Offered in the console's forms"
        )}
      </dd>
    </dl>
  );
  const remove = { says: "Only a field no contact holds a value of (the trash included), and no form or webhook filter names, can be deleted.", button: "Delete custom field" };
  return (
    <RecordPage
      c={p.c}
      kind="custom-field"
      name={p.row.title}
      ids={{ title: "edit-title", options: "edit-options" }}
      errors={p.errors}
      edit={edit}
      more={<ArchiveSection c={p.c} row={p.row} />}
      remove={remove}
      facts={facts}
    />
  );
};

const ARCHIVE_SAYS = "It stays on contacts that have a value and in the API; the console's contact form and new web forms stop offering it.";

/** Archive (asks first) or, for an archived field, Restore (docs/admin.md §3). */
const ArchiveSection = (p: { c: Context<AdminEnv>; row: CustomFieldRow }) => {
  const path = recordPath(p.c, "custom-field", p.row.id);
  const archived = p.row.archived_at !== null;
  return (
    <section class="card" aria-labelledby="archive-record">
      <h2 id="archive-record">{archived ? "Archived" : "Archive"}</h2>
      <p class="hint">{archived ? "Restore it to offer it again in the console's contact form and for new web forms." : ARCHIVE_SAYS}</p>
      <PostForm action={`${path}/${archived ? "restore" : "archive"}`} token={p.c.var.session.csrfToken} label={archived ? "Restore custom field" : "Archive custom field"}>
        <button type="submit" class={archived ? undefined : "secondary"}>
          {archived ? "Restore field" : "Archive field"}
        </button>
      </PostForm>
    </section>
  );
};

referenceEditPages.get("/custom-fields/:id", async (c) => c.html(<CustomFieldPage c={c} row={await customField(c)} />));

referenceEditPages.post("/custom-fields/:id", async (c) => {
  const row = await customField(c);
  const values = { title: field(c, "title"), options: field(c, "options") };
  const errors = await attempt(c, KINDS["custom-field"].labels, (trx) => editCustomField(trx, c.var.project.id, row.id, values));
  if (errors) return c.html(<CustomFieldPage c={c} row={row} values={values} errors={errors} />, 422);
  return c.redirect(listPath(c, "custom-field", "saved"), 303);
});

referenceEditPages.post("/custom-fields/:id/delete", async (c) => {
  const row = await customField(c);
  if (!confirmed(c)) {
    return askToConfirm(c, {
      title: `Delete the custom field "${row.title}"?`,
      consequence: <p>It goes for good, from the API's list too. A field a contact holds a value of, or a form or a webhook filter names, cannot be deleted.</p>,
      button: "Delete custom field",
      back: recordPath(c, "custom-field", row.id),
      section: "reference",
    });
  }
  const errors = await attempt(c, {}, (trx) => removeCustomField(trx, c.var.project.id, row.id));
  if (errors) return c.html(<CustomFieldPage c={c} row={row} errors={errors} />, 409);
  return c.redirect(listPath(c, "custom-field", "deleted"), 303);
});

referenceEditPages.post("/custom-fields/:id/archive", async (c) => {
  const row = await customField(c);
  if (row.archived_at !== null) return c.redirect(recordPath(c, "custom-field", row.id), 303);
  if (!confirmed(c)) {
    return askToConfirm(c, {
      title: `Archive the custom field "${row.title}"?`,
      consequence: <p>{ARCHIVE_SAYS} A form that already asks for it keeps taking it. Restore offers it again.</p>,
      button: "Archive field",
      back: recordPath(c, "custom-field", row.id),
      section: "reference",
    });
  }
  const errors = await attempt(c, {}, (trx) => setCustomFieldArchived(trx, c.var.project.id, row.id, isoNow(c.var.deps.clock)));
  if (errors) return c.html(<CustomFieldPage c={c} row={row} errors={errors} />, 409);
  return c.redirect(listPath(c, "custom-field", "archived"), 303);
});

/** Restore needs no confirmation: it only offers the field again. */
referenceEditPages.post("/custom-fields/:id/restore", async (c) => {
  const row = await customField(c);
  const errors = await attempt(c, {}, (trx) => setCustomFieldArchived(trx, c.var.project.id, row.id, null));
  if (errors) return c.html(<CustomFieldPage c={c} row={row} errors={errors} />, 409);
  return c.redirect(listPath(c, "custom-field", "restored"), 303);
});
