import { ApiError, validationError } from "../errors.ts";
import { preparedQuery } from "../storage/prepared.ts";
import type { Db } from "../storage/schema.ts";

/**
 * Unique custom fields (docs/api.md §18.3): no two contacts of a project hold the same
 * trimmed value of a text field declared unique. One row per contact and value in
 * `contact_unique_values`, whose primary key refuses the second holder, concurrent
 * requests and other nodes included; the same rows find the contact an upsert matches on.
 */
export interface UniqueField {
  id: string;
  title: string;
}

/** A unique value is an index key: long texts would not fit PostgreSQL's index rows. */
export const MAX_UNIQUE_VALUE_LENGTH = 255;

const uniqueFieldsOfProject = preparedQuery<[string], UniqueField>(1, (db, projectId) =>
  db.selectFrom("custom_fields").select(["id", "title"]).where("project_id", "=", projectId).where("is_unique", "=", 1),
);

export async function uniqueFieldsOf(db: Db, projectId: string): Promise<UniqueField[]> {
  return uniqueFieldsOfProject(db, projectId);
}

/** The trimmed value a custom-field value is matched and kept unique by; null when empty. */
export function uniqueKey(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  return trimmed === "" ? null : trimmed;
}

/** The unique values a contact's customFields hold, checked for length. */
export function uniqueValuesOf(fields: readonly UniqueField[], customFields: Record<string, unknown>) {
  const values: Array<{ fieldId: string; value: string }> = [];
  for (const field of fields) {
    const value = uniqueKey(customFields[field.id]);
    if (value === null) continue;
    if (value.length > MAX_UNIQUE_VALUE_LENGTH) {
      throw validationError(
        `customFields.${field.id}`,
        `customFields.${field.id} (${field.title}) must be at most ${MAX_UNIQUE_VALUE_LENGTH} characters: the field is unique.`,
      );
    }
    values.push({ fieldId: field.id, value });
  }
  return values;
}

/**
 * Records `values` as held by the contact, whose earlier rows are gone (a new contact, or
 * `releaseUniqueValues` ran). A value another contact holds is 409 ERR_CONFLICT naming the
 * field. ON CONFLICT DO NOTHING rather than a caught violation: on PostgreSQL a failed
 * statement would abort the whole transaction; a concurrent holder's insert makes this one
 * wait for its commit, then find the row taken.
 */
export async function claimUniqueValues(
  db: Db,
  projectId: string,
  contactId: number,
  values: Array<{ fieldId: string; value: string }>,
  fields: readonly UniqueField[],
): Promise<void> {
  for (const { fieldId, value } of values) {
    const inserted = await db
      .insertInto("contact_unique_values")
      .values({ project_id: projectId, field_id: fieldId, value, contact_id: contactId })
      .onConflict((oc) => oc.doNothing())
      .returning("contact_id")
      .executeTakeFirst();
    if (!inserted) {
      const title = fields.find((f) => f.id === fieldId)?.title ?? fieldId;
      throw new ApiError(
        "ERR_CONFLICT",
        `customFields.${fieldId} (${title}) is unique, and another contact of the project holds this value.`,
        `customFields.${fieldId}`,
      );
    }
  }
}

export async function releaseUniqueValues(db: Db, contactId: number): Promise<void> {
  await db.deleteFrom("contact_unique_values").where("contact_id", "=", contactId).execute();
}

/** Contacts (row ids) holding `value` of a unique field: at most one, by the primary key. */
export async function contactsHoldingUniqueValue(db: Db, projectId: string, fieldId: string, value: string): Promise<number[]> {
  const rows = await db
    .selectFrom("contact_unique_values")
    .select("contact_id")
    .where("project_id", "=", projectId)
    .where("field_id", "=", fieldId)
    .where("value", "=", value)
    .execute();
  return rows.map((r) => Number(r.contact_id));
}
