import type { Context } from "hono";
import { toPage } from "../../lib/pagination.ts";
import { allCustomFields } from "../../reference/repository.ts";
import { toWebhook } from "../../webhooks/repository.ts";
import type { Webhook } from "../../webhooks/schemas.ts";
import { requireWebhook } from "../../webhooks/service.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Field, Layout, Notice, PostForm, projectPath, ShownOnce, Time, type FormErrors } from "../ui.tsx";
import { Attempts, Waiting } from "./webhook-attempts.tsx";
import { HookForm, valuesOfHook, type HookValues } from "./webhook-edit.tsx";
import { FilterEditor, filterNames, FilterSummary, valuesOf, type FilterEdit, type FilterNames } from "./webhook-filter.tsx";
import { attemptsWithEvents, lastFailures, waitingDeliveries, type LastFailure } from "./webhook-health.ts";
import { LastFailureText, StatusBadge, titleOf } from "./webhook-status.tsx";

/**
 * A subscription's page (docs/webhooks.md §2, docs/admin.md §3): first its health and its
 * actions (test ping, disable or enable, rotate the secret, delete, redeliver since a time:
 * src/admin/pages/webhook-actions.tsx), then Edit and Filter and ordering, closed until
 * opened or refused, then the deliveries waiting with their next try and its attempts,
 * newest first in pages, with the event each carried.
 */

/** Attempts a page, and waiting deliveries shown (with their total): the forms above stay within reach on a phone (docs/admin.md §3). */
const ATTEMPTS_PAGE = 20;
const WAITING_SHOWN = 10;

/** What an action adds to the page it answers with. */
export interface PageExtras {
  notice?: string;
  /** A new signing secret, shown once (docs/webhooks.md §2), taken from the one-time cookie. */
  secret?: { label: string; value: string };
  /** The test ping's outcome. */
  ping?: { delivered: boolean; statusCode: number | null; error: string | null };
  /** The redeliver form as sent, and what was wrong with it. */
  redeliver?: { since: string; errors: FormErrors };
  /** The filter editor as sent, and what was wrong with it. */
  filter?: FilterEdit;
  /** The edit form as sent, and what was wrong with it. */
  edit?: { values: HookValues; errors: FormErrors };
}

export const hookPath = (c: Context<AdminEnv>, hook: { id: string }) => `${projectPath(c.var.project, "webhooks")}/${hook.id}`;

const PingOutcome = ({ ping }: { ping: NonNullable<PageExtras["ping"]> }) =>
  ping.delivered ? (
    <p class="notice" role="status">
      Test ping delivered: the receiver answered HTTP {ping.statusCode}.
    </p>
  ) : (
    <div class="errors" role="alert">
      <h2>Test ping not delivered</h2>
      <p>{ping.statusCode !== null ? `The receiver answered HTTP ${ping.statusCode}.` : ping.error}</p>
    </div>
  );

const Properties = ({ hook, names, failure }: { hook: Webhook; names: FilterNames; failure: LastFailure | undefined }) => (
  <dl class="props card">
    <dt>Status</dt>
    <dd>
      <StatusBadge hook={hook} />
    </dd>
    <dt>Consecutive failures</dt>
    <dd>{hook.consecutiveFailures}</dd>
    <dt>Last success</dt>
    <dd>
      <Time at={hook.lastSuccessAt} />
    </dd>
    <dt>Last failure</dt>
    <dd>
      <LastFailureText hook={hook} failure={failure} />
    </dd>
    <dt>URL</dt>
    <dd class="mono">{hook.url}</dd>
    <dt>Events</dt>
    <dd>{hook.events.join(", ")}</dd>
    <dt>Filter</dt>
    <dd>
      <FilterSummary hook={hook} names={names} />
    </dd>
    <dt>Ordering</dt>
    <dd>{hook.ordering === "per-contact" ? "Per contact: one at a time, in order" : "None"}</dd>
    <dt>Created</dt>
    <dd>
      <Time at={hook.createdAt} />
    </dd>
    <dt>Id</dt>
    <dd class="mono">{hook.id}</dd>
  </dl>
);

/** The actions a subscription takes most (docs/admin.md §3), at the top of its page: Delete asks first. */
const Actions = ({ c, hook, extras }: { c: Context<AdminEnv>; hook: Webhook; extras: PageExtras }) => {
  const token = c.var.session.csrfToken;
  const base = hookPath(c, hook);
  const errors = extras.redeliver?.errors;
  return (
    <section class="card" aria-labelledby="actions">
      <h2 id="actions">Actions</h2>
      <div class="actions">
        <PostForm action={`${base}/test`} token={token} class="inline">
          <button type="submit">Send test ping</button>
        </PostForm>
        <PostForm action={`${base}/status`} token={token} class="inline">
          <input type="hidden" name="status" value={hook.status === "active" ? "disabled" : "active"} />
          <button type="submit" class="secondary">
            {hook.status === "active" ? "Disable" : "Enable"}
          </button>
        </PostForm>
        <PostForm action={`${base}/rotate-secret`} token={token} class="inline">
          <button type="submit" class="secondary">
            Rotate secret
          </button>
        </PostForm>
        <PostForm action={`${base}/delete`} token={token} class="inline">
          <button type="submit" class="danger">
            Delete subscription
          </button>
        </PostForm>
      </div>
      <p class="hint">Disable, Rotate secret and Delete ask you to confirm first. Deleting drops its waiting deliveries.</p>
      <details class="hook-more" id="redeliver" open={errors ? true : undefined}>
        <summary>Redeliver events since a time</summary>
        <ErrorSummary errors={errors} ids={{ since: "f-since" }} />
        <PostForm action={`${base}/redeliver`} token={token} label="Redeliver">
          <Field
            label="Since"
            name="since"
            type="datetime-local"
            value={extras.redeliver?.since}
            required
            error={errors?.fields.since}
            hint="UTC. The events of the last 30 days from this time on that the subscription takes are sent again (same event ids, new delivery ids)."
          />
          <button type="submit">Redeliver</button>
        </PostForm>
      </details>
    </section>
  );
};

/** URL, events and description; closed unless the form came back refused. */
const EditSection = ({ c, hook, extras }: { c: Context<AdminEnv>; hook: Webhook; extras: PageExtras }) => (
  <details class="card hook-more" id="edit" open={extras.edit ? true : undefined}>
    <summary>Edit subscription</summary>
    <HookForm c={c} action={`${hookPath(c, hook)}/edit`} values={extras.edit?.values ?? valuesOfHook(hook)} errors={extras.edit?.errors} button="Save changes" label="Edit subscription" />
  </details>
);

/**
 * Renders subscription `id` of the project (404 page when unknown), with what an action
 * adds; the attempts' page comes from `?cursor=` on a GET.
 */
export async function subscriptionPage(c: Context<AdminEnv>, id: string, extras: PageExtras = {}, status: 200 | 409 | 422 = 200) {
  const { deps, project } = c.var;
  await requireWebhook(deps.db, project.id, id); // another project's subscription is 404 before anything of it is read
  const filters = { adminAttempts: id };
  const cursor = c.req.method === "GET" ? c.req.query("cursor") || undefined : undefined;
  const after = cursor ? (deps.cursors.decode(cursor, filters) as [string, string]) : undefined;
  const [attempts, waiting] = await Promise.all([attemptsWithEvents(deps.db, id, ATTEMPTS_PAGE, after), waitingDeliveries(deps.db, id, WAITING_SHOWN)]);
  // The subscription's health is read after its attempts: an attempt and the failure it
  // counts are written in one transaction (src/webhooks/deliveries.ts recordOutcomes), so an
  // attempt on the page always has its failure counted, even when the two reads straddle that commit.
  const hook = toWebhook(await requireWebhook(deps.db, project.id, id));
  const base = hookPath(c, hook);
  const [names, custom, failures] = await Promise.all([
    filterNames(deps.db, project.id, [hook]),
    allCustomFields(deps.db, project.id),
    lastFailures(deps.db, hook.lastFailureReason === null ? [] : [hook.id]),
  ]);
  const page = toPage(attempts, ATTEMPTS_PAGE, (r) => [r.row.at, r.row.id], (r) => r.view, deps.cursors, filters);
  return c.html(
    <Layout title={titleOf(hook)} session={c.var.session} project={project} section="webhooks">
      <p>
        <a href={projectPath(project, "webhooks")}>All subscriptions</a>
      </p>
      <h1 class="prewrap">{titleOf(hook)}</h1>
      <Notice text={extras.notice} />
      {extras.secret ? (
        <ShownOnce label={extras.secret.label} value={extras.secret.value} note="Copy it now: it is not shown again, not even when this page is reloaded. Receivers check each delivery's signature with it." />
      ) : null}
      {extras.ping ? <PingOutcome ping={extras.ping} /> : null}
      <div class="hook-top">
        <Properties hook={hook} names={names} failure={failures.get(hook.id)} />
        <Actions c={c} hook={hook} extras={extras} />
      </div>
      <EditSection c={c} hook={hook} extras={extras} />
      <FilterEditor c={c} action={`${base}/filter`} values={extras.filter?.values ?? valuesOf(hook, names)} custom={custom} errors={extras.filter?.errors} />
      <Waiting hook={hook} rows={waiting.rows} count={waiting.count} />
      <Attempts base={base} hook={hook} rows={page.data} cursor={cursor} next={page.pagination.nextCursor} />
    </Layout>,
    status,
  );
}
