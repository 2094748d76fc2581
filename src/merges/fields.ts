import { ApiError } from "../errors.ts";
import type { ContactState } from "../contacts/state.ts";

/** The fields a merge picks one value of (docs/api.md §20.2), by their public names. */
const SCALAR_FIELDS = {
  identityType: "identityType",
  source: "source",
  firstName: "firstName",
  lastName: "lastName",
  email: "email",
  phone: "phone",
  businessName: "businessName",
  website: "website",
  address: "address",
  contactType: "contactTypeId",
  contactTypeId: "contactTypeId",
  notes: "notes",
  subscribed: "subscribed",
  smsSubscribed: "smsSubscribed",
} as const satisfies Record<string, keyof ContactState>;

/** Kept from the survivor unless `fields` chooses (docs/api.md §20.2). */
const SURVIVOR_ONLY = new Set<keyof ContactState>(["identityType", "source", "subscribed", "smsSubscribed"]);

export interface MergeSide {
  contactId: string;
  state: ContactState;
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value as Record<string, unknown>).every(isEmpty);
  return false;
}

/**
 * The survivor's state after a merge (docs/api.md §20.2). Per field, unless `fields` names
 * the contact to take it from: the survivor's non-empty value, else the non-empty value of
 * the most recently updated other (`others` come in that order); tags: the union;
 * customFields key by key the same way; identityType, source, subscribed and smsSubscribed:
 * the survivor's. A choice that names an unknown field or a contact not in the merge is 422
 * `fields.<name>`.
 */
export function mergedState(survivor: MergeSide, others: MergeSide[], fields: Record<string, string> = {}): ContactState {
  const sides = new Map([survivor, ...others].map((s) => [s.contactId, s.state]));
  const chosen = (name: string): ContactState | undefined => {
    const contactId = fields[name];
    if (contactId === undefined) return undefined;
    const state = sides.get(contactId);
    if (!state) throw new ApiError("ERR_FORM_VALIDATION", `${contactId} is not one of the contacts merged.`, `fields.${name}`);
    return state;
  };
  for (const name of Object.keys(fields)) {
    const known = name in SCALAR_FIELDS || name === "tags" || name === "customFields" || /^customFields\..+/.test(name);
    if (!known) throw new ApiError("ERR_FORM_VALIDATION", `${name} is not a field a merge chooses.`, `fields.${name}`);
    chosen(name);
  }
  const result: ContactState = structuredClone(survivor.state);
  const put = <K extends keyof ContactState>(key: K, value: ContactState[K]) => (result[key] = structuredClone(value));
  for (const [name, key] of Object.entries(SCALAR_FIELDS)) {
    if (name === "contactTypeId" && fields.contactType !== undefined) continue;
    const from = chosen(name);
    if (from) put(key, from[key]);
    else if (!SURVIVOR_ONLY.has(key) && isEmpty(result[key])) {
      const donor = others.find((o) => !isEmpty(o.state[key]));
      if (donor) put(key, donor.state[key]);
    }
  }
  // A businessName implies business (docs/api.md §11.1 rule 2), as on a PATCH.
  if (result.businessName !== null && result.identityType === "personal") {
    if (fields.identityType !== undefined) {
      throw new ApiError("ERR_FORM_VALIDATION", "identityType cannot be personal for a contact with a businessName.", "fields.identityType");
    }
    result.identityType = "business";
  }
  const tagsFrom = chosen("tags");
  result.tagIds = tagsFrom ? [...tagsFrom.tagIds] : [...new Set([survivor.state, ...others.map((o) => o.state)].flatMap((s) => s.tagIds))].sort();
  const customFrom = chosen("customFields");
  if (customFrom) result.customFields = structuredClone(customFrom.customFields);
  else {
    const ids = new Set([survivor.state, ...others.map((o) => o.state)].flatMap((s) => Object.keys(s.customFields)));
    for (const id of ids) {
      const from = chosen(`customFields.${id}`);
      if (from) {
        if (isEmpty(from.customFields[id])) delete result.customFields[id];
        else result.customFields[id] = structuredClone(from.customFields[id]);
        continue;
      }
      if (!isEmpty(result.customFields[id])) continue;
      const donor = others.find((o) => !isEmpty(o.state.customFields[id]));
      if (donor) result.customFields[id] = structuredClone(donor.state.customFields[id]);
    }
  }
  return result;
}

/**
 * Undo's rule for the survivor (docs/api.md §20.4): a field that still holds the value the
 * merge gave it goes back to its value before; one changed since keeps its new value.
 * customFields go key by key, tags tag by tag (a tag the merge added and that is still
 * there is removed).
 */
export function revertedState(current: ContactState, before: ContactState, after: ContactState): ContactState {
  const result: ContactState = structuredClone(current);
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const key of new Set(Object.values(SCALAR_FIELDS))) {
    if (same(current[key], after[key])) (result as unknown as Record<string, unknown>)[key] = structuredClone(before[key]);
  }
  const added = after.tagIds.filter((t) => !before.tagIds.includes(t));
  result.tagIds = current.tagIds.filter((t) => !added.includes(t)).sort();
  for (const id of new Set([...Object.keys(before.customFields), ...Object.keys(after.customFields)])) {
    if (!same(current.customFields[id], after.customFields[id])) continue;
    if (before.customFields[id] === undefined) delete result.customFields[id];
    else result.customFields[id] = structuredClone(before.customFields[id]);
  }
  return result;
}
