import { isEmail, isHttpUrl } from "../lib/formats.ts";
import { toIso } from "../lib/time.ts";

/** Custom-field types of docs/api.md §10; the last two are read-only (docs/api.md §11.1 rule 6). */
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
 * Checks one written value against its field's type (docs/api.md §11); returns the value to
 * store, or the reason it is refused: a predicate the caller puts the field's name in front
 * of ("must be a number.", src/http/validation.ts).
 */
export function checkCustomValue(field: CustomField, value: unknown): { ok: true; value: unknown } | { ok: false; reason: string } {
  const fail = (reason: string) => ({ ok: false as const, reason });
  if (READ_ONLY_TYPES.includes(field.type)) return fail("is read-only.");
  switch (field.type) {
    case "text":
    case "textarea":
      if (typeof value !== "string") return fail("must be a string.");
      if (value.length > 10_000) return fail("must be at most 10000 characters.");
      return { ok: true, value };
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return fail("must be a number.");
      return { ok: true, value };
    case "date":
      if (typeof value !== "string" || toIso(value) === null) return fail("must be an ISO 8601 date, such as 2024-05-01.");
      return { ok: true, value };
    case "checkbox":
      if (typeof value !== "boolean") return fail("must be true or false.");
      return { ok: true, value };
    case "url":
      if (typeof value !== "string" || value.length > 2048 || !isHttpUrl(value)) return fail("must be an http(s) URL of at most 2048 characters.");
      return { ok: true, value };
    case "email":
      if (typeof value !== "string" || !isEmail(value.trim())) return fail("must be a valid email address.");
      return { ok: true, value: value.trim() };
    case "phone":
      if (typeof value !== "string" || value.length > 32 || !/\d/.test(value)) return fail("must be a phone number of at most 32 characters.");
      return { ok: true, value };
    case "select":
    case "radio":
      if (typeof value !== "string" || !field.options?.includes(value)) {
        return fail(`must be one of ${(field.options ?? []).join(", ")}.`);
      }
      return { ok: true, value };
    case "multiselect":
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || !field.options?.includes(v))) {
        return fail(`must be an array of values, each one of ${(field.options ?? []).join(", ")}.`);
      }
      return { ok: true, value: [...new Set(value)] };
    default:
      return fail("has a type that cannot be written.");
  }
}
