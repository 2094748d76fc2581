import type { Context } from "hono";
import type { Contact } from "../../contacts/schemas.ts";
import type { Db } from "../../storage/schema.ts";
import { READ_ONLY_TYPES, type CustomField } from "../../reference/custom-fields.ts";
import { allCustomFields, listNamed } from "../../reference/repository.ts";
import type { AdminEnv } from "../env.ts";
import { projectPath } from "../ui.tsx";

/** What the contact pages share: their paths, a contact's name, the project's reference data. */

export const contactsPath = (c: Context<AdminEnv>) => projectPath(c.var.project, "contacts");
export const contactPath = (c: Context<AdminEnv>, contactId: string) => `${contactsPath(c)}/${encodeURIComponent(contactId)}`;

/** A contact's name: the person's, else the business's, else its contactId. */
export function displayName(contact: Pick<Contact, "contactId" | "firstName" | "lastName" | "businessName">): string {
  const person = [contact.firstName, contact.lastName].filter((s) => s && s.trim() !== "").join(" ");
  return person || contact.businessName || contact.contactId;
}

/** A form field's element id (the same rule as src/admin/ui.tsx), for the error summary's links. */
export const idOf = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

/** Most contact types a select offers; a project has a handful (docs/api.md §10). */
const MAX_TYPES = 500;

export interface Reference {
  types: Array<{ id: string; name: string; category: string; is_default: number }>;
  /** Every custom field of the project, by title. */
  customFields: CustomField[];
}

export async function loadReference(db: Db, projectId: string): Promise<Reference> {
  const [types, customFields] = await Promise.all([listNamed(db, "contact_types", projectId, MAX_TYPES), allCustomFields(db, projectId)]);
  customFields.sort((a, b) => a.title.localeCompare(b.title) || a.id.localeCompare(b.id));
  return { types: types.slice(0, MAX_TYPES), customFields };
}

export const writable = (field: CustomField) => !READ_ONLY_TYPES.includes(field.type);

/** A custom value as text: lists joined, booleans as Yes/No. */
export function shownValue(value: unknown): string {
  if (value === true) return "Yes";
  if (value === false) return "No";
  if (Array.isArray(value)) return value.map(shownValue).join(", ");
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  return String(value ?? "");
}
