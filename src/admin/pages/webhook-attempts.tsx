import type { Context } from "hono";
import type { Webhook } from "../../webhooks/schemas.ts";
import type { AdminEnv } from "../env.ts";
import { TableWrap, Time } from "../ui.tsx";
import { WAITING_COUNT_CAP, type AttemptView, type WaitingDelivery } from "./webhook-health.ts";

/**
 * A subscription's attempts and waiting deliveries (docs/webhooks.md §4, docs/admin.md §3): each attempt
 * with the event it carried by name, its outcome in words (Delivered, Failed: never colour
 * alone) and what became of a failure (tried again, next try at, given up); then the
 * deliveries still to be sent, soonest first, with their next try.
 */

/** The event's name, its id under it (the name alone once the event is past retention is unknown: "—"). */
const EventCell = ({ type, id }: { type: string | null; id: string }) => (
  <td data-label="Event">
    {type ? <span class="event-name">{type}</span> : <span class="none">—</span>}
    <span class="mono none event-id">{id}</span>
  </td>
);

/** What happened after a failed attempt, from its delivery's state now. */
function afterFailure(a: AttemptView, hook: Webhook) {
  const d = a.delivery;
  if (!d) return null;
  if (d.attempts > a.attempt) return <span class="hint">Tried again</span>;
  if (d.status === "pending") {
    return hook.status === "active" ? (
      <span class="next-try">
        Next try <Time at={d.nextAttemptAt} />
      </span>
    ) : (
      <span class="hint">Next try when the subscription is enabled again</span>
    );
  }
  if (d.status === "in_flight") return <span class="hint">Being tried again</span>;
  if (d.status === "failed") return <span class="hint">No more tries</span>;
  return null;
}

const AttemptRow = ({ a, hook }: { a: AttemptView; hook: Webhook }) => {
  const failed = a.error !== null;
  return (
    <tr>
      <td data-label="Time">
        <Time at={a.at} />
      </td>
      <td data-label="Result" class="result">
        {failed ? <span class="badge bad">Failed</span> : <span class="badge ok">Delivered</span>} {failed ? afterFailure(a, hook) : null}
      </td>
      <td class="num" data-label="Status code">
        {a.statusCode ?? <span class="none">—</span>}
      </td>
      <EventCell type={a.eventType} id={a.eventId} />
      <td class="num" data-label="Attempt">
        {a.attempt}
      </td>
      <td class="num" data-label="Duration">
        {a.durationMs} ms
      </td>
      <td data-label="Error">{a.error ?? <span class="none">—</span>}</td>
      <td data-label="Answer">{a.snippet ? <code class="snippet">{a.snippet}</code> : <span class="none">—</span>}</td>
    </tr>
  );
};

export const Attempts = (p: { base: string; hook: Webhook; rows: AttemptView[]; cursor?: string; next: string | null }) => (
  <section aria-labelledby="attempts">
    <h2 id="attempts">Attempts</h2>
    {p.cursor ? <p class="hint">Older attempts, newest first.</p> : null}
    {p.rows.length === 0 ? (
      <p class="none">No delivery has been attempted yet.</p>
    ) : (
      <TableWrap label="Attempts, newest first">
        <table class="attempts paired">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Result</th>
              <th scope="col">Status code</th>
              <th scope="col">Event</th>
              <th scope="col">Attempt</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
              <th scope="col">Answer</th>
            </tr>
          </thead>
          <tbody>
            {p.rows.map((a) => (
              <AttemptRow a={a} hook={p.hook} />
            ))}
          </tbody>
        </table>
      </TableWrap>
    )}
    {p.cursor || p.next ? (
      <nav class="pager" aria-label="Pages of attempts">
        {p.cursor ? <a href={`${p.base}#attempts`}>Newest attempts</a> : null}
        {p.next ? <a href={`${p.base}?cursor=${encodeURIComponent(p.next)}#attempts`}>Older attempts</a> : null}
      </nav>
    ) : null}
  </section>
);

export const Waiting = ({ hook, rows, count }: { hook: Webhook; rows: WaitingDelivery[]; count: number }) => (
  <section aria-labelledby="waiting">
    <h2 id="waiting">Waiting deliveries</h2>
    {rows.length === 0 ? (
      <p class="none">None: every event queued for this subscription has been delivered or given up on.</p>
    ) : (
      <>
        <p class="hint">
          {count > WAITING_COUNT_CAP ? `More than ${WAITING_COUNT_CAP.toLocaleString("en")}` : count.toLocaleString("en")} waiting
          {count > rows.length ? `; the ${rows.length} due soonest are shown` : ""}.
          {hook.status === "active" ? "" : " They are held while the subscription is disabled, and tried again once it is enabled."}
        </p>
        <TableWrap label="Waiting deliveries, soonest first">
          <table class="paired">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Attempts so far</th>
                <th scope="col">Next try</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr>
                  <EventCell type={d.eventType} id={d.eventId} />
                  <td class="num" data-label="Attempts so far">
                    {d.attempts}
                  </td>
                  <td data-label="Next try">{hook.status === "active" ? <Time at={d.nextAttemptAt} /> : <span class="none">When enabled again</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      </>
    )}
  </section>
);
