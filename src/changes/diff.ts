import type { Contact } from "../contacts/schemas.ts";
import type { EventSubject } from "../webhooks/filter.ts";
import type { FieldChange } from "./record.ts";

/** The top-level contact fields a change names, in the contact's order (docs/api.md §19.1). */
export const CONTACT_FIELDS = [
  "contactId",
  "identityType",
  "source",
  "firstName",
  "lastName",
  "email",
  "phone",
  "businessName",
  "website",
  "address",
  "contactType",
  "tags",
  "subscribed",
  "smsSubscribed",
  "notes",
  "customFields",
] as const;
export const ADDRESS_PARTS = ["line1", "line2", "city", "state", "zip", "country"] as const;

/**
 * Every name a change record's `field` (and a history or subscription filter) can take:
 * the top-level fields, `address.<part>`; custom fields are `customFields.<id>`.
 */
export const CHANGE_FIELDS: ReadonlySet<string> = new Set([...CONTACT_FIELDS, ...ADDRESS_PARTS.map((k) => `address.${k}`)]);

/** Whether `field` names a contact field a change can set (`customFields.<id>` for any id). */
export const isChangeField = (field: string) => CHANGE_FIELDS.has(field) || /^customFields\.[^.]+$/.test(field);

/** The fields compared whole, as the contact shows them; address, tags and custom fields go part by part. */
type Scalar = Exclude<(typeof CONTACT_FIELDS)[number], "address" | "tags" | "customFields">;
const SCALARS = CONTACT_FIELDS.filter((f): f is Scalar => f !== "address" && f !== "tags" && f !== "customFields");

type Shown = Pick<Contact, Scalar | "address" | "tags" | "customFields">;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const tagNames = (c: Shown | null) => (c?.tags ?? []).map((t) => t.name).sort();
const isEmpty = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.length === 0);

/**
 * The fields that differ between two states of a contact, one entry per field: scalars by
 * name, `address.<part>`, `customFields.<id>`, `tags` as sorted names. `before` null: a
 * contact just created, whose set fields are listed from null.
 */
export function contactChanges(before: Shown | null, after: Shown): FieldChange[] {
  const out: FieldChange[] = [];
  const add = (field: string, from: unknown, to: unknown) => {
    if (before === null ? !isEmpty(to) : !same(from, to)) out.push({ field, from: before === null ? null : (from ?? null), to: to ?? null });
  };
  for (const key of SCALARS) add(key, before?.[key], after[key]);
  for (const part of Object.keys(after.address) as Array<keyof Contact["address"]>) add(`address.${part}`, before?.address[part], after.address[part]);
  const fieldIds = new Set([...Object.keys(before?.customFields ?? {}), ...Object.keys(after.customFields)]);
  for (const id of [...fieldIds].sort()) add(`customFields.${id}`, before?.customFields[id], after.customFields[id]);
  add("tags", tagNames(before), tagNames(after));
  return out;
}

/** contact.updated's `previous` (docs/webhooks.md §1): the former value of each changed field, as the contact showed it. */
export function previousValues(before: Contact, changedFields: string[]): Record<string, unknown> {
  return Object.fromEntries(changedFields.map((name) => [name, before[name as keyof Contact] ?? null]));
}

/** The contact as a subscription filter judges it (docs/webhooks.md §8). */
export function subjectOf(contactId: number, contact: Pick<Contact, "contactType" | "tags">, changes?: FieldChange[]): EventSubject {
  return {
    contactId,
    category: contact.contactType?.category ?? null,
    tagIds: contact.tags.map((t) => t.id),
    ...(changes ? { changedFields: changes.map((c) => c.field) } : {}),
  };
}
