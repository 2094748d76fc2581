import { sql } from "kysely";
import type { Db } from "../../storage/schema.ts";
import { feedPosition } from "../../changes/repository.ts";

const DAY_MS = 86_400_000;
/** How far before the window the scan starts: a change's `at` is taken before its seq, so the two can disagree by a unit's length. */
const MARGIN_MS = 3_600_000;

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
 * Counted from the change log (docs/api.md §19.1: kept 90 days), whose "created" records
 * are every contact and interaction log made, whoever made it: the logs have no index by
 * project and time, the log's primary key (project_id, seq) has. The window's first seq
 * is found by bisecting seqs (a few primary-key probes), then only the window's records
 * are read. A contact created and later deleted still counts on the day it was created.
 */
export async function dailyCreations(db: Db, projectId: string, now: number, days = 30): Promise<DailyCreations> {
  const dayList = utcDays(now, days);
  const start = `${dayList[0]}T00:00:00.000Z`;
  const contacts = new Array<number>(days).fill(0);
  const interactions = new Array<number>(days).fill(0);
  const from = await firstSeqSince(db, projectId, new Date(Date.parse(start) - MARGIN_MS).toISOString());
  if (from === null) return { days: dayList, contacts, interactions };
  const rows = await db
    .selectFrom("changes")
    .select([sql<string>`substr(at, 1, 10)`.as("day"), "object", (eb) => eb.fn.countAll<number>().as("n")])
    .where("project_id", "=", projectId)
    .where("seq", ">=", from)
    .where("at", ">=", start)
    .where("action", "=", "created")
    .groupBy([sql`substr(at, 1, 10)`, "object"])
    .execute();
  const index = new Map(dayList.map((d, i) => [d, i]));
  for (const r of rows) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    if (r.object === "contact") contacts[i]! += Number(r.n);
    else if (r.object === "interaction_log") interactions[i]! += Number(r.n);
  }
  return { days: dayList, contacts, interactions };
}

/** The first seq of the project's change log whose record is at or after `since`; null when none is. */
async function firstSeqSince(db: Db, projectId: string, since: string): Promise<number | null> {
  const { lastSeq, prunedThrough } = await feedPosition(db, projectId);
  const at = async (seq: number) =>
    db.selectFrom("changes").select(["seq", "at"]).where("project_id", "=", projectId).where("seq", ">=", seq).orderBy("seq").limit(1).executeTakeFirst();
  // Bisect [lo, hi): seqs below lo are before `since`; hi is at or after it (or past the end).
  let lo = prunedThrough + 1;
  let hi = lastSeq + 1;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const row = await at(mid);
    if (!row || row.at >= since) hi = mid;
    else lo = Number(row.seq) + 1;
  }
  return lo > lastSeq ? null : lo;
}
