import type { Context } from "hono";
import { ADDRESS_KEYS, type Contact } from "../../contacts/schemas.ts";
import * as contacts from "../../contacts/repository.ts";
import { contactOf, formatContactId, parseContactId } from "../../contacts/service.ts";
import { stateFromRow, type ContactState } from "../../contacts/state.ts";
import { keysOfRow } from "../../duplicates/maintain.ts";
import { membersOf } from "../../duplicates/repository.ts";
import { mergedState, type MergeSide } from "../../merges/fields.ts";
import { jsonColumn } from "../../storage/query.ts";
import type { Db } from "../../storage/schema.ts";
import type { AdminEnv } from "../env.ts";
import { projectPath } from "../ui.tsx";
import { displayName, shownValue } from "./contact-common.ts";

/**
 * What the console's compare, confirm and merge steps share (docs/api.md §20.2): the contacts
 * compared (read through the contacts repository, as the merge reads them), the fields a
 * person chooses between, the default choice (what mergeContacts would take: mergedState),
 * and the `fields` of the merge built from the choices.
 */

/** Most contacts one merge takes: the survivor and 10 others (docs/api.md §20.2). */
export const MAX_COMPARED = 11;
/** The tags choice that keeps the default rule: every contact's tags. */
export const ALL_TAGS = "all";

export interface Side {
  contactId: string;
  contact: Contact;
  state: ContactState;
}

/** The contacts of `ids` that are live, oldest first, and the ids that are not (merged or deleted since). */
export async function loadSides(db: Db, projectId: string, ids: string[]): Promise<{ sides: Side[]; gone: string[] }> {
  const sides: Side[] = [];
  const gone: string[] = [];
  for (const id of ids) {
    const n = parseContactId(id);
    const row = n === null ? undefined : await contacts.findContactRow(db, projectId, n);
    if (!row) {
      gone.push(id);
      continue;
    }
    const tags = jsonColumn(row.tags);
    sides.push({ contactId: formatContactId(row.contact_number), contact: contactOf(row), state: stateFromRow(row, tags.map((t) => t.id)) });
  }
  return { sides: sides.sort((a, b) => a.state.contactNumber - b.state.contactNumber), gone };
}

/**
 * The survivor and the others as the merge orders them: the most recently updated other
 * first (docs/api.md §20.2). Unless chosen, the oldest contact survives: its contactId is
 * the one most likely known elsewhere.
 */
export function arrange(sides: Side[], survivorId: string | undefined): { survivor: Side; others: Side[] } {
  const oldest = sides.reduce((a, b) => (b.state.contactNumber < a.state.contactNumber ? b : a));
  const survivor = sides.find((s) => s.contactId === survivorId) ?? oldest;
  const others = sides
    .filter((s) => s !== survivor)
    .sort((a, b) => (a.contact.updatedAt === b.contact.updatedAt ? b.state.contactNumber - a.state.contactNumber : a.contact.updatedAt < b.contact.updatedAt ? 1 : -1));
  return { survivor, others };
}

const asMergeSide = (s: Side): MergeSide => ({ contactId: s.contactId, state: s.state });

/** The survivor's state after the merge, with `fields` chosen (throws mergedState's 422 for a bad choice). */
export const stateAfter = (survivor: Side, others: Side[], fields: Record<string, string> = {}) => mergedState(asMergeSide(survivor), others.map(asMergeSide), fields);

/** One field a person can choose a contact's value of: its `fields` name, its label, its value in a state. */
export interface FieldSpec {
  name: string;
  label: string;
  value: (s: ContactState) => unknown;
}

const FIELDS: FieldSpec[] = [
  { name: "firstName", label: "First name", value: (s) => s.firstName },
  { name: "lastName", label: "Last name", value: (s) => s.lastName },
  { name: "businessName", label: "Business name", value: (s) => s.businessName },
  { name: "email", label: "Email", value: (s) => s.email },
  { name: "phone", label: "Phone", value: (s) => s.phone },
  { name: "website", label: "Website", value: (s) => s.website },
  { name: "address", label: "Address", value: (s) => s.address },
  { name: "contactType", label: "Contact type", value: (s) => s.contactTypeId },
  { name: "identityType", label: "Identity", value: (s) => s.identityType },
  { name: "source", label: "Source", value: (s) => s.source },
  { name: "subscribed", label: "Subscribed", value: (s) => s.subscribed },
  { name: "smsSubscribed", label: "SMS subscribed", value: (s) => s.smsSubscribed },
  { name: "notes", label: "Notes", value: (s) => s.notes },
  { name: "tags", label: "Tags", value: (s) => [...s.tagIds].sort() },
];

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value as Record<string, unknown>).every(isEmpty);
  return false;
}

/** Two values the same, an empty one being like any other empty one. */
const sameValue = (a: unknown, b: unknown) => (isEmpty(a) && isEmpty(b)) || JSON.stringify(a) === JSON.stringify(b);

/** Every field of the contacts, custom fields by title after the contact's own; `titles` maps a custom field's id to its title. */
export function fieldSpecs(sides: Side[], titles: Map<string, string>): FieldSpec[] {
  const ids = [...new Set(sides.flatMap((s) => Object.keys(s.state.customFields)))];
  ids.sort((a, b) => (titles.get(a) ?? a).localeCompare(titles.get(b) ?? b) || a.localeCompare(b));
  return [...FIELDS, ...ids.map((id): FieldSpec => ({ name: `customFields.${id}`, label: titles.get(id) ?? id, value: (s) => s.customFields[id] }))];
}

/** The fields whose values differ between the contacts: a person chooses those. */
export const differing = (specs: FieldSpec[], sides: Side[]) => specs.filter((f) => sides.some((s) => !sameValue(f.value(s.state), f.value(sides[0]!.state))));

/**
 * The choice a field starts with: the first contact (survivor first, then the others in
 * the merge's order) whose value is what the merge would take by its default rule; for
 * tags, all of them (the union).
 */
export function defaultChoice(spec: FieldSpec, survivor: Side, others: Side[], merged: ContactState): string {
  if (spec.name === "tags") return ALL_TAGS;
  const from = [survivor, ...others].find((s) => sameValue(spec.value(s.state), spec.value(merged)));
  return (from ?? survivor).contactId;
}

/**
 * The merge's `fields`: the choices that change what the merge would keep by its default
 * rule, and only those (a choice of the value the rule takes anyway is left to the rule,
 * so its implications, such as a businessName making the contact a business, still apply).
 */
export function mergeFields(specs: FieldSpec[], survivor: Side, others: Side[], requested: Record<string, string>): Record<string, string> {
  const sides = [survivor, ...others];
  const merged = stateAfter(survivor, others);
  const fields: Record<string, string> = {};
  for (const spec of differing(specs, sides)) {
    const choice = requested[spec.name];
    if (choice === undefined || (spec.name === "tags" && choice === ALL_TAGS)) continue;
    const from = sides.find((s) => s.contactId === choice);
    if (from && sameValue(spec.value(from.state), spec.value(merged))) continue;
    fields[spec.name] = choice; // a contactId not in the merge is left for mergedState to refuse (422)
  }
  return fields;
}

/** Names of what ids stand for, taken from the contacts compared: contact types and tags. */
export function namesOf(sides: Side[]) {
  const types = new Map<string, string>();
  const tags = new Map<string, string>();
  for (const s of sides) {
    if (s.contact.contactType) types.set(s.contact.contactType.id, s.contact.contactType.name);
    for (const t of s.contact.tags) tags.set(t.id, t.name);
  }
  return { types, tags };
}

/** A field's value in a state as text; null when empty. */
export function valueText(spec: FieldSpec, state: ContactState, names: ReturnType<typeof namesOf>): string | null {
  const v = spec.value(state);
  if (isEmpty(v)) return null;
  switch (spec.name) {
    case "address":
      return ADDRESS_KEYS.map((k) => state.address[k]).filter(Boolean).join(", ");
    case "contactType":
      return names.types.get(String(v)) ?? String(v);
    case "tags":
      return (v as string[]).map((id) => names.tags.get(id) ?? id).sort((a, b) => a.localeCompare(b)).join(", ");
    case "identityType":
      return v === "business" ? "Business" : "Personal";
    default:
      return shownValue(v);
  }
}

/** Where the compare page of `ids` is, with a survivor and choices carried. */
export function comparePath(c: Context<AdminEnv>, ids: string[], survivor?: string, choices: Record<string, string> = {}): string {
  const q = new URLSearchParams({ ids: ids.join(",") });
  if (survivor) q.set("survivor", survivor);
  for (const [k, v] of Object.entries(choices)) q.set(`f.${k}`, v);
  return `${projectPath(c.var.project, "duplicates")}/compare?${q}`;
}

/** The contactIds of a request's `ids` (comma-separated, at most MAX_COMPARED, repeats dropped). */
export function idsOf(text: string | undefined): string[] {
  const ids = (text ?? "").split(",").map((s) => s.trim().toUpperCase()).filter((s) => /^CR-\d{1,15}$/.test(s));
  return [...new Set(ids)].slice(0, MAX_COMPARED);
}

/** Names in a sentence: "A", "A and B", "A, B and C". */
export const listed = (items: string[]) => (items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

/** A contact as one line: its name and contactId (the contactId alone when it has no name). */
export function sideLabel(s: Side): string {
  const name = displayName(s.contact);
  return name === s.contactId ? s.contactId : `${name} (${s.contactId})`;
}

/**
 * The live contacts that share a duplicate key with contact `n` (docs/api.md §20.1: email,
 * phone, or full name with business or email domain), at most MAX_COMPARED - 1: what the
 * contact page's "Compare and merge" compares it with.
 */
export async function duplicatesOfContact(db: Db, projectId: string, n: number): Promise<string[]> {
  const row = await contacts.findContactRow(db, projectId, n);
  if (!row) return [];
  const groups = await Promise.all(keysOfRow(row).map((key) => membersOf(db, projectId, key)));
  const others = [...new Set(groups.flat())].filter((m) => m !== n);
  return others.slice(0, MAX_COMPARED - 1).map(formatContactId);
}
