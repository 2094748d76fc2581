import type { Context } from "hono";
import { CATEGORIES } from "../../reference/schemas.ts";
import { allCustomFields } from "../../reference/repository.ts";
import type { Db } from "../../storage/schema.ts";
import { ADDRESS_PARTS, CONTACT_FIELDS, type Ordering, type WebhookFilterInput } from "../../webhooks/filter.ts";
import type { Webhook } from "../../webhooks/schemas.ts";
import type { AdminEnv } from "../env.ts";
import { field, fields } from "../security.ts";
import { Checkbox, ErrorSummary, PostForm, TextArea, type FormErrors } from "../ui.tsx";

/**
 * A subscription's filter and ordering in the console (docs/webhooks.md §8, docs/admin.md §3):
 * the editor on its page, the form read back into the API's PATCH body, and the filter told
 * in words (tags and custom fields by name) for the page and the list.
 */

/** The editor's values as the form holds them (tags by name, one a line). */
export interface FilterValues {
  changedFields: string[];
  contactTypeCategory: string[];
  tags: string;
  ordering: Ordering;
}

/** The editor as sent, and what was wrong with it. */
export interface FilterEdit {
  values: FilterValues;
  errors: FormErrors;
}

/** Where each error of the PATCH body points in the editor. */
export const FILTER_IDS = {
  "filter.changedFields": "f-cf-email",
  "filter.contactTypeCategory": "f-cat-Lead",
  "filter.tags": "f-filter-tags",
  ordering: "f-ordering",
};

/** The form's fields → the PATCH body's `filter` (null when nothing is chosen) and `ordering`. */
export function readFilterForm(c: Context<AdminEnv>): { values: FilterValues; body: { filter: WebhookFilterInput | null; ordering: string } } {
  const values: FilterValues = {
    changedFields: fields(c, "changedFields"),
    contactTypeCategory: fields(c, "contactTypeCategory"),
    tags: field(c, "tags"),
    ordering: field(c, "ordering") === "per-contact" ? "per-contact" : "none",
  };
  const tags = values.tags
    .split(/\r?\n/)
    .map((t) => t.trim())
    .filter((t) => t !== "");
  const filter = {
    ...(values.changedFields.length > 0 && { changedFields: values.changedFields }),
    ...(values.contactTypeCategory.length > 0 && { contactTypeCategory: values.contactTypeCategory as WebhookFilterInput["contactTypeCategory"] }),
    ...(tags.length > 0 && { tags }),
  };
  return { values, body: { filter: Object.keys(filter).length > 0 ? filter : null, ordering: field(c, "ordering") } };
}

/** Names for the ids a filter holds: tags by name, custom fields by title (a deleted one shows its id). */
export interface FilterNames {
  tags: Map<string, string>;
  customFields: Map<string, string>;
}

export async function filterNames(db: Db, projectId: string, hooks: Array<Pick<Webhook, "filter">>): Promise<FilterNames> {
  const tagIds = [...new Set(hooks.flatMap((h) => h.filter?.tags ?? []))];
  const tags = tagIds.length === 0 ? [] : await db.selectFrom("tags").select(["id", "name"]).where("project_id", "=", projectId).where("id", "in", tagIds).execute();
  const custom = hooks.some((h) => h.filter?.changedFields?.some((f) => f.startsWith("customFields."))) ? await allCustomFields(db, projectId) : [];
  return { tags: new Map(tags.map((t) => [t.id, t.name])), customFields: new Map(custom.map((f) => [`customFields.${f.id}`, `customFields: ${f.title}`])) };
}

/** The filter in words, one line a key; "Every event" when there is none. `quiet` (the list): nothing then, and the ordering when per contact. */
export const FilterSummary = ({ hook, names, quiet }: { hook: Pick<Webhook, "filter" | "ordering">; names: FilterNames; quiet?: boolean }) => {
  const f = hook.filter;
  const lines: string[] = [];
  if (f?.contactTypeCategory) lines.push(`Categories: ${f.contactTypeCategory.join(", ")}`);
  if (f?.tags) lines.push(`Tags: ${f.tags.map((id) => names.tags.get(id) ?? id).join(", ")}`);
  if (f?.changedFields) lines.push(`Updates changing: ${f.changedFields.map((n) => names.customFields.get(n) ?? n).join(", ")}`);
  return (
    <>
      {lines.length === 0 ? quiet ? null : <span class="none">Every event</span> : lines.map((l) => <div class="hint">{l}</div>)}
      {quiet && hook.ordering === "per-contact" ? <div class="hint">Ordered per contact</div> : null}
    </>
  );
};

/** The editor's values from the stored subscription (tags by name). */
export const valuesOf = (hook: Webhook, names: FilterNames): FilterValues => ({
  changedFields: hook.filter?.changedFields ?? [],
  contactTypeCategory: hook.filter?.contactTypeCategory ?? [],
  tags: (hook.filter?.tags ?? []).map((id) => names.tags.get(id) ?? id).join("\n"),
  ordering: hook.ordering,
});

const Group = ({ legend, id, error, hint, children }: { legend: string; id: string; error?: string; hint: string; children: unknown }) => (
  <fieldset class={error ? "invalid" : undefined} aria-describedby={[`${id}-hint`, error ? `${id}-error` : null].filter(Boolean).join(" ")}>
    <legend>{legend}</legend>
    <p class="hint" id={`${id}-hint`}>
      {hint}
    </p>
    {error ? (
      <p class="error" id={`${id}-error`}>
        {error}
      </p>
    ) : null}
    <div class="row">{children}</div>
  </fieldset>
);

/** Ordering: short option texts that fit a phone's select, what each means in the hint under it. */
const OrderingSelect = ({ value, error }: { value: Ordering; error?: string }) => (
  <div class={error ? "field invalid" : "field"}>
    <label for="f-ordering">Ordering</label>
    {error ? (
      <p class="error" id="f-ordering-error">
        {error}
      </p>
    ) : null}
    <select id="f-ordering" name="ordering" aria-invalid={error ? "true" : undefined} aria-describedby={error ? "f-ordering-hint f-ordering-error" : "f-ordering-hint"}>
      {ORDERINGS.map(([v, text]) => (
        <option value={v} selected={v === value}>
          {text}
        </option>
      ))}
    </select>
    <p class="hint" id="f-ordering-hint">
      None: deliveries may overtake each other. Per contact: one contact's events are delivered one at a time, in the order they happened.
    </p>
  </div>
);

const ORDERINGS: Array<[Ordering, string]> = [
  ["none", "None"],
  ["per-contact", "Per contact, in order"],
];

/** The editor (docs/webhooks.md §8): saved through the API's PATCH service; applies to events recorded from then on. */
export function FilterEditor(p: { c: Context<AdminEnv>; action: string; values: FilterValues; custom: Array<{ id: string; title: string }>; errors?: FormErrors }) {
  const choices: Array<[string, string]> = [
    ...CONTACT_FIELDS.map((f): [string, string] => [f, f === "address" ? "address (any part)" : f === "customFields" ? "customFields (any)" : f]),
    ...ADDRESS_PARTS.map((part): [string, string] => [`address.${part}`, `address.${part}`]),
    ...p.custom.map((f): [string, string] => [`customFields.${f.id}`, `customFields: ${f.title}`]),
  ];
  const e = p.errors?.fields ?? {};
  return (
    <details class="card hook-more" id="filter" open={p.errors ? true : undefined}>
      <summary>Filter and ordering</summary>
      <p class="hint">Applies to events recorded after saving; deliveries already queued are not judged again. Redelivery ignores the filter.</p>
      <ErrorSummary errors={p.errors} ids={FILTER_IDS} />
      <PostForm action={p.action} token={p.c.var.session.csrfToken} label="Filter and ordering">
        <Group legend="Contact type categories" id="f-cat" error={e["filter.contactTypeCategory"]} hint="Only contacts whose type has one of these categories. None checked: any.">
          {CATEGORIES.map((k) => (
            <Checkbox label={k} name="contactTypeCategory" value={k} checked={p.values.contactTypeCategory.includes(k)} id={`f-cat-${k}`} />
          ))}
        </Group>
        <TextArea label="Tags (one name a line; only contacts with one of them; empty: any)" name="tags" id="f-filter-tags" rows={3} value={p.values.tags} error={e["filter.tags"]} />
        <Group legend="Changed fields (contact.updated)" id="f-cf" error={e["filter.changedFields"]} hint="An update is delivered only when one of these changed. None checked: every update.">
          {choices.map(([value, label]) => (
            <Checkbox label={label} name="changedFields" value={value} checked={p.values.changedFields.includes(value)} id={`f-cf-${value.replace(/[^A-Za-z0-9_-]/g, "-")}`} />
          ))}
        </Group>
        <OrderingSelect value={p.values.ordering} error={e.ordering} />
        <button type="submit">Save filter and ordering</button>
      </PostForm>
    </details>
  );
}
