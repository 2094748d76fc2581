import { Hono, type Context } from "hono";
import { validationFailure } from "../../http/validation.ts";
import { toPage } from "../../lib/pagination.ts";
import { isoNow } from "../../lib/time.ts";
import { checkUrl } from "../../webhooks/address-policy.ts";
import { listWebhooks, toWebhook } from "../../webhooks/repository.ts";
import { CreateWebhookBody, type Webhook } from "../../webhooks/schemas.ts";
import { createWebhook } from "../../webhooks/service.ts";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { showOnceAfterRedirect } from "../shown-once.ts";
import { Layout, Notice, projectPath, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { subscriptionPages } from "./webhook-actions.tsx";
import { blankHook, HookForm, readHookForm, type HookValues } from "./webhook-edit.tsx";
import { filterNames, FilterSummary, type FilterNames } from "./webhook-filter.tsx";
import { lastFailures, type LastFailure } from "./webhook-health.ts";
import { LastFailureText, StatusBadge, titleOf } from "./webhook-status.tsx";

/**
 * Webhook subscriptions of a project (docs/webhooks.md §2, docs/admin.md §3): the list with each one's health
 * and the form that creates one, through the API's schema and service (the URL checked,
 * DNS included, before the write transaction: docs/api.md §13.3). The new secret is shown
 * once, on the subscription's page after a redirect (docs/admin.md §2).
 */
export const webhookPages = new Hono<AdminEnv>();

const PAGE_SIZE = 50;

const CreateForm = (p: { c: Context<AdminEnv>; values: HookValues; errors?: FormErrors }) => (
  <section class="card" aria-labelledby="new-subscription">
    <h2 id="new-subscription">New subscription</h2>
    <HookForm c={p.c} action={projectPath(p.c.var.project, "webhooks")} values={p.values} errors={p.errors} button="Create subscription" />
  </section>
);

const HookRow = ({ c, hook, names, failure }: { c: Context<AdminEnv>; hook: Webhook; names: FilterNames; failure: LastFailure | undefined }) => (
  <tr>
    <td data-label="Subscription">
      <a href={`${projectPath(c.var.project, "webhooks")}/${hook.id}`}>{titleOf(hook)}</a>
    </td>
    <td class="mono prewrap" data-label="URL">
      {hook.url}
    </td>
    <td data-label="Events">
      {hook.events.join(", ")}
      <FilterSummary hook={hook} names={names} quiet />
    </td>
    <td data-label="Status">
      <StatusBadge hook={hook} />
    </td>
    <td class="num" data-label="Consecutive failures">
      {hook.consecutiveFailures}
    </td>
    <td data-label="Last success">
      <Time at={hook.lastSuccessAt} />
    </td>
    <td data-label="Last failure">
      <LastFailureText hook={hook} failure={failure} />
    </td>
  </tr>
);

const DONE: Record<string, string> = { deleted: "Subscription deleted: nothing more is delivered to it." };

async function listPage(c: Context<AdminEnv>, values: HookValues = blankHook, errors?: FormErrors, status: 200 | 422 = 200) {
  const { deps, project } = c.var;
  const filters = { adminWebhooks: project.id };
  const cursor = c.req.method === "GET" ? c.req.query("cursor") : undefined;
  const after = cursor ? (deps.cursors.decode(cursor, filters) as [string, string]) : undefined;
  const rows = await listWebhooks(deps.db, project.id, PAGE_SIZE, after);
  const page = toPage(rows, PAGE_SIZE, (r) => [r.created_at, r.id], toWebhook, deps.cursors, filters);
  const names = await filterNames(deps.db, project.id, page.data);
  const failures = await lastFailures(deps.db, page.data.filter((h) => h.lastFailureReason !== null).map((h) => h.id));
  const done = c.req.method === "GET" ? c.req.query("done") : undefined;
  return c.html(
    <Layout title="Webhooks" session={c.var.session} project={project} section="webhooks">
      <h1>Webhooks</h1>
      <Notice text={done && Object.hasOwn(DONE, done) ? DONE[done] : null} />
      {page.data.length === 0 && !cursor ? (
        <p class="none">No subscription yet: create one below to receive this project's events.</p>
      ) : (
        <TableWrap label="Subscriptions">
          <table class="hooks paired">
            <thead>
              <tr>
                <th scope="col">Subscription</th>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Consecutive failures</th>
                <th scope="col">Last success</th>
                <th scope="col">Last failure</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((hook) => (
                <HookRow c={c} hook={hook} names={names} failure={failures.get(hook.id)} />
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

/** Creates the subscription, then shows its secret once on its page, after a redirect: a reload neither shows it nor makes another. */
webhookPages.post("/", async (c) => {
  const values = readHookForm(c);
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
  return showOnceAfterRedirect(c, { label: "Signing secret", value: created.secret, about: created.id }, `${projectPath(project, "webhooks")}/${created.id}?done=created`);
});

webhookPages.route("/", subscriptionPages);
