/**
 * The keys that make contacts duplicates (docs/api.md §20.1): the email match key, the phone
 * match key, and the folded full name together with the folded businessName or the email's
 * domain. Two live contacts that share a key are a group.
 */

import { foldCase } from "../lib/fold.ts";

export type DuplicateReason = "email" | "phone" | "name";

/**
 * Case and accents ignored (src/lib/fold.ts), runs of spaces and punctuation made one space.
 */
export function foldText(text: string): string {
  return foldCase(text)
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

export interface KeyedFields {
  firstName: string | null;
  lastName: string | null;
  businessName: string | null;
  emailKey: string | null;
  phoneKey: string | null;
}

/** A contact's name keys: `name:<full name>\u001forg:<businessName>` and `…\u001fdomain:<domain>`. */
export function nameKeysOf(f: KeyedFields): string[] {
  const name = foldText([f.firstName, f.lastName].filter(Boolean).join(" "));
  if (!name) return [];
  const keys: string[] = [];
  const business = f.businessName ? foldText(f.businessName) : "";
  if (business) keys.push(`name:${name}\u001forg:${business}`);
  const at = f.emailKey ? f.emailKey.lastIndexOf("@") : -1;
  const domain = f.emailKey && at >= 0 ? f.emailKey.slice(at + 1) : "";
  if (domain) keys.push(`name:${name}\u001fdomain:${domain}`);
  return keys.map((k) => k.slice(0, 1000));
}

/** Every duplicate key of a contact, sorted (locks are taken in this order). */
export function duplicateKeysOf(f: KeyedFields): string[] {
  const keys = nameKeysOf(f);
  if (f.emailKey) keys.push(`email:${f.emailKey}`);
  if (f.phoneKey) keys.push(`phone:${f.phoneKey}`);
  return keys.sort();
}

export function reasonOf(key: string): DuplicateReason {
  return key.startsWith("email:") ? "email" : key.startsWith("phone:") ? "phone" : "name";
}

/** The value a key matches in its table (the email or phone match key, or the whole name key). */
export const keyValue = (key: string) => (key.startsWith("name:") ? key : key.slice(key.indexOf(":") + 1));

/** The keyed fields of a contact row (stored or about to be). */
export function keyedFieldsOfRow(row: {
  first_name?: string | null;
  last_name?: string | null;
  business_name?: string | null;
  email_key?: string | null;
  phone_key?: string | null;
}): KeyedFields {
  return {
    firstName: row.first_name ?? null,
    lastName: row.last_name ?? null,
    businessName: row.business_name ?? null,
    emailKey: row.email_key ?? null,
    phoneKey: row.phone_key ?? null,
  };
}
