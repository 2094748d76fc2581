import type { Context } from "hono";
import { EVENT_TYPES } from "../../events/catalog.ts";
import type { Webhook } from "../../webhooks/schemas.ts";
import type { AdminEnv } from "../env.ts";
import { field, fields } from "../security.ts";
import { Checkbox, ErrorSummary, Field, PostForm, type FormErrors } from "../ui.tsx";

/**
 * A subscription's URL, events and description as a form (docs/webhooks.md §2, docs/admin.md §3):
 * the create form on the list and the edit form on its page, read back into the API's
 * bodies (POST /v1/webhooks, PATCH /v1/webhooks/{id}) so the console refuses what the API refuses.
 */

export interface HookValues {
  url: string;
  events: string[];
  description: string;
}
export const blankHook: HookValues = { url: "", events: [], description: "" };

/** Where each error points in the form. */
export const HOOK_IDS = { url: "f-url", events: "f-events-contact-created", description: "f-description" };

/** What a subscription may take (src/webhooks/schemas.ts): catalog events, or "*" alone. */
const EVENT_CHOICES: Array<[value: string, label: string]> = [...EVENT_TYPES.map((e): [string, string] => [e, e]), ["*", "* (every event, also ones added later)"]];

export const readHookForm = (c: Context<AdminEnv>): HookValues => ({ url: field(c, "url").trim(), events: fields(c, "events"), description: field(c, "description").trim() });

export const valuesOfHook = (hook: Webhook): HookValues => ({ url: hook.url, events: hook.events, description: hook.description ?? "" });

const EventChoices = (p: { checked: string[]; error?: string }) => (
  <fieldset class={p.error ? "invalid events" : "events"} aria-describedby={p.error ? "f-events-error" : undefined}>
    <legend>Events</legend>
    {p.error ? (
      <p class="error" id="f-events-error">
        {p.error}
      </p>
    ) : null}
    <div class="choices">
      {EVENT_CHOICES.map(([value, label]) => (
        <Checkbox label={label} name="events" value={value} checked={p.checked.includes(value)} id={`f-events-${value === "*" ? "all" : value.replace(/[._]/g, "-")}`} />
      ))}
    </div>
  </fieldset>
);

/** The fields and the submit button; `button` names it ("Create subscription", "Save changes"). */
export const HookForm = (p: { c: Context<AdminEnv>; action: string; values: HookValues; errors?: FormErrors; button: string; label?: string }) => (
  <>
    <ErrorSummary errors={p.errors} ids={HOOK_IDS} />
    <PostForm action={p.action} token={p.c.var.session.csrfToken} label={p.label}>
      <Field label="URL" name="url" type="url" inputmode="url" value={p.values.url} required error={p.errors?.fields.url} hint="Where signed events are POSTed." />
      <EventChoices checked={p.values.events} error={p.errors?.fields.events} />
      <Field label="Description" name="description" value={p.values.description} error={p.errors?.fields.description} hint="Optional; names the subscription in the list." />
      <button type="submit">{p.button}</button>
    </PostForm>
  </>
);
