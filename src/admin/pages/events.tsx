import { Hono, type Context } from "hono";
import { z } from "zod";
import { EVENT_TYPES, retainedSince } from "../../events/catalog.ts";
import { listEventLog } from "../../events/repository.ts";
import { validationFailure } from "../../http/validation.ts";
import { cursorParam, limitParam, toPage } from "../../lib/pagination.ts";
import { isoTimeSchema, toIso } from "../../lib/time.ts";
import { formErrors } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { asUtc } from "../security.ts";
import { ErrorSummary, Field, Layout, projectPath, Select, Time, type FormErrors } from "../ui.tsx";

/** Events of a project (docs/admin.md §3): the event log of the last 30 days, newest first, by type and time. */
export const eventPages = new Hono<AdminEnv>();


/** The page's query; times and messages as the API's (src/lib/time.ts, src/http/validation.ts). */
const EventLogQuery = z.object({
  type: z.enum(EVENT_TYPES).optional(),
  since: isoTimeSchema.optional(),
  until: isoTimeSchema.optional(),
  limit: limitParam,
  cursor: cursorParam,
});

type Filters = Partial<Record<"type" | "since" | "until" | "limit", string>>;

/** The query's fields as sent; blank ones (and "All") are not filters. */
function readQuery(c: Context<AdminEnv>): Filters & { cursor?: string } {
  const out: Record<string, string> = {};
  for (const key of ["type", "since", "until", "limit", "cursor"]) {
    const value = c.req.query(key)?.trim();
    if (value && !(key === "type" && value === "all")) out[key] = value;
  }
  return out;
}

/** An ISO time → the value a datetime-local field shows (UTC, to the second when it has seconds). */
function localValue(value: string | undefined): string | undefined {
  const iso = value && toIso(asUtc(value));
  if (!iso) return value;
  return iso.endsWith(":00.000Z") ? iso.slice(0, 16) : iso.slice(0, 19);
}

interface EventRow {
  id: string;
  type: string;
  created_at: string;
  body: string;
}

/** What an event is about, linked when it is a contact of the project. */
function subjectOf(c: Context<AdminEnv>, data: any) {
  const contactId: unknown = data?.contact?.contactId;
  const link = typeof contactId === "string" ? <a href={`${projectPath(c.var.project, "contacts")}/${encodeURIComponent(contactId)}`}>{contactId}</a> : null;
  if (data?.form?.name) return <>Form “{String(data.form.name)}”{link ? <>, contact {link}</> : null}</>;
  return link ? <>Contact {link}</> : null;
}

const EventsPage = (p: { c: Context<AdminEnv>; query: Filters; rows: EventRow[]; next?: string | null; errors?: FormErrors }) => {
  const { c, query } = p;
  const base = projectPath(c.var.project, "events");
  const ids = { type: "f-type", since: "f-since", until: "f-until" };
  return (
    <Layout title="Events" session={c.var.session} project={c.var.project} section="events">
      <h1>Events</h1>
      <p class="hint">What happened in this project in the last 30 days, newest first. Times are UTC.</p>
      <ErrorSummary errors={p.errors} ids={ids} />
      <form method="get" action={base} class="card" aria-label="Event filters">
        <div class="row">
          <Select label="Type" name="type" value={query.type ?? "all"} options={[["all", "All"], ...EVENT_TYPES.map((t): [string, string] => [t, t])]} error={p.errors?.fields.type} />
          <Field label="Since (UTC)" name="since" type="datetime-local" value={localValue(query.since)} error={p.errors?.fields.since} />
          <Field label="Until (UTC)" name="until" type="datetime-local" value={localValue(query.until)} error={p.errors?.fields.until} />
        </div>
        {query.limit ? <input type="hidden" name="limit" value={query.limit} /> : null}
        <button type="submit">Filter</button>
      </form>
      {p.errors ? null : p.rows.length === 0 ? (
        <p>No events match.</p>
      ) : (
        <ol class="timeline" aria-label="Events, newest first">
          {p.rows.map((row) => {
            const event = JSON.parse(row.body);
            const subject = subjectOf(c, event.data);
            return (
              <li>
                <p class="meta">
                  <Time at={row.created_at} /> · <span class="mono">{row.id}</span>
                </p>
                <p>
                  <strong>{row.type}</strong>
                  {subject ? <> — {subject}</> : null}
                </p>
                <details>
                  <summary>Payload</summary>
                  <pre>{JSON.stringify(event, null, 2)}</pre>
                </details>
              </li>
            );
          })}
        </ol>
      )}
      {p.next ? (
        <nav class="pager" aria-label="Pages">
          <a href={`${base}?${new URLSearchParams({ ...query, cursor: p.next })}`}>Next page</a>
        </nav>
      ) : null}
    </Layout>
  );
};

eventPages.get("/", async (c) => {
  const { cursor, ...query } = readQuery(c);
  const parsed = EventLogQuery.safeParse({ ...query, since: asUtc(query.since), until: asUtc(query.until), cursor });
  if (!parsed.success) {
    const errors = formErrors(validationFailure(parsed.error, { input: query, target: "query" }));
    return c.html(<EventsPage c={c} query={query} rows={[]} errors={errors} />, 422);
  }
  const { type, limit } = parsed.data;
  const since = parsed.data.since ? toIso(parsed.data.since)! : undefined;
  const until = parsed.data.until ? toIso(parsed.data.until)! : undefined;
  const { cursors, db, clock } = c.var.deps;
  // Bound to the filters as given, so a page reached with one filter cannot be continued with another (docs/api.md §11).
  const bound = { eventLog: [type ?? null, since ?? null, until ?? null] };
  let before: [string, string] | undefined;
  try {
    before = cursor ? (cursors.decode(cursor, bound) as [string, string]) : undefined;
  } catch (error) {
    return c.html(<EventsPage c={c} query={query} rows={[]} errors={formErrors(error)} />, 422);
  }
  const oldest = retainedSince(clock.now());
  const from = since && since > oldest ? since : oldest;
  const rows = await listEventLog(db, c.var.project.id, { type, since: from, until }, limit, before);
  const page = toPage(rows, limit, (r) => [r.created_at, r.id], (r) => r, cursors, bound);
  return c.html(<EventsPage c={c} query={query} rows={page.data} next={page.pagination.nextCursor} />);
});
