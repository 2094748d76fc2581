import type { FC } from "hono/jsx";
import type { DailyCreations } from "../home/activity.ts";
import type { SubscriptionHealth } from "../home/webhook-health.ts";
import { BarChart, Legend, type Series } from "../chart.tsx";

/** The home page's charts with their text (docs/admin.md §3, Home): a sentence, and the figures in a table under "Per day" / "Per hour". */

const n = (v: number) => v.toLocaleString("en");

/** "12 new contacts in the last 30 days; the busiest day was 2026-11-20, with 5." */
export function dailySentence(days: string[], counts: number[], noun: [one: string, many: string]): string {
  const total = counts.reduce((s, v) => s + v, 0);
  if (total === 0) return `No ${noun[1]} in the last ${days.length} days.`;
  let busiest = 0;
  counts.forEach((v, i) => (v >= counts[busiest]! ? (busiest = i) : null));
  return `${n(total)} ${total === 1 ? noun[0] : noun[1]} in the last ${days.length} days; the busiest day was ${days[busiest]}, with ${n(counts[busiest]!)}.`;
}

/** A 30-day chart of one series, its sentence and its per-day table. */
export const DailyChart: FC<{ id: string; heading: string; daily: DailyCreations; counts: number[]; noun: [string, string]; fill: string }> = (p) => {
  const sentence = dailySentence(p.daily.days, p.counts, p.noun);
  return (
    <section class="card" aria-labelledby={`${p.id}-h`}>
      <h2 id={`${p.id}-h`}>{p.heading}</h2>
      <figure class="chart-box">
        <BarChart
          id={p.id}
          title={`${p.heading}, ${p.daily.days[0]} to ${p.daily.days.at(-1)} (UTC)`}
          description={sentence}
          bars={p.daily.days.map((day, i) => ({ label: day, values: [p.counts[i]!] }))}
          series={[{ name: p.noun[1], fill: p.fill }]}
        />
        <div class="chart-axis" aria-hidden="true">
          <span>{p.daily.days[0]}</span>
          <span>today</span>
        </div>
        <figcaption>{sentence}</figcaption>
      </figure>
      <details>
        <summary>Per day</summary>
        <table class="figures" aria-label={`${p.heading}: per day`}>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">{p.noun[1][0]!.toUpperCase() + p.noun[1].slice(1)}</th>
            </tr>
          </thead>
          <tbody>
            {p.daily.days.map((day, i) => (
              <tr>
                <th scope="row">{day}</th>
                <td class="num">{n(p.counts[i]!)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
};

export const HEALTH_SERIES: Series[] = [
  { name: "delivered", fill: "#137333" },
  { name: "failed", fill: "#b3261e" },
];

/** "In the last 24 hours: 12 delivered, 3 failed attempts; 1 pending now." */
export function healthSentence(s: SubscriptionHealth, pendingCap: number): string {
  const pending = s.pending > pendingCap ? `more than ${n(pendingCap)}` : n(s.pending);
  return `In the last 24 hours: ${n(s.delivered)} delivered, ${n(s.failed)} failed ${s.failed === 1 ? "attempt" : "attempts"}; ${pending} pending now.`;
}

/** A subscription's 24 hourly bars (delivered under failed), and the hours that had attempts as a table. */
export const HourlyChart: FC<{ s: SubscriptionHealth; sentence: string }> = ({ s, sentence }) => {
  const busy = s.hours.filter((h) => h.delivered + h.failed > 0);
  return (
    <>
      <figure class="chart-box">
        <BarChart
          id={`health-${s.id}`}
          title={`Attempts per hour, last 24 hours (UTC)`}
          description={sentence}
          bars={s.hours.map((h) => ({ label: `${h.hour.replace("T", " ")}:00 UTC`, values: [h.delivered, h.failed] }))}
          series={HEALTH_SERIES}
          height={40}
        />
        <Legend series={HEALTH_SERIES} />
      </figure>
      {busy.length === 0 ? (
        <p class="hint">No attempts in the last 24 hours.</p>
      ) : (
        <details>
          <summary>Per hour</summary>
          <table class="figures">
            <thead>
              <tr>
                <th scope="col">Hour (UTC)</th>
                <th scope="col">Delivered</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {busy.map((h) => (
                <tr>
                  <th scope="row">{`${h.hour.replace("T", " ")}:00`}</th>
                  <td class="num">{n(h.delivered)}</td>
                  <td class="num">{n(h.failed)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </>
  );
};
