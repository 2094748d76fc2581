import { sql } from "kysely";
import type { Db } from "../../storage/schema.ts";
import { feedPosition } from "../../changes/repository.ts";

const DAY_MS = 86_400_000;
/** How far before the window the scan starts: a change's `at` is taken before its seq, so the two can disagree by a unit's length. */
const MARGIN_MS = 3_600_000;
/** A day's counts are final this long after its end: by then every write that took its time on that day has its seq. */
const SETTLE_MS = 5 * 60_000;
/** Projects whose finished days are remembered (the most recently viewed). */
const MAX_PROJECTS = 1000;

/** New contacts and new interaction logs per UTC day, oldest first, the last day being today (docs/admin.md §3, Home). */
export interface DailyCreations {
  /** YYYY-MM-DD, one per day, every day of the window. */
  days: string[];
  contacts: number[];
  interactions: number[];
}

/** The `days` UTC days ending today, as YYYY-MM-DD. */
export function utcDays(now: number, days: number): string[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

/**
 * Per project, the counts [contacts, interactions] of days that are over: they never change
 * again (records are appended at the time of their write and erasure keeps their action and
 * time, docs/api.md §19.4), so each is read once per process and a view reads only the days
 * since its last one, today at least.
 */
const finished = new Map<string, Map<string, [number, number]>>();

/**
 * Counted from the change log (docs/api.md §19.1: kept 90 days), whose "created" records
 * are every contact and interaction log made, whoever made it: interaction logs have no
 * index by project and time, the log's primary key (project_id, seq) has. A contact
 * created and later deleted still counts on the day it was created.
 */
export async function dailyCreations(db: Db, projectId: string, now: number, days = 30): Promise<DailyCreations> {
  const dayList = utcDays(now, days);
  const known = finished.get(projectId) ?? new Map<string, [number, number]>();
  const firstUnknown = Math.max(0, dayList.findIndex((d) => !known.has(d)));
  const counted = await createdPerDay(db, projectId, `${dayList[firstUnknown]}T00:00:00.000Z`);
  const contacts: number[] = [];
  const interactions: number[] = [];
  dayList.forEach((day, i) => {
    const value = i < firstUnknown ? known.get(day)! : (counted.get(day) ?? [0, 0]);
    if (i >= firstUnknown && Date.parse(`${day}T00:00:00.000Z`) + DAY_MS + SETTLE_MS <= now) known.set(day, value);
    contacts.push(value[0]);
    interactions.push(value[1]);
  });
  for (const day of known.keys()) if (day < dayList[0]!) known.delete(day);
  finished.delete(projectId);
  finished.set(projectId, known);
  if (finished.size > MAX_PROJECTS) finished.delete(finished.keys().next().value!);
  return { days: dayList, contacts, interactions };
}

/**
 * The "created" records since `since`, per UTC day: [contacts, interaction logs]. The first
 * seq of the window is found by bisecting seqs (a few primary-key probes); then only the
 * window's records are read. `action = 'created'` is written as a literal, so an index
 * limited to creations (WHERE action = 'created') would serve it.
 */
async function createdPerDay(db: Db, projectId: string, since: string): Promise<Map<string, [number, number]>> {
  const perDay = new Map<string, [number, number]>();
  const from = await firstSeqSince(db, projectId, new Date(Date.parse(since) - MARGIN_MS).toISOString());
  if (from === null) return perDay;
  const rows = await db
    .selectFrom("changes")
    .select([sql<string>`substr(at, 1, 10)`.as("day"), "object", (eb) => eb.fn.countAll<number>().as("n")])
    .where("project_id", "=", projectId)
    .where("seq", ">=", from)
    .where("at", ">=", since)
    .where("action", "=", sql.lit("created"))
    .groupBy([sql`substr(at, 1, 10)`, "object"])
    .execute();
  for (const r of rows) {
    const counts = perDay.get(r.day) ?? [0, 0];
    counts[r.object === "contact" ? 0 : 1] += Number(r.n);
    perDay.set(r.day, counts);
  }
  return perDay;
}

/** The first seq of the project's change log whose record is at or after `since`; null when none is. */
async function firstSeqSince(db: Db, projectId: string, since: string): Promise<number | null> {
  const { lastSeq, prunedThrough } = await feedPosition(db, projectId);
  const firstFrom = (seq: number) =>
    db.selectFrom("changes").select(["seq", "at"]).where("project_id", "=", projectId).where("seq", ">=", seq).orderBy("seq").limit(1).executeTakeFirst();
  // Bisect [lo, hi): records below lo are before `since`; the one at hi (if any) is not.
  let lo = prunedThrough + 1;
  let hi = lastSeq + 1;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const row = await firstFrom(mid);
    if (!row || row.at >= since) hi = mid;
    else lo = Number(row.seq) + 1;
  }
  return lo > lastSeq ? null : lo;
}
