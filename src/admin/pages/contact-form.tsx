import { Hono, type Context } from "hono";
import { ADDRESS_KEYS } from "../../contacts/schemas.ts";
import { createContact, loadContact, patchContact, requireContactNumber } from "../../contacts/service.ts";
import type { CustomField } from "../../reference/custom-fields.ts";
import { isoNow } from "../../lib/time.ts";
import { archivedFieldIds } from "../../reference/archive.ts";
import type { Db } from "../../storage/schema.ts";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { Checkbox, ErrorSummary, Field, Layout, PostForm, Select, TextArea, type FormErrors } from "../ui.tsx";
import { contactPath, contactsPath, displayName, idOf, loadReference as loadAll, writable, type Reference } from "./contact-common.ts";
import { createInput, patchInput, readValues, TEXT_FIELDS, valuesOf, type Values } from "./contact-input.ts";

/** Creating and editing a contact by hand (docs/admin.md §3): source `manual`, contact.created / contact.updated. */
export const contactFormPages = new Hono<AdminEnv>();

const ADDRESS_LABELS: Record<(typeof ADDRESS_KEYS)[number], string> = {
  line1: "Address line 1",
  line2: "Address line 2",
  city: "City",
  state: "State or region",
  zip: "Postal code",
  country: "Country",
};

/**
 * The reference data the form offers: an archived custom field is left out (docs/admin.md
 * §3), so the form neither shows it nor sends it; a contact's value of it stays as it is.
 */
async function loadReference(db: Db, projectId: string): Promise<Reference> {
  const [reference, archived] = await Promise.all([loadAll(db, projectId), archivedFieldIds(db, projectId)]);
  return { ...reference, customFields: reference.customFields.filter((f) => !archived.has(f.id)) };
}

const text = (v: Values[string] | undefined) => (Array.isArray(v) ? (v[0] ?? "") : (v ?? ""));

/** One custom field's input, by its title: a select for select/radio, checkboxes for checkbox/multiselect. */
const CustomInput = (p: { field: CustomField; values: Values; error?: string }) => {
  const { field: f } = p;
  const name = `customFields.${f.id}`;
  const value = p.values[name];
  if (f.type === "select" || f.type === "radio") {
    return <Select label={f.title} name={name} id={idOf(name)} value={text(value)} error={p.error} options={[["", "—"], ...(f.options ?? []).map((o): [string, string] => [o, o])]} />;
  }
  if (f.type === "checkbox") return <Checkbox label={f.title} name={name} id={idOf(name)} checked={text(value) === "on"} />;
  if (f.type === "multiselect") {
    const chosen = Array.isArray(value) ? value : [];
    return (
      <fieldset id={idOf(name)} class={p.error ? "invalid" : undefined}>
        <legend>{f.title}</legend>
        {p.error ? <p class="error">{p.error}</p> : null}
        {(f.options ?? []).map((o, i) => (
          <Checkbox label={o} name={name} value={o} id={`${idOf(name)}-${i}`} checked={chosen.includes(o)} />
        ))}
      </fieldset>
    );
  }
  if (f.type === "textarea") return <TextArea label={f.title} name={name} id={idOf(name)} value={text(value)} error={p.error} />;
  const date = f.type === "date" && /^(\d{4}-\d{2}-\d{2})?$/.test(text(value));
  const inputmode = f.type === "number" ? "decimal" : f.type === "email" ? "email" : f.type === "phone" ? "tel" : f.type === "url" ? "url" : undefined;
  const hint = f.type === "date" && !date ? "An ISO 8601 date, such as 2024-05-01." : undefined;
  return <Field label={f.title} name={name} id={idOf(name)} type={date ? "date" : "text"} inputmode={inputmode} value={text(value)} error={p.error} hint={hint} />;
};

interface FormPage {
  c: Context<AdminEnv>;
  reference: Reference;
  values: Values;
  errors?: FormErrors;
  /** The contact being edited; none for a new one. */
  editing?: { contactId: string; name: string };
}

const ContactFormPage = ({ c, reference, values, errors, editing }: FormPage) => {
  const title = editing ? `Edit ${editing.name}` : "New contact";
  const err = (name: string) => errors?.fields[name];
  const tf = (label: string, name: string, extra: { inputmode?: "email" | "tel" | "url"; autocomplete?: string; hint?: string } = {}) => (
    <Field label={label} name={name} id={idOf(name)} value={text(values[name])} error={err(name)} {...extra} />
  );
  const custom = reference.customFields.filter(writable);
  const names = [...TEXT_FIELDS, "contactTypeId", "tags", "notes", ...ADDRESS_KEYS.map((k) => `address.${k}`), ...custom.map((f) => `customFields.${f.id}`)];
  const ids = Object.fromEntries(names.map((n) => [n, idOf(n)]));
  const action = editing ? `${contactPath(c, editing.contactId)}/edit` : `${contactsPath(c)}/new`;
  return (
    <Layout title={title} session={c.var.session} project={c.var.project} section="contacts">
      <h1>{title}</h1>
      <ErrorSummary errors={errors} ids={ids} />
      <PostForm action={action} token={c.var.session.csrfToken} class="card" label="Contact details">
        <p class="hint">Give at least one of first name, last name, email, phone or business name.</p>
        <div class="row">
          {tf("First name", "firstName", { autocomplete: "off" })}
          {tf("Last name", "lastName", { autocomplete: "off" })}
        </div>
        <div class="row">
          {tf("Email", "email", { inputmode: "email", autocomplete: "off" })}
          {tf("Phone", "phone", { inputmode: "tel", autocomplete: "off" })}
        </div>
        <div class="row">
          {tf("Business name", "businessName", { autocomplete: "off" })}
          {tf("Website", "website", { inputmode: "url", autocomplete: "off", hint: "An http(s) address." })}
        </div>
        <div class="row">
          <Select
            label="Contact type"
            name="contactTypeId"
            id={idOf("contactTypeId")}
            value={text(values.contactTypeId)}
            error={err("contactTypeId")}
            options={[["", "None"], ...reference.types.map((t): [string, string] => [t.id, t.name.toLowerCase() === t.category.toLowerCase() ? t.name : `${t.name} (${t.category})`])]}
          />
          {tf("Tags", "tags", { hint: "Separated by commas; a new name creates the tag." })}
        </div>
        <fieldset>
          <legend>Subscriptions</legend>
          <Checkbox label="Subscribed" name="subscribed" id={idOf("subscribed")} checked={text(values.subscribed) === "on"} />
          <Checkbox label="SMS subscribed" name="smsSubscribed" id={idOf("smsSubscribed")} checked={text(values.smsSubscribed) === "on"} />
        </fieldset>
        <fieldset>
          <legend>Address</legend>
          <div class="row">{ADDRESS_KEYS.map((k) => tf(ADDRESS_LABELS[k], `address.${k}`, { autocomplete: "off" }))}</div>
        </fieldset>
        {custom.length > 0 ? (
          <fieldset>
            <legend>Custom fields</legend>
            {custom.map((f) => (
              <CustomInput field={f} values={values} error={err(`customFields.${f.id}`)} />
            ))}
          </fieldset>
        ) : null}
        <TextArea label="Notes" name="notes" id={idOf("notes")} value={text(values.notes)} error={err("notes")} rows={5} />
        <div class="actions">
          <button type="submit">Save</button>
          <a href={editing ? contactPath(c, editing.contactId) : contactsPath(c)}>Cancel</a>
        </div>
      </PostForm>
    </Layout>
  );
};

contactFormPages.get("/new", async (c) => {
  const reference = await loadReference(c.var.deps.db, c.var.project.id);
  const defaultType = reference.types.find((t) => t.is_default === 1) ?? reference.types.find((t) => t.category === "Customer");
  return c.html(<ContactFormPage c={c} reference={reference} values={{ contactTypeId: defaultType?.id ?? "" }} />);
});

contactFormPages.post("/new", async (c) => {
  const projectId = c.var.project.id;
  const reference = await loadReference(c.var.deps.db, projectId);
  const values = readValues(c, reference.customFields);
  const refused = (error: unknown) => c.html(<ContactFormPage c={c} reference={reference} values={values} errors={formErrors(error)} />, 422);
  const { input, error } = createInput(values, reference.customFields);
  if (!input) return refused(error);
  try {
    const now = isoNow(c.var.deps.clock);
    const contact = await write(c, projectId, (trx) => createContact(trx, projectId, input, { source: "manual", now }));
    return c.redirect(`${contactPath(c, contact.contactId)}?done=created`, 303);
  } catch (error) {
    return refused(error);
  }
});

contactFormPages.get("/:contactId/edit", async (c) => {
  const projectId = c.var.project.id;
  const contact = await loadContact(c.var.deps.db, projectId, requireContactNumber(c.req.param("contactId")));
  const reference = await loadReference(c.var.deps.db, projectId);
  const editing = { contactId: contact.contactId, name: displayName(contact) };
  return c.html(<ContactFormPage c={c} reference={reference} values={valuesOf(contact, reference.customFields)} editing={editing} />);
});

contactFormPages.post("/:contactId/edit", async (c) => {
  const projectId = c.var.project.id;
  const n = requireContactNumber(c.req.param("contactId"));
  const contact = await loadContact(c.var.deps.db, projectId, n);
  const reference = await loadReference(c.var.deps.db, projectId);
  const values = readValues(c, reference.customFields);
  const editing = { contactId: contact.contactId, name: displayName(contact) };
  const refused = (error: unknown) => c.html(<ContactFormPage c={c} reference={reference} values={values} errors={formErrors(error)} editing={editing} />, 422);
  const { input, error } = patchInput(values, contact, reference.customFields);
  if (!input) return refused(error);
  if (Object.keys(input).length === 0) return c.redirect(`${contactPath(c, contact.contactId)}?done=unchanged`, 303);
  try {
    const now = isoNow(c.var.deps.clock);
    const { changed } = await write(c, projectId, (trx) => patchContact(trx, projectId, n, input, now));
    return c.redirect(`${contactPath(c, contact.contactId)}?done=${changed.length > 0 ? "saved" : "unchanged"}`, 303);
  } catch (error) {
    return refused(error);
  }
});
