import { CONTACT_FIELD_NAMES, FormFieldsError, IDENTITY_FIELDS } from "../../forms/fields.ts";
import type { Form } from "../../forms/service.ts";
import type { CustomField } from "../../reference/custom-fields.ts";
import { READ_ONLY_TYPES } from "../../reference/custom-fields.ts";
import { Checkbox, Field, noErrors, type FormErrors } from "../ui.tsx";

/** A form's fields as the create form (forms.tsx) and a form's own page (form-page.tsx) show them. */

export interface FormValues {
  name: string;
  fields: string[];
  redirectUrl: string;
}
export const blank: FormValues = { name: "", fields: [], redirectUrl: "" };
export const checkboxId = (name: string) => `f-fields-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;
export const ids = { name: "f-name", fields: checkboxId(CONTACT_FIELD_NAMES[0]!), redirectUrl: "f-redirectUrl" };
const LABELS = { name: "Name", redirectUrl: "Redirect URL" } as const;

/** A refusal of createForm at its field: a field-list sentence as it is, a predicate after its field's label. */
export function errorsOf(error: FormFieldsError): FormErrors {
  const errors = noErrors();
  const m = error.message;
  errors.fields[error.field] = error.field === "fields" ? `${m[0]!.toUpperCase()}${m.slice(1)}.` : `${LABELS[error.field]} ${m}.`;
  return errors;
}

/**
 * The fields a form can ask for. An archived custom field (`archived`, its ids; docs/admin.md
 * §3) is offered only to a form that already asks for it, marked "(archived)": that form
 * keeps it unless it is unticked, and no other form can take it on.
 */
export const FieldChoices = (p: { custom: CustomField[]; checked: string[]; error?: string; archived?: ReadonlySet<string> }) => {
  const archived = (f: CustomField) => p.archived?.has(f.id) === true;
  const writable = p.custom.filter((f) => !READ_ONLY_TYPES.includes(f.type) && (!archived(f) || p.checked.includes(f.id)));
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
        <Checkbox label={archived(f) ? `${f.title} (archived)` : f.title} name="fields" value={f.id} id={checkboxId(f.id)} checked={p.checked.includes(f.id)} />
      ))}
    </fieldset>
  );
};

/** A form's fields by name: contact fields as they are, custom fields by title. */
export const fieldNames = (form: Form, custom: CustomField[]) => form.fields.map((n) => custom.find((f) => f.id === n)?.title ?? n).join(", ");


/** A form's name, fields and redirect URL: the inputs of both "New form" and a form's "Edit" (docs/admin.md §3.4). */
export const FormInputs = (p: { values: FormValues; custom: CustomField[]; archived: ReadonlySet<string>; errors?: FormErrors; redirectHint: string }) => (
  <>
    <Field label="Name" name="name" value={p.values.name} required error={p.errors?.fields.name} />
    <FieldChoices custom={p.custom} archived={p.archived} checked={p.values.fields} error={p.errors?.fields.fields} />
    <Field
      label="Redirect URL"
      name="redirectUrl"
      id="f-redirectUrl"
      type="url"
      inputmode="url"
      value={p.values.redirectUrl}
      hint={p.redirectHint}
      error={p.errors?.fields.redirectUrl}
    />
  </>
);
