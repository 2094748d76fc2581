import { isEmail, isHttpUrl } from "../lib/formats.ts";
import { toIso } from "../lib/time.ts";

/** Custom-field types of decisions §4; the last two are read-only (interface §2.1 rule 6). */
export const CUSTOM_FIELD_TYPES = [
  "text", "textarea", "number", "date", "checkbox", "url", "email", "phone",
  "select", "radio", "multiselect", "image", "offering-list",
] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

export const READ_ONLY_TYPES: readonly string[] = ["image", "offering-list"];
export const TYPES_WITH_OPTIONS: readonly string[] = ["select", "radio", "multiselect"];

export interface CustomField {
  id: string;
  title: string;
  type: string;
  options: string[] | null;
}

/**
 * Checks one written value against its field's type (decisions §5); returns the value to
 * store, or the reason it is refused.
 */
export function checkCustomValue(field: CustomField, value: unknown): { ok: true; value: unknown } | { ok: false; reason: string } {
  const fail = (reason: string) => ({ ok: false as const, reason: `${field.title}: ${reason}` });
  if (READ_ONLY_TYPES.includes(field.type)) return fail("this field is read-only.");
  switch (field.type) {
    case "text":
    case "textarea":
      if (typeof value !== "string") return fail("expected a string.");
      if (value.length > 10_000) return fail("at most 10000 characters.");
      return { ok: true, value };
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return fail("expected a number.");
      return { ok: true, value };
    case "date":
      if (typeof value !== "string" || toIso(value) === null) return fail("expected an ISO 8601 date.");
      return { ok: true, value };
    case "checkbox":
      if (typeof value !== "boolean") return fail("expected true or false.");
      return { ok: true, value };
    case "url":
      if (typeof value !== "string" || value.length > 2048 || !isHttpUrl(value)) return fail("expected an http(s) URL.");
      return { ok: true, value };
    case "email":
      if (typeof value !== "string" || !isEmail(value.trim())) return fail("expected an email address.");
      return { ok: true, value: value.trim() };
    case "phone":
      if (typeof value !== "string" || value.length > 32 || !/\d/.test(value)) return fail("expected a phone number.");
      return { ok: true, value };
    case "select":
    case "radio":
      if (typeof value !== "string" || !field.options?.includes(value)) {
        return fail(`expected one of: ${(field.options ?? []).join(", ")}.`);
      }
      return { ok: true, value };
    case "multiselect":
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || !field.options?.includes(v))) {
        return fail(`expected an array of: ${(field.options ?? []).join(", ")}.`);
      }
      return { ok: true, value: [...new Set(value)] };
    default:
      return fail("unsupported field type.");
  }
}
