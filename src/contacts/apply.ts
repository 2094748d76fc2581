import type { Db } from "../storage/schema.ts";
import { validationError } from "../errors.ts";
import { checkCustomValue } from "../reference/custom-fields.ts";
import type { CustomField } from "../reference/custom-fields.ts";
import { allCustomFields, findContactType, resolveTags } from "../reference/repository.ts";
import type { ContactInput } from "./schemas.ts";
import type { ContactState } from "./state.ts";

/** What a contact's input is checked against: the project's contact types, tags and custom fields. */
export interface ContactReference {
  contactTypeExists(id: string): Promise<boolean>;
  /** Tags by id or name; unknown names are created (docs/api.md §11.1 rule 3). */
  tags(refs: string[]): Promise<Array<{ id: string; name: string }>>;
  customFields(): Promise<CustomField[]>;
}

/** The project's reference data as stored now; tags created at `now` in `db`'s transaction. */
export const storedReference = (db: Db, projectId: string, now: string): ContactReference => ({
  contactTypeExists: async (id) => (await findContactType(db, projectId, id)) !== undefined,
  tags: (refs) => resolveTags(db, projectId, refs, now),
  customFields: () => allCustomFields(db, projectId),
});

const PLAIN_FIELDS = ["source", "firstName", "lastName", "email", "phone", "businessName", "website", "notes"] as const;

/**
 * Applies a validated create or PATCH body to a state with JSON Merge Patch semantics
 * (docs/api.md §11): fields sent change, null clears, address and customFields merge key by
 * key, tags replace the set. Checks what needs the project's reference data and returns
 * the next state; writes nothing but the tags `reference` creates.
 */
export async function applyContactInput(reference: ContactReference, current: ContactState, input: ContactInput): Promise<ContactState> {
  const next: ContactState = { ...current, address: { ...current.address }, customFields: { ...current.customFields } };

  for (const key of PLAIN_FIELDS) {
    if (input[key] !== undefined) next[key] = key === "email" && input.email ? input.email.trim() : input[key] ?? null;
  }
  if (input.subscribed !== undefined) next.subscribed = input.subscribed ?? false;
  if (input.smsSubscribed !== undefined) next.smsSubscribed = input.smsSubscribed ?? false;

  if (input.address === null) for (const k of Object.keys(next.address)) next.address[k as keyof typeof next.address] = null;
  else if (input.address) for (const [k, v] of Object.entries(input.address)) if (v !== undefined) next.address[k as keyof typeof next.address] = v;

  if (input.contactTypeId !== undefined) {
    if (input.contactTypeId !== null && !(await reference.contactTypeExists(input.contactTypeId))) {
      throw validationError("contactTypeId", "contactTypeId is not a contact type of this project.");
    }
    next.contactTypeId = input.contactTypeId;
  }

  if (input.tags !== undefined) {
    const tags = input.tags === null ? [] : await reference.tags(input.tags);
    next.tagIds = tags.map((t) => t.id).sort();
  }

  if (input.customFields === null) next.customFields = {};
  else if (input.customFields) mergeCustomFields(await reference.customFields(), next.customFields, input.customFields);

  if (input.contactId !== undefined) next.contactNumber = Number(input.contactId.slice(3));

  // identityType: a businessName implies business (docs/api.md §11.1 rule 2).
  if (input.identityType) next.identityType = input.identityType;
  else if (input.identityType === null) next.identityType = next.businessName ? "business" : "personal";
  else if (input.businessName) next.identityType = "business";
  if (next.identityType === "personal" && next.businessName !== null) {
    throw validationError("identityType", "identityType cannot be personal for a contact with a businessName.");
  }
  const present = [next.firstName, next.lastName, next.email, next.phone, next.businessName].some((v) => v && v.trim() !== "");
  if (!present) {
    throw validationError("firstName", "At least one of firstName, lastName, email, phone or businessName is required.");
  }
  return next;
}

function mergeCustomFields(fields: CustomField[], target: Record<string, unknown>, values: Record<string, unknown>) {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const byTitle = new Map(fields.map((f) => [f.title, f]));
  for (const [key, value] of Object.entries(values)) {
    const field = byId.get(key) ?? byTitle.get(key);
    if (!field) throw validationError(`customFields.${key}`, `customFields.${key} is not a custom field of this project (by id or title).`);
    const fieldName = `customFields.${field.id}`;
    if (value === null) {
      if (field.type === "image" || field.type === "offering-list") throw validationError(fieldName, `${fieldName} (${field.title}) is read-only.`);
      delete target[field.id];
      continue;
    }
    const checked = checkCustomValue(field, value);
    if (!checked.ok) throw validationError(fieldName, `${fieldName} (${field.title}) ${checked.reason}`);
    target[field.id] = checked.value;
  }
}
