import type { Context } from "hono";
import { ADDRESS_KEYS, CreateContactBody, PatchContactBody, type Contact, type ContactInput } from "../../contacts/schemas.ts";
import type { ApiError } from "../../errors.ts";
import { validationFailure } from "../../http/validation.ts";
import type { CustomField } from "../../reference/custom-fields.ts";
import type { AdminEnv } from "../env.ts";
import { field as formField, fields as formFields } from "../security.ts";
import { writable } from "./contact-common.ts";

/**
 * The contact form ↔ the API's body (docs/admin.md §3): form fields are named as the API's
 * (firstName, address.city, customFields.<id>), so an ApiError's fieldName is the form
 * field it belongs to; the body is checked by the API's own schemas.
 */

/** The form's values as text: a field name → its value, or the values of a group of checkboxes. */
export type Values = Record<string, string | string[]>;

export const TEXT_FIELDS = ["firstName", "lastName", "email", "phone", "businessName", "website"] as const;
const FLAGS = ["subscribed", "smsSubscribed"] as const;
const ON = "on";

const cfName = (f: CustomField) => `customFields.${f.id}`;
/** A browser sends a textarea's line breaks as CRLF; stored text keeps LF. */
const lines = (s: string) => s.replace(/\r\n?/g, "\n");

/** The form's values for a contact (an edit form's starting point). */
export function valuesOf(contact: Contact, customFields: CustomField[]): Values {
  const values: Values = {};
  for (const k of TEXT_FIELDS) values[k] = contact[k] ?? "";
  values.contactTypeId = contact.contactType?.id ?? "";
  values.tags = contact.tags.map((t) => t.name).join(", ");
  values.notes = contact.notes ?? "";
  for (const k of FLAGS) values[k] = contact[k] ? ON : "";
  for (const k of ADDRESS_KEYS) values[`address.${k}`] = contact.address[k] ?? "";
  for (const f of customFields.filter(writable)) {
    const v = contact.customFields[f.id];
    if (f.type === "multiselect") values[cfName(f)] = Array.isArray(v) ? v.map(String) : [];
    else if (f.type === "checkbox") values[cfName(f)] = v === true ? ON : "";
    else values[cfName(f)] = v === undefined || v === null ? "" : String(v);
  }
  return values;
}

/** The submitted form's values. */
export function readValues(c: Context<AdminEnv>, customFields: CustomField[]): Values {
  const values: Values = {};
  for (const k of [...TEXT_FIELDS, "contactTypeId", "tags", "notes", ...FLAGS]) values[k] = formField(c, k);
  for (const k of ADDRESS_KEYS) values[`address.${k}`] = formField(c, `address.${k}`);
  for (const f of customFields.filter(writable)) values[cfName(f)] = f.type === "multiselect" ? formFields(c, cfName(f)) : formField(c, cfName(f));
  return values;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? (v[0] ?? "") : (v ?? ""));
const blankToNull = (s: string) => (s.trim() === "" ? null : s.trim());

/** A custom field's value as the API takes it; a number field's text that is no number goes as text, so the API says why. */
function customValue(f: CustomField, raw: string | string[] | undefined): unknown {
  if (f.type === "multiselect") return Array.isArray(raw) && raw.length > 0 ? raw : null;
  const s = one(raw);
  if (f.type === "checkbox") return s === ON;
  if (s.trim() === "") return null;
  if (f.type === "number") return Number.isFinite(Number(s.trim())) ? Number(s.trim()) : s;
  return f.type === "textarea" ? lines(s) : s.trim();
}

const tagsOf = (s: string) => [...new Set(s.split(",").map((t) => t.trim()).filter((t) => t !== ""))];

/** Every field of the form as the API's body: blank is null. */
function fullInput(values: Values, customFields: CustomField[]) {
  const tags = tagsOf(one(values.tags));
  return {
    ...Object.fromEntries(TEXT_FIELDS.map((k) => [k, blankToNull(one(values[k]))])),
    contactTypeId: blankToNull(one(values.contactTypeId)),
    tags: tags.length > 0 ? tags : null,
    notes: one(values.notes).trim() === "" ? null : lines(one(values.notes)),
    subscribed: one(values.subscribed) === ON,
    smsSubscribed: one(values.smsSubscribed) === ON,
    address: Object.fromEntries(ADDRESS_KEYS.map((k) => [k, blankToNull(one(values[`address.${k}`]))])),
    customFields: Object.fromEntries(customFields.filter(writable).map((f) => [f.id, customValue(f, values[cfName(f)])])),
  } as Record<string, unknown> & { address: Record<string, string | null>; customFields: Record<string, unknown> };
}

type Checked = { input: ContactInput; error?: undefined } | { input?: undefined; error: ApiError };

function check(schema: typeof CreateContactBody | typeof PatchContactBody, input: Record<string, unknown>): Checked {
  const parsed = schema.safeParse(input);
  return parsed.success ? { input: parsed.data } : { error: validationFailure(parsed.error, { input, target: "json" }) };
}

/** A create's body: what was filled in (an unticked box is left out, as a blank field). */
export function createInput(values: Values, customFields: CustomField[]): Checked {
  const full = fullInput(values, customFields);
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(full)) if (v !== null && k !== "address" && k !== "customFields") input[k] = v;
  if (one(values.contactTypeId) === "") input.contactTypeId = null;
  const address = Object.fromEntries(Object.entries(full.address).filter(([, v]) => v !== null));
  if (Object.keys(address).length > 0) input.address = address;
  const custom = Object.fromEntries(Object.entries(full.customFields).filter(([, v]) => v !== null && v !== false));
  if (Object.keys(custom).length > 0) input.customFields = custom;
  return check(CreateContactBody, input);
}

/** Values compared as a person reads them: text without surrounding blanks or CR, sets in any order, absent as null. */
function norm(v: unknown): unknown {
  if (typeof v === "string") return lines(v).trim();
  if (Array.isArray(v)) return v.map(norm).sort();
  return v ?? null;
}
const same = (a: unknown, b: unknown) => JSON.stringify(norm(a)) === JSON.stringify(norm(b));
const lower = (names: unknown) => (Array.isArray(names) ? names.map((n) => String(n).toLowerCase()) : []);

/** An edit's body: only what differs from the contact (docs/api.md §11: a PATCH sends what changes; null clears). */
export function patchInput(values: Values, contact: Contact, customFields: CustomField[]): Checked {
  const full = fullInput(values, customFields);
  const input: Record<string, unknown> = {};
  for (const k of TEXT_FIELDS) if (!same(full[k], contact[k])) input[k] = full[k];
  if (!same(full.contactTypeId, contact.contactType?.id)) input.contactTypeId = full.contactTypeId;
  if (!same(lower(full.tags), lower(contact.tags.map((t) => t.name)))) input.tags = full.tags;
  if (!same(full.notes, contact.notes)) input.notes = full.notes;
  for (const k of FLAGS) if (full[k] !== contact[k]) input[k] = full[k];
  const address = Object.fromEntries(Object.entries(full.address).filter(([k, v]) => !same(v, contact.address[k as keyof Contact["address"]])));
  if (Object.keys(address).length > 0) input.address = address;
  const custom: Record<string, unknown> = {};
  for (const f of customFields.filter(writable)) {
    const now = full.customFields[f.id];
    const before = contact.customFields[f.id];
    // An unticked box is false, whether the field was false or never set.
    const changed = f.type === "checkbox" ? now !== (before === true) : !same(now, before);
    if (changed) custom[f.id] = now;
  }
  if (Object.keys(custom).length > 0) input.customFields = custom;
  return check(PatchContactBody, input);
}
