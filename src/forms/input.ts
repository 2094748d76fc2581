import { z } from "@hono/zod-openapi";
import { CreateContactBody, type ContactInput } from "../contacts/schemas.ts";
import { ApiError } from "../errors.ts";
import { validationFailure } from "../http/validation.ts";
import { checkCustomValue } from "../reference/custom-fields.ts";
import { HONEYPOT, IDENTITY_FIELDS, type FieldSpec } from "./fields.ts";

/** JSON from integrations; urlencoded from the page at /f/{formId} (docs/api.md §15). */
export type Encoding = "json" | "form";

/** A urlencoded body keeps every value of a key; a JSON body is one object. */
export type RawSubmission = Record<string, unknown>;

export interface FieldError {
  fieldName: string;
  message: string;
}

/** 422 with every field error found: the HTML page lists them all, the envelope shows the first. */
export class SubmissionInvalid extends ApiError {
  constructor(readonly errors: FieldError[]) {
    super("ERR_FORM_VALIDATION", errors[0]!.message, errors[0]!.fieldName);
  }
}

export function encodingOf(contentType: string | undefined): Encoding | null {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  if (type === "application/json") return "json";
  if (type === "application/x-www-form-urlencoded") return "form";
  return null;
}

/** A filled honeypot (docs/api.md §3): any non-blank value. */
export function honeypotFilled(raw: RawSubmission): boolean {
  const value = raw[HONEYPOT];
  const values = Array.isArray(value) ? value : [value];
  return values.some((v) => v !== undefined && v !== null && v !== false && String(v).trim() !== "");
}

/**
 * The submission → a contact body for the API's own schema and applyContactInput, and the
 * values as stored with the submission. Only the form's fields are accepted (422 naming
 * any other key). Strings are trimmed and blanks count as not sent: a form fills fields
 * in, it never clears them. Urlencoded values are read by the field's kind (checkbox →
 * boolean, number → number, multiselect → every value); JSON values are taken as typed.
 */
export function toContactInput(specs: FieldSpec[], raw: RawSubmission, encoding: Encoding) {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const errors: FieldError[] = [];
  const body: Record<string, unknown> & { address?: Record<string, unknown>; customFields?: Record<string, unknown> } = {};
  const values: Record<string, unknown> = {};
  for (const [key, rawValue] of Object.entries(raw)) {
    if (key === HONEYPOT) continue;
    const spec = byName.get(key);
    if (!spec) {
      errors.push({ fieldName: key, message: `Unknown field ${key}: this form does not take it.` });
      continue;
    }
    const value = encoding === "form" ? fromForm(spec, rawValue as string[]) : fromJson(rawValue);
    if (value === undefined) continue;
    values[key] = value;
    // Checked here too (applyContactInput checks again) so the page can list every error at once.
    const checked = spec.field ? checkCustomValue(spec.field, value) : undefined;
    if (checked && !checked.ok) errors.push({ fieldName: key, message: `${key} ${checked.reason}` });
    if (spec.custom) (body.customFields ??= {})[key] = value;
    else if (key.startsWith("address.")) (body.address ??= {})[key.slice("address.".length)] = value;
    else body[key] = value;
  }
  const parsed = CreateContactBody.safeParse(body);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const failure = validationFailure(new z.ZodError([issue]), { input: body });
      errors.push({ fieldName: formFieldName(failure.fieldName!, specs), message: failure.message });
    }
  }
  if (errors.length > 0) {
    const position = (e: FieldError) => (byName.has(e.fieldName) ? specs.indexOf(byName.get(e.fieldName)!) : specs.length);
    throw new SubmissionInvalid(errors.sort((a, b) => position(a) - position(b)));
  }
  return { input: parsed.data as ContactInput, values };
}

/** An error of applyContactInput (custom-field checks, the at-least-one rule) named by the form's field. */
export function asSubmissionError(error: unknown, specs: FieldSpec[]): unknown {
  if (!(error instanceof ApiError) || error.code !== "ERR_FORM_VALIDATION" || error instanceof SubmissionInvalid) return error;
  return new SubmissionInvalid([{ fieldName: formFieldName(error.fieldName ?? "body", specs), message: error.message }]);
}

/** API field names → the form's: `customFields.cf_…` → `cf_…`; the at-least-one rule → the form's first identity field. */
function formFieldName(apiName: string, specs: FieldSpec[]): string {
  const name = apiName.startsWith("customFields.") ? apiName.slice("customFields.".length) : apiName;
  if (specs.some((s) => s.name === name)) return name;
  if (IDENTITY_FIELDS.includes(name)) return specs.find((s) => IDENTITY_FIELDS.includes(s.name))?.name ?? name;
  return name;
}

function fromJson(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") return value.trim() === "" ? undefined : value.trim();
  if (Array.isArray(value) && value.length === 0) return undefined;
  return value;
}

const TRUE = ["true", "on", "1", "yes"];
const FALSE = ["false", "off", "0", "no"];

function fromForm(spec: FieldSpec, all: string[]): unknown {
  const strings = all.map((s) => s.trim()).filter((s) => s !== "");
  if (strings.length === 0) return undefined;
  if (spec.kind === "multiselect") return strings;
  const value = strings[strings.length - 1]!;
  if (spec.kind === "checkbox") {
    if (TRUE.includes(value.toLowerCase())) return true;
    if (FALSE.includes(value.toLowerCase())) return false;
  }
  if (spec.kind === "number" && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value)) return Number(value);
  // Anything else stays a string, and the API's rules say what is wrong with it.
  return value;
}
