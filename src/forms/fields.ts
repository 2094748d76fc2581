import type { CustomField } from "../reference/custom-fields.ts";
import { READ_ONLY_TYPES } from "../reference/custom-fields.ts";

/** How a field is rendered and how a urlencoded value is read. */
export type FieldKind = "text" | "email" | "tel" | "url" | "textarea" | "checkbox" | "number" | "date" | "select" | "radio" | "multiselect";

/** One field of a form: the submission key (= the input's name), its label and its kind. */
export interface FieldSpec {
  name: string;
  label: string;
  kind: FieldKind;
  custom: boolean;
  /** The custom field behind a custom spec, for the API's own value checks. */
  field?: CustomField;
  options?: string[];
  maxLength?: number;
  autocomplete?: string;
}

type ContactFieldSpec = Omit<FieldSpec, "name" | "custom">;

/**
 * Contact fields a form may carry (docs/api.md §15), with the API's bounds (docs/api.md §11) as
 * maxlength and the HTML autocomplete tokens that let browsers fill them.
 */
const CONTACT_FIELDS: Record<string, ContactFieldSpec> = {
  firstName: { label: "First name", kind: "text", maxLength: 255, autocomplete: "given-name" },
  lastName: { label: "Last name", kind: "text", maxLength: 255, autocomplete: "family-name" },
  email: { label: "Email", kind: "email", maxLength: 254, autocomplete: "email" },
  phone: { label: "Phone", kind: "tel", maxLength: 32, autocomplete: "tel" },
  businessName: { label: "Business name", kind: "text", maxLength: 255, autocomplete: "organization" },
  website: { label: "Website", kind: "url", maxLength: 2048, autocomplete: "url" },
  notes: { label: "Notes", kind: "textarea", maxLength: 65_535 },
  subscribed: { label: "Send me emails", kind: "checkbox" },
  smsSubscribed: { label: "Send me text messages", kind: "checkbox" },
  "address.line1": { label: "Address line 1", kind: "text", maxLength: 255, autocomplete: "address-line1" },
  "address.line2": { label: "Address line 2", kind: "text", maxLength: 255, autocomplete: "address-line2" },
  "address.city": { label: "City", kind: "text", maxLength: 255, autocomplete: "address-level2" },
  "address.state": { label: "State or region", kind: "text", maxLength: 255, autocomplete: "address-level1" },
  "address.zip": { label: "Postal code", kind: "text", maxLength: 255, autocomplete: "postal-code" },
  "address.country": { label: "Country", kind: "text", maxLength: 255, autocomplete: "country-name" },
};

export const CONTACT_FIELD_NAMES = Object.keys(CONTACT_FIELDS);

/** A contact needs one of these (docs/api.md §11), so every form carries at least one. */
export const IDENTITY_FIELDS = ["firstName", "lastName", "email", "phone", "businessName"];

/** The honeypot input (docs/api.md §3): a non-empty value marks the submission as a bot's. */
export const HONEYPOT = "_hp";

const CUSTOM_KINDS: Record<string, FieldKind> = {
  text: "text",
  textarea: "textarea",
  number: "number",
  date: "date",
  checkbox: "checkbox",
  url: "url",
  email: "email",
  phone: "tel",
  select: "select",
  radio: "radio",
  multiselect: "multiselect",
};

/**
 * A form the rules refuse (docs/api.md §15): its field list (a sentence), or (`field`) its name
 * or redirect URL (a predicate: "takes 1–255 characters"). The CLI shows it as a usage error
 * naming its option, the console at the field.
 */
export class FormFieldsError extends Error {
  constructor(
    message: string,
    readonly field: "fields" | "name" | "redirectUrl" = "fields",
  ) {
    super(message);
  }
}

/**
 * `--fields` of `crm form create` → stored field names: contact field names as they are,
 * custom fields by id or exact title → id (a contact field name wins over a title; use
 * the id then). Throws FormFieldsError for an unknown, read-only or repeated field, or a form
 * without any of the identity fields.
 */
export function resolveFieldNames(requested: string[], customFields: CustomField[]): string[] {
  const byId = new Map(customFields.map((f) => [f.id, f]));
  const byTitle = new Map(customFields.map((f) => [f.title, f]));
  const resolved: string[] = [];
  for (const name of requested) {
    const field = CONTACT_FIELDS[name] ? undefined : (byId.get(name) ?? byTitle.get(name));
    if (!CONTACT_FIELDS[name] && !field) {
      throw new FormFieldsError(`unknown field ${name}: use ${CONTACT_FIELD_NAMES.join(", ")} or a custom field's id or title`);
    }
    if (field && READ_ONLY_TYPES.includes(field.type)) throw new FormFieldsError(`custom field ${field.title} is read-only`);
    const id = field?.id ?? name;
    if (resolved.includes(id)) throw new FormFieldsError(`field ${name} is listed twice`);
    resolved.push(id);
  }
  if (!resolved.some((n) => IDENTITY_FIELDS.includes(n))) {
    throw new FormFieldsError(`a form needs at least one of ${IDENTITY_FIELDS.join(", ")}`);
  }
  return resolved;
}

/** Stored field names → what the page and the submission need; a vanished custom field is left out. */
export function fieldSpecs(names: string[], customFields: CustomField[]): FieldSpec[] {
  const byId = new Map(customFields.map((f) => [f.id, f]));
  const specs: FieldSpec[] = [];
  for (const name of names) {
    const contactField = CONTACT_FIELDS[name];
    if (contactField) {
      specs.push({ name, custom: false, ...contactField });
      continue;
    }
    const field = byId.get(name);
    const kind = field && CUSTOM_KINDS[field.type];
    if (!field || !kind) continue;
    specs.push({
      name,
      label: field.title,
      kind,
      custom: true,
      field,
      ...(field.options ? { options: field.options } : {}),
      ...(field.type === "text" ? { maxLength: 10_000 } : {}),
    });
  }
  return specs;
}
