import { Hono, type Context } from "hono";
import type { FC } from "hono/jsx";
import { dailyCreations, type DailyCreations } from "../home/activity.ts";
import { latestChanges, type LatestChange } from "../home/latest-changes.ts";
import { contactTotals, type ContactTotals } from "../home/totals.ts";
import { PENDING_CAP, webhookHealth, type SubscriptionHealth } from "../home/webhook-health.ts";
import type { AdminEnv } from "../env.ts";
import { Layout, projectPath, TableWrap, Time } from "../ui.tsx";
import { displayName } from "./contact-common.ts";
import { DailyChart, healthSentence, HourlyChart } from "./home-charts.tsx";
import { StatusBadge, titleOf } from "./webhook-status.tsx";

/**
 * A project's home page (docs/admin.md §3): contacts in all and by category, new contacts
 * and interactions per UTC day over 30 days, each subscription's webhook health over 24
 * hours (disabled ones first), and the latest changes. Every figure comes from a bounded
 * read (src/admin/home/); the windows end at the service's clock.
 */
export const homePages = new Hono<AdminEnv>();

homePages.get("/", async (c) => {
  const { db, clock } = c.var.deps;
  const project = c.var.project;
  const now = clock.now();
  const [totals, daily, health, changes] = await Promise.all([
    contactTotals(db, project),
    dailyCreations(db, project.id, now),
    webhookHealth(db, project.id, now),
    latestChanges(db, project.id),
  ]);
  return c.html(<HomePage c={c} totals={totals} daily={daily} health={health} changes={changes} />);
});

const n = (v: number) => v.toLocaleString("en");

const HomePage: FC<{ c: Context<AdminEnv>; totals: ContactTotals; daily: DailyCreations; health: { subscriptions: SubscriptionHealth[]; more: boolean }; changes: LatestChange[] }> = (p) => {
  const project = p.c.var.project;
  return (
    <Layout title="Home" session={p.c.var.session} project={project} section="home">
      <h1>{project.name}</h1>
      <p class="home-meta">
        <span class="mono">{project.id}</span>
        <span>
          Created <Time at={project.createdAt} />
        </span>
        <a href={projectPath(project, "settings")}>Name, quota and limits</a>
      </p>
      <Totals c={p.c} totals={p.totals} />
      <div class="home-grid">
        <DailyChart id="new-contacts" heading="New contacts per day" daily={p.daily} counts={p.daily.contacts} noun={["new contact", "new contacts"]} fill="#0b57d0" />
        <DailyChart id="new-interactions" heading="New interactions per day" daily={p.daily} counts={p.daily.interactions} noun={["new interaction", "new interactions"]} fill="#6b3fa0" />
      </div>
      <WebhookHealth c={p.c} {...p.health} />
      <LatestChanges c={p.c} changes={p.changes} />
    </Layout>
  );
};

/** The totals; each category links to the contacts list filtered by it. */
const Totals: FC<{ c: Context<AdminEnv>; totals: ContactTotals }> = ({ c, totals }) => {
  const list = projectPath(c.var.project, "contacts");
  return (
    <section class="card" aria-labelledby="totals-h">
      <h2 id="totals-h">Contact totals</h2>
      <dl class="totals">
        <div class="all">
          <dt>All</dt>
          <dd>{n(totals.all)}</dd>
        </div>
        {totals.byCategory.map((t) => (
          <div>
            <dt>
              <a href={`${list}?contactTypeCategory=${t.category}`}>{t.category}</a>
            </dt>
            <dd>{n(t.count)}</dd>
          </div>
        ))}
        <div>
          <dt>No contact type</dt>
          <dd>{n(totals.untyped)}</dd>
        </div>
      </dl>
      <p class="hint">Deleted and merged-away contacts are not counted.</p>
    </section>
  );
};

const WebhookHealth: FC<{ c: Context<AdminEnv>; subscriptions: SubscriptionHealth[]; more: boolean }> = ({ c, subscriptions, more }) => {
  const hooks = projectPath(c.var.project, "webhooks");
  return (
    <section aria-labelledby="health-h">
      <h2 id="health-h">Webhook health, last 24 hours</h2>
      {subscriptions.length === 0 ? (
        <p class="card">
          No webhook subscriptions. <a href={hooks}>Add a subscription</a> to have events sent to your systems.
        </p>
      ) : (
        <ul class="health">
          {subscriptions.map((s) => {
            const sentence = healthSentence(s, PENDING_CAP);
            return (
              <li class={s.status === "disabled" ? "card disabled" : "card"}>
                <h3>
                  <a href={`${hooks}/${s.id}`}>{titleOf({ description: s.description ?? "", url: s.url })}</a> <StatusBadge hook={s} />
                </h3>
                <dl class="counts">
                  <div>
                    <dt>Delivered</dt>
                    <dd>{n(s.delivered)}</dd>
                  </div>
                  <div>
                    <dt>Failed</dt>
                    <dd>{n(s.failed)}</dd>
                  </div>
                  <div>
                    <dt>Pending</dt>
                    <dd>{s.pending > PENDING_CAP ? `> ${n(PENDING_CAP)}` : n(s.pending)}</dd>
                  </div>
                </dl>
                {(s.status === "disabled" || s.consecutiveFailures > 0) && s.lastFailureReason ? <p class="hint prewrap">Last failure: {s.lastFailureReason}</p> : null}
                <HourlyChart s={s} sentence={sentence} />
              </li>
            );
          })}
        </ul>
      )}
      {more ? <p class="hint">The first {subscriptions.length} subscriptions are shown; the Webhooks page lists them all.</p> : null}
    </section>
  );
};

/** What a change record did, in words. */
function kindOf(change: LatestChange): string {
  if (change.object === "interaction_log") {
    if (change.action === "created") return change.interactionType ? `Interaction logged: ${change.interactionType}` : "Interaction logged";
    return `Interaction ${change.action}`;
  }
  if (change.action !== "updated") return `Contact ${change.action}`;
  const shown = change.fields.slice(0, 4).join(", ");
  const rest = change.fields.length - 4;
  return change.fields.length === 0 ? "Contact updated" : `Updated ${shown}${rest > 0 ? ` and ${rest} more` : ""}`;
}

/** Who made a change (docs/api.md §19.1). */
function actorOf(change: LatestChange): string {
  const a = change.actor;
  if (!a) return "—";
  if (a.type === "api_key") return `API key ${change.actorName ?? a.id ?? ""}`.trim();
  if (a.type === "admin") return change.actorName ?? "An admin";
  return { import: "Import", form: "Form", system: "System" }[a.type] ?? a.type;
}

const LatestChanges: FC<{ c: Context<AdminEnv>; changes: LatestChange[] }> = ({ c, changes }) => {
  const contacts = projectPath(c.var.project, "contacts");
  return (
    <section class="latest" aria-labelledby="changes-h">
      <h2 id="changes-h">Latest changes</h2>
      {changes.length === 0 ? (
        <p class="card">No changes yet.</p>
      ) : (
        <TableWrap label="Latest changes">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Contact</th>
                <th scope="col">Change</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((change) => (
                <tr>
                  <td data-label="When">
                    <Time at={change.at} />
                  </td>
                  <td data-label="Contact">
                    {change.contact ? (
                      <>
                        <a href={`${contacts}/${encodeURIComponent(change.contact.contactId)}`}>{displayName(change.contact)}</a>
                        {displayName(change.contact) === change.contact.contactId ? null : <span class="mono"> {change.contact.contactId}</span>}
                        {change.contact.state === "live" ? null : <span class="none"> ({change.contact.state === "merged" ? "merged away" : "deleted"})</span>}
                      </>
                    ) : (
                      <span class="none">{change.object === "contact" ? `${change.objectId} (erased)` : "an erased contact"}</span>
                    )}
                  </td>
                  <td data-label="Change">{kindOf(change)}</td>
                  <td data-label="By">{actorOf(change)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
};
