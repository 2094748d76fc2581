import type { FC } from "hono/jsx";
import type { ChangeRecord } from "../../changes/schemas.ts";
import type { Db } from "../../storage/schema.ts";
import { Time } from "../ui.tsx";
import { shownValue } from "./contact-common.ts";
import { MergeStatus, type MergeInfo } from "./merge-timeline.tsx";

/**
 * The change records on a contact's timeline (docs/admin.md §3, docs/api.md §19: "the
 * console's contact timeline shows the change history beside the interactions"): each with
 * its action, who made it, when, and for an update the fields with their former and new
 * values. A merge's record carries "Undo merge" while it can be undone (docs/api.md §20.4).
 * The timeline itself (its sources, pages and list) is src/admin/pages/contact-timeline.tsx.
 */

/** Longest value a change shows; longer ones end in "…" (the contact's fields above show them whole). */
export const MAX_VALUE = 120;

/** The names of who made the page's changes, by `type:id`: a key's name, an admin's email, a form's name, an import's file. */
export async function actorNames(db: Db, projectId: string, records: ChangeRecord[]): Promise<Map<string, string>> {
  const ids = (type: string) => [...new Set(records.flatMap((r) => (r.actor?.type === type && r.actor.id ? [r.actor.id] : [])))];
  const [keys, admins, forms, imports] = [ids("api_key"), ids("admin"), ids("form"), ids("import")];
  const none = Promise.resolve([] as Array<{ id: string; name: string | null }>);
  const rows = await Promise.all([
    keys.length ? db.selectFrom("api_keys").select(["id", "name"]).where("project_id", "=", projectId).where("id", "in", keys).execute() : none,
    admins.length ? db.selectFrom("admins").select(["id", "email as name"]).where("id", "in", admins).execute() : none,
    forms.length ? db.selectFrom("forms").select(["id", "name"]).where("project_id", "=", projectId).where("id", "in", forms).execute() : none,
    imports.length ? db.selectFrom("admin_imports").select(["id", "file_name as name"]).where("project_id", "=", projectId).where("id", "in", imports).execute() : none,
  ]);
  const names = new Map<string, string>();
  ["api_key", "admin", "form", "import"].forEach((type, i) => {
    for (const row of rows[i]!) if (row.name) names.set(`${type}:${row.id}`, row.name);
  });
  return names;
}

const ACTIONS: Record<ChangeRecord["action"], string> = {
  created: "Contact created",
  updated: "Contact updated",
  deleted: "Moved to the trash",
  restored: "Restored from the trash",
  merged: "Contacts merged into this one",
  erased: "Erased",
};

const ACTOR_KINDS: Record<NonNullable<ChangeRecord["actor"]>["type"], string> = {
  api_key: "API key",
  admin: "admin",
  import: "import",
  form: "form",
  system: "the service",
};

/** Who made a change, as a person reads it: "Website integration (API key)", "ops@example.com (admin)", "the service". */
function actorText(actor: NonNullable<ChangeRecord["actor"]>, names: Map<string, string>): string {
  const kind = ACTOR_KINDS[actor.type] ?? actor.type;
  if (actor.type === "system") return kind;
  const name = actor.id ? (names.get(`${actor.type}:${actor.id}`) ?? actor.id) : null;
  return name ? `${name} (${kind})` : kind;
}

const FIELD_NAMES: Record<string, string> = {
  contactId: "Contact id",
  identityType: "Identity",
  source: "Source",
  firstName: "First name",
  lastName: "Last name",
  email: "Email",
  phone: "Phone",
  businessName: "Business name",
  website: "Website",
  contactType: "Contact type",
  subscribed: "Subscribed",
  smsSubscribed: "SMS subscribed",
  notes: "Notes",
  tags: "Tags",
  "address.line1": "Address line 1",
  "address.line2": "Address line 2",
  "address.city": "City",
  "address.state": "State",
  "address.zip": "ZIP / postal code",
  "address.country": "Country",
};

export function fieldName(field: string, customTitles: Map<string, string>): string {
  if (field.startsWith("customFields.")) return customTitles.get(field.slice("customFields.".length)) ?? field.slice("customFields.".length);
  return FIELD_NAMES[field] ?? field;
}

/** A value as text, cut at MAX_VALUE characters: tags are names, a contact type its name. */
export function valueText(value: unknown): string | null {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return null;
  const named = typeof value === "object" && !Array.isArray(value) && typeof (value as { name?: unknown }).name === "string" ? (value as { name: string }).name : value;
  const text = shownValue(named);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

export const Shown: FC<{ value: unknown }> = ({ value }) => {
  const text = valueText(value);
  return text === null ? <span class="none">—</span> : <>{text}</>;
};

/** A change's fields: an update's from → to; a creation's values, folded (the contact's fields above show them as they are now). */
const Fields: FC<{ record: ChangeRecord; customTitles: Map<string, string> }> = ({ record, customTitles }) => {
  const created = record.action === "created";
  const list = (
    <dl class="props">
      {record.changes!.map((c) => (
        <>
          <dt>{fieldName(c.field, customTitles)}</dt>
          <dd>
            {created ? (
              <Shown value={c.to} />
            ) : (
              <>
                <Shown value={c.from} /> → <Shown value={c.to} />
              </>
            )}
          </dd>
        </>
      ))}
    </dl>
  );
  if (!created) return list;
  const n = record.changes!.length;
  return (
    <details>
      <summary>
        {n} field{n === 1 ? "" : "s"} set
      </summary>
      {list}
    </details>
  );
};

/** The contact a "deleted" record's contact was merged into (docs/api.md §20.2), if that is how it left. */
function mergedInto(record: ChangeRecord): string | null {
  const into = record.action === "deleted" ? record.changes?.find((c) => c.field === "mergedInto")?.to : undefined;
  return typeof into === "string" ? into : null;
}

/** What kind of timeline entry a record is: a merge's (the survivor's, or the merged-away contact's), or another change. */
export const changeKind = (record: ChangeRecord) => (record.action === "merged" || mergedInto(record) ? "Merge" : "Change");

interface ChangeProps {
  record: ChangeRecord;
  names: Map<string, string>;
  customTitles: Map<string, string>;
  merge?: MergeInfo;
  here: string;
  now: string;
}

/** One change record as a timeline entry: "Change: Contact updated · by …" or "Merge: …", with its fields. */
export const Change: FC<ChangeProps> = ({ record, names, customTitles, merge, here, now }) => {
  const kind = changeKind(record);
  const into = mergedInto(record);
  return (
    <li class={kind === "Merge" ? "entry merge" : "entry change"}>
      <p class="meta">
        <Time at={record.at} /> · <span class="kind">{kind}:</span> <strong>{into ? `Merged into ${into}` : (ACTIONS[record.action] ?? record.action)}</strong>
        {record.actor ? <> · by {actorText(record.actor, names)}</> : null}
      </p>
      {merge ? <MergeStatus merge={merge} here={here} now={now} /> : null}
      {record.changes && record.changes.length > 0 && !into ? <Fields record={record} customTitles={customTitles} /> : null}
    </li>
  );
};
