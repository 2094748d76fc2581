import { Hono, type Context } from "hono";
import { EVENT_TYPES } from "../../events/catalog.ts";
import { validationFailure } from "../../http/validation.ts";
import { toPage } from "../../lib/pagination.ts";
import { isoNow } from "../../lib/time.ts";
import { checkUrl } from "../../webhooks/address-policy.ts";
import { listWebhooks, toWebhook } from "../../webhooks/repository.ts";
import { CreateWebhookBody, type Webhook } from "../../webhooks/schemas.ts";
import { createWebhook } from "../../webhooks/service.ts";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { field, fields } from "../security.ts";
import { Checkbox, ErrorSummary, Field, Layout, PostForm, projectPath, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { subscriptionPages } from "./webhook-actions.tsx";
import { filterNames, FilterSummary, type FilterNames } from "./webhook-filter.tsx";
import { StatusBadge, subscriptionPage, titleOf } from "./webhook-page.tsx";

/**
 * Webhook subscriptions of a project (docs/webhooks.md §2, docs/admin.md §3): the list with each one's health
 * and the form that creates one, through the API's schema and service (the URL checked,
 * DNS included, before the write transaction: docs/api.md §13.3). The new secret is shown
 * once, on the page that answers the form.
 */
export const webhookPages = new Hono<AdminEnv>();

const PAGE_SIZE = 50;
/** What a subscription may take (src/webhooks/schemas.ts): catalog events, or "*" alone. */
const EVENT_CHOICES: Array<[value: string, label: string]> = [...EVENT_TYPES.map((e): [string, string] => [e, e]), ["*", "* (every event, also ones added later)"]];

interface HookValues {
  url: string;
  events: string[];
  description: string;
}
const ids = { url: "f-url", events: "f-events-contact-created", description: "f-description" };

const EventChoices = (p: { checked: string[]; error?: string }) => (
  <fieldset class={p.error ? "invalid" : undefined} aria-describedby={p.error ? "f-events-error" : undefined}>
    <legend>Events</legend>
    {p.error ? (
      <p class="error" id="f-events-error">
        {p.error}
      </p>
    ) : null}
    {EVENT_CHOICES.map(([value, label]) => (
      <Checkbox label={label} name="events" value={value} checked={p.checked.includes(value)} id={`f-events-${value === "*" ? "all" : value.replace(/[._]/g, "-")}`} />
    ))}
  </fieldset>
);

const CreateForm = (p: { c: Context<AdminEnv>; values: HookValues; errors?: FormErrors }) => (
  <section class="card" aria-labelledby="new-subscription">
    <h2 id="new-subscription">New subscription</h2>
    <ErrorSummary errors={p.errors} ids={ids} />
    <PostForm action={projectPath(p.c.var.project, "webhooks")} token={p.c.var.session.csrfToken}>
      <Field label="URL" name="url" type="url" inputmode="url" value={p.values.url} required error={p.errors?.fields.url} hint="Where signed events are POSTed." />
      <EventChoices checked={p.values.events} error={p.errors?.fields.events} />
      <Field label="Description" name="description" value={p.values.description} error={p.errors?.fields.description} hint="Optional; names the subscription in this list." />
      <button type="submit">Create subscription</button>
    </PostForm>
  </section>
);

const HookRow = ({ c, hook, names }: { c: Context<AdminEnv>; hook: Webhook; names: FilterNames }) => (
  <tr>
    <td>
      <a href={`${projectPath(c.var.project, "webhooks")}/${hook.id}`}>{titleOf(hook)}</a>
    </td>
    <td class="mono prewrap">{hook.url}</td>
    <td>
      {hook.events.join(", ")}
      <FilterSummary hook={hook} names={names} quiet />
    </td>
    <td>
      <StatusBadge status={hook.status} />
    </td>
    <td class="num">{hook.consecutiveFailures}</td>
    <td>
      <Time at={hook.lastSuccessAt} />
    </td>
    <td>{hook.lastFailureReason ?? <span class="none">—</span>}</td>
  </tr>
);

async function listPage(c: Context<AdminEnv>, values: HookValues = { url: "", events: [], description: "" }, errors?: FormErrors, status: 200 | 422 = 200) {
  const { deps, project } = c.var;
  const filters = { adminWebhooks: project.id };
  const cursor = c.req.method === "GET" ? c.req.query("cursor") : undefined;
  const after = cursor ? (deps.cursors.decode(cursor, filters) as [string, string]) : undefined;
  const rows = await listWebhooks(deps.db, project.id, PAGE_SIZE, after);
  const page = toPage(rows, PAGE_SIZE, (r) => [r.created_at, r.id], toWebhook, deps.cursors, filters);
  const names = await filterNames(deps.db, project.id, page.data);
  return c.html(
    <Layout title="Webhooks" session={c.var.session} project={project} section="webhooks">
      <h1>Webhooks</h1>
      {page.data.length === 0 && !cursor ? (
        <p class="none">No subscription yet: create one below to receive this project's events.</p>
      ) : (
        <TableWrap label="Subscriptions">
          <table>
            <thead>
              <tr>
                <th scope="col">Subscription</th>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Consecutive failures</th>
                <th scope="col">Last success</th>
                <th scope="col">Last failure reason</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((hook) => (
                <HookRow c={c} hook={hook} names={names} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {cursor || page.pagination.nextCursor ? (
        <nav class="pager" aria-label="Pages of subscriptions">
          {cursor ? <a href={projectPath(project, "webhooks")}>First page</a> : null}
          {page.pagination.nextCursor ? <a href={`${projectPath(project, "webhooks")}?cursor=${encodeURIComponent(page.pagination.nextCursor)}`}>Next page</a> : null}
        </nav>
      ) : null}
      <CreateForm c={c} values={values} errors={errors} />
    </Layout>,
    status,
  );
}

webhookPages.get("/", (c) => listPage(c));

webhookPages.post("/", async (c) => {
  const values: HookValues = { url: field(c, "url").trim(), events: fields(c, "events"), description: field(c, "description").trim() };
  // The API's body: blank fields are not sent, so the schema says what is missing.
  const body = { ...(values.url && { url: values.url }), events: values.events, ...(values.description && { description: values.description }) };
  const parsed = CreateWebhookBody.safeParse(body);
  if (!parsed.success) return listPage(c, values, formErrors(validationFailure(parsed.error, { input: body })), 422);
  const { deps, project } = c.var;
  // docs/api.md §13.3: the address check (DNS included) before the write transaction opens.
  const checked = { url: parsed.data.url, verdict: await checkUrl(parsed.data.url, deps.webhooks.env, deps.webhooks.resolve, false) };
  let created;
  try {
    created = await write(c, project.id, (trx) => createWebhook(trx, deps.secrets, project.id, parsed.data, checked, isoNow(deps.clock)));
  } catch (error) {
    return listPage(c, values, formErrors(error), 422);
  }
  return subscriptionPage(c, created.id, {
    notice: "Subscription created.",
    secret: { label: "Signing secret", value: created.secret },
  });
});

webhookPages.route("/", subscriptionPages);
