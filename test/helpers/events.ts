/**
 * Reads a project's event log (GET /events, docs/api.md §14) across every page, so tests ask
 * "which events exist" of the service itself instead of waiting a fixed time.
 */
import type { Api } from "./server.ts";
import { until } from "./until.ts";

export interface EventRecord {
  id: string;
  event: string;
  createdAt: string;
  data: any;
  [k: string]: unknown;
}

/** Every event since `since` (default: the retention window's start), oldest first. */
export async function readEvents(api: Api, query: { since?: string; type?: string } = {}, key?: string): Promise<EventRecord[]> {
  const since = query.since ?? new Date(Date.now() - 29 * 86_400_000).toISOString();
  const out: EventRecord[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const q: Record<string, string | number> = { since, limit: 200 };
    if (cursor) q.cursor = cursor;
    const res = await api("GET", "/events", { query: q, key });
    if (res.status !== 200) throw new Error(`GET /events: ${res.status} ${res.text.slice(0, 300)}`);
    out.push(...(res.json.data as EventRecord[]));
    if (!res.json.pagination.hasMore) break;
    cursor = res.json.pagination.nextCursor;
  }
  return query.type ? out.filter((e) => e.event === query.type) : out;
}

/** Waits until the event log holds an event matching `pred`; returns it. */
export function untilEvent(api: Api, pred: (e: EventRecord) => boolean, opts: { since?: string; timeoutMs?: number; what?: string } = {}) {
  return until(async () => (await readEvents(api, { since: opts.since })).find(pred), {
    timeoutMs: opts.timeoutMs,
    what: opts.what ?? "an event",
  });
}
