import type { ContactRow } from "../storage/schema.ts";
import { ADDRESS_KEYS } from "./schemas.ts";

type Address = Record<(typeof ADDRESS_KEYS)[number], string | null>;

/** A contact as the service reasons about it: one shape for create (from blank) and PATCH. */
export interface ContactState {
  contactNumber: number;
  identityType: "personal" | "business";
  source: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  businessName: string | null;
  website: string | null;
  address: Address;
  contactTypeId: string | null;
  tagIds: string[];
  subscribed: boolean;
  smsSubscribed: boolean;
  notes: string | null;
  customFields: Record<string, unknown>;
}

const EMPTY_ADDRESS = Object.freeze(Object.fromEntries(ADDRESS_KEYS.map((k) => [k, null])) as Address);
export const emptyAddress = (): Address => ({ ...EMPTY_ADDRESS });

export function blankState(contactNumber: number): ContactState {
  return {
    contactNumber,
    identityType: "personal",
    source: "api",
    firstName: null,
    lastName: null,
    email: null,
    phone: null,
    businessName: null,
    website: null,
    address: emptyAddress(),
    contactTypeId: null,
    tagIds: [],
    subscribed: false,
    smsSubscribed: false,
    notes: null,
    customFields: {},
  };
}

export function stateFromRow(row: ContactRow, tagIds: string[]): ContactState {
  return {
    contactNumber: row.contact_number,
    identityType: row.identity_type as ContactState["identityType"],
    source: row.source,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    businessName: row.business_name,
    website: row.website,
    address: { ...EMPTY_ADDRESS, ...JSON.parse(row.address) },
    contactTypeId: row.contact_type_id,
    tagIds: [...tagIds].sort(),
    subscribed: row.subscribed === 1,
    smsSubscribed: row.sms_subscribed === 1,
    notes: row.notes,
    customFields: JSON.parse(row.custom_fields),
  };
}

/** Public field names (docs/api.md §11.1) whose value differs, for contact.updated's changedFields. */
export function changedFields(before: ContactState, after: ContactState): string[] {
  const names: Array<[keyof ContactState, string]> = [
    ["contactNumber", "contactId"],
    ["identityType", "identityType"],
    ["source", "source"],
    ["firstName", "firstName"],
    ["lastName", "lastName"],
    ["email", "email"],
    ["phone", "phone"],
    ["businessName", "businessName"],
    ["website", "website"],
    ["address", "address"],
    ["contactTypeId", "contactType"],
    ["tagIds", "tags"],
    ["subscribed", "subscribed"],
    ["smsSubscribed", "smsSubscribed"],
    ["notes", "notes"],
    ["customFields", "customFields"],
  ];
  return names.filter(([key]) => !sameValue(before[key], after[key])).map(([, name]) => name);
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  }
  return v;
}
