import type { Context } from "hono";
import { toPage } from "../../lib/pagination.ts";
import { listAttempts, toWebhook } from "../../webhooks/repository.ts";
import type { Webhook } from "../../webhooks/schemas.ts";
import { requireWebhook } from "../../webhooks/service.ts";
import type { AdminEnv } from "../env.ts";
import { allCustomFields } from "../../reference/repository.ts";
import { ErrorSummary, Field, Layout, Notice, PostForm, projectPath, ShownOnce, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { FilterEditor, filterNames, FilterSummary, valuesOf, type FilterEdit, type FilterNames } from "./webhook-filter.tsx";

/**
 * A subscription's page (docs/webhooks.md §2, docs/admin.md §3): its health, its delivery attempts newest
 * first with their answers, and its actions (test ping, disable or enable, rotate the
 * secret, redeliver since a time, edit the filter and ordering: docs/webhooks.md §8;
 * src/admin/pages/webhook-actions.tsx).
 */

const ATTEMPTS_PAGE = 50;

/** A subscription is named by its description, or by its URL when it has none. */
export const titleOf = (hook: Pick<Webhook, "description" | "url">) => hook.description || hook.url;

export const StatusBadge = ({ status }: { status: Webhook["status"] }) =>
  status === "active" ? <span class="badge ok">Active</span> : <span class="badge bad">Disabled</span>;

/** What an action adds to the page it answers with. */
export interface PageExtras {
  notice?: string;
  /** A new signing secret, shown once (docs/webhooks.md §2). */
  secret?: { label: string; value: string };
  /** The test ping's outcome. */
  ping?: { delivered: boolean; statusCode: number | null; error: string | null };
  /** The redeliver form as sent, and what was wrong with it. */
  redeliver?: { since: string; errors: FormErrors };
  /** The filter editor as sent, and what was wrong with it. */
  filter?: FilterEdit;
}

const base = (c: Context<AdminEnv>, hook: { id: string }) => `${projectPath(c.var.project, "webhooks")}/${hook.id}`;

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

const Properties = ({ hook, names }: { hook: Webhook; names: FilterNames }) => (
  <dl class="props card">
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
    <dt>Status</dt>
    <dd>
      <StatusBadge status={hook.status} />
    </dd>
    <dt>Consecutive failures</dt>
    <dd>{hook.consecutiveFailures}</dd>
    <dt>Last success</dt>
    <dd>
      <Time at={hook.lastSuccessAt} />
    </dd>
    <dt>Last failure reason</dt>
    <dd>{hook.lastFailureReason ?? <span class="none">—</span>}</dd>
    <dt>Created</dt>
    <dd>
      <Time at={hook.createdAt} />
    </dd>
    <dt>Id</dt>
    <dd class="mono">{hook.id}</dd>
  </dl>
);

const Actions = ({ c, hook, extras }: { c: Context<AdminEnv>; hook: Webhook; extras: PageExtras }) => {
  const token = c.var.session.csrfToken;
  const errors = extras.redeliver?.errors;
  return (
    <section class="card" aria-labelledby="actions">
      <h2 id="actions">Actions</h2>
      <div class="actions">
        <PostForm action={`${base(c, hook)}/test`} token={token} class="inline">
          <button type="submit">Send test ping</button>
        </PostForm>
        <PostForm action={`${base(c, hook)}/status`} token={token} class="inline">
          <input type="hidden" name="status" value={hook.status === "active" ? "disabled" : "active"} />
          <button type="submit" class="secondary">
            {hook.status === "active" ? "Disable" : "Enable"}
          </button>
        </PostForm>
        <PostForm action={`${base(c, hook)}/rotate-secret`} token={token} class="inline">
          <button type="submit" class="secondary">
            Rotate secret
          </button>
        </PostForm>
      </div>
      <h3 id="redeliver">Redeliver</h3>
      <ErrorSummary errors={errors} ids={{ since: "f-since" }} />
      <PostForm action={`${base(c, hook)}/redeliver`} token={token} label="Redeliver">
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
    </section>
  );
};

type AttemptRow = Awaited<ReturnType<typeof listAttempts>>[number];

const Attempts = ({ c, hook, rows, cursor, next }: { c: Context<AdminEnv>; hook: Webhook; rows: AttemptRow[]; cursor?: string; next: string | null }) => (
  <section aria-labelledby="attempts">
    <h2 id="attempts">Attempts</h2>
    {rows.length === 0 ? (
      <p class="none">No delivery has been attempted yet.</p>
    ) : (
      <TableWrap label="Attempts, newest first">
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Status code</th>
              <th scope="col">Event</th>
              <th scope="col">Attempt</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
              <th scope="col">Answer</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((a) => (
              <tr>
                <td>
                  <Time at={a.at} />
                </td>
                <td class="num">{a.status_code ?? <span class="none">—</span>}</td>
                <td class="mono">{a.event_id}</td>
                <td class="num">{a.attempt}</td>
                <td class="num">{a.duration_ms} ms</td>
                <td>{a.error ?? <span class="none">—</span>}</td>
                <td>{a.response_snippet ? <code class="snippet">{a.response_snippet}</code> : <span class="none">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    )}
    {cursor || next ? (
      <nav class="pager" aria-label="Pages of attempts">
        {cursor ? <a href={base(c, hook)}>Newest attempts</a> : null}
        {next ? <a href={`${base(c, hook)}?cursor=${encodeURIComponent(next)}`}>Older attempts</a> : null}
      </nav>
    ) : null}
  </section>
);

/**
 * Renders subscription `id` of the project (404 page when unknown), with what an action
 * adds; the attempts' page comes from `?cursor=` on a GET.
 */
export async function subscriptionPage(c: Context<AdminEnv>, id: string, extras: PageExtras = {}, status: 200 | 409 | 422 = 200) {
  const { deps, project } = c.var;
  const hook = toWebhook(await requireWebhook(deps.db, project.id, id));
  const names = await filterNames(deps.db, project.id, [hook]);
  const custom = await allCustomFields(deps.db, project.id);
  const filters = { adminAttempts: hook.id };
  const cursor = c.req.method === "GET" ? c.req.query("cursor") || undefined : undefined;
  const after = cursor ? (deps.cursors.decode(cursor, filters) as [string, string]) : undefined;
  const page = toPage(await listAttempts(deps.db, hook.id, ATTEMPTS_PAGE, after), ATTEMPTS_PAGE, (r) => [r.at, r.id], (r) => r, deps.cursors, filters);
  return c.html(
    <Layout title={titleOf(hook)} session={c.var.session} project={project} section="webhooks">
      <p>
        <a href={projectPath(project, "webhooks")}>All subscriptions</a>
      </p>
      <h1 class="prewrap">{titleOf(hook)}</h1>
      <Notice text={extras.notice} />
      {extras.secret ? (
        <ShownOnce label={extras.secret.label} value={extras.secret.value} note="Copy it now: it is not shown again. Receivers check each delivery's signature with it." />
      ) : null}
      {extras.ping ? <PingOutcome ping={extras.ping} /> : null}
      <Properties hook={hook} names={names} />
      <Actions c={c} hook={hook} extras={extras} />
      <FilterEditor c={c} action={`${base(c, hook)}/filter`} values={extras.filter?.values ?? valuesOf(hook, names)} custom={custom} errors={extras.filter?.errors} />
      <Attempts c={c} hook={hook} rows={page.data} cursor={cursor} next={page.pagination.nextCursor} />
    </Layout>,
    status,
  );
}
