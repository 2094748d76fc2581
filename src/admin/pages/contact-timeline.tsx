import type { FC } from "hono/jsx";
import { readHistory } from "../../changes/service.ts";
import type { ChangeRecord } from "../../changes/schemas.ts";
import { formatContactId } from "../../contacts/service.ts";
import { submissionsOfContact, type ContactSubmission } from "../../forms/contact-submissions.ts";
import { listLogs } from "../../interactions/repository.ts";
import { toLog } from "../../interactions/service.ts";
import type { InteractionLog } from "../../interactions/schemas.ts";
import type { CursorCodec } from "../../lib/cursor.ts";
import type { Db } from "../../storage/schema.ts";
import { Time } from "../ui.tsx";
import { shownValue } from "./contact-common.ts";
import { actorNames, Change, fieldName } from "./contact-history.tsx";
import { mergesAt, type MergeInfo } from "./merge-timeline.tsx";

/**
 * A contact's timeline (docs/admin.md §3): its interaction logs of every type,
 * its change history (docs/api.md §19.2, merges included, §20.4), and the web-form
 * submissions that created or updated it (docs/api.md §15.2), in one list, newest first,
 * each entry saying what kind it is. Read from the stores the API reads, never over HTTP,
 * so a contact in the trash (its logs unlisted by the API, docs/api.md §19.3) shows its
 * timeline too.
 */

/** Entries of each kind read per page: a page shows at least this many, at most three times as many. */
export const TIMELINE_PAGE = 20;
/** A source's cursor once all of it is shown. */
const DONE = "end";

export type Entry =
  | { kind: "submission"; at: number; submission: ContactSubmission }
  | { kind: "log"; at: number; log: InteractionLog }
  | { kind: "change"; at: number; record: ChangeRecord };

/** One page of the timeline, who made its changes by name, and the query of the next (older) page, if any. */
export interface TimelinePage {
  entries: Entry[];
  actors: Map<string, string>;
  older: URLSearchParams | null;
  /** This page is not the first: it links back to the newest entries. */
  later: boolean;
  /** The merges of the page's "merged" records, by their time in ms (docs/api.md §20.4), and the time they are judged at. */
  merges: Map<number, MergeInfo>;
  now: string;
}

/** Where a page starts, one query parameter per source: `cursor` (interaction logs), `changes`, `forms`; "end" when done. */
export type TimelineQuery = Partial<Record<(typeof PARAMS)[number], string>>;
/** The sources' query parameters, in the order entries of the same instant are listed. */
export const PARAMS = ["forms", "cursor", "changes"] as const;

/** A page of one source from its cursor (undefined: its newest), newest first, and the cursor after its last entry. */
type Read = (limit: number, at: string | undefined) => Promise<{ entries: Entry[]; nextCursor: string | null }>;

/** The three sources of contact `contact` (its row id and number), each with cursors of its own. */
function sourcesOf(db: Db, cursors: CursorCodec, contact: { id: number; contactNumber: number }): Record<(typeof PARAMS)[number], Read> {
  const contactId = formatContactId(contact.contactNumber);
  const logsBound = { timeline: "logs", contact: contact.id };
  const formsBound = { timeline: "forms", contact: contact.id };
  return {
    cursor: async (limit, at) => {
      const after = at ? (cursors.decode(at, logsBound) as [string, string]) : undefined;
      const rows = await listLogs(db, contact.id, { after }, limit);
      const kept = rows.slice(0, limit);
      return {
        entries: kept.map((row) => ({ kind: "log", at: Date.parse(row.date), log: toLog(row, contactId) })),
        nextCursor: rows.length > limit ? cursors.encode([kept.at(-1)!.date, kept.at(-1)!.id], logsBound) : null,
      };
    },
    changes: async (limit, at) => {
      const page = await readHistory(db, cursors, contact.id, { limit, cursor: at });
      return { entries: page.data.map((record) => ({ kind: "change", at: Date.parse(record.at), record })), nextCursor: page.pagination.nextCursor };
    },
    forms: async (limit, at) => {
      const after = at ? (cursors.decode(at, formsBound) as [string, string]) : undefined;
      const rows = await submissionsOfContact(db, contact.id, limit, after);
      const kept = rows.slice(0, limit);
      return {
        entries: kept.map((submission) => ({ kind: "submission", at: Date.parse(submission.submittedAt), submission })),
        nextCursor: rows.length > limit ? cursors.encode([kept.at(-1)!.submittedAt, kept.at(-1)!.id], formsBound) : null,
      };
    },
  };
}

/**
 * A page of the merged timeline. Every source is read newest first, a page of each; the
 * page keeps what is not older than the oldest entry of a source that has more (older
 * entries of that source could come between), and each source's next cursor points after
 * the last entry the page kept of it (read again to that length when it kept part of its page).
 */
export async function readTimeline(db: Db, cursors: CursorCodec, projectId: string, contact: { id: number; contactNumber: number }, query: TimelineQuery, now: string): Promise<TimelinePage> {
  const sources = sourcesOf(db, cursors, contact);
  const starts = PARAMS.map((p) => query[p] || undefined);
  const pages = await Promise.all(
    PARAMS.map((p, i) => (starts[i] === DONE ? Promise.resolve({ entries: [] as Entry[], nextCursor: null }) : sources[p](TIMELINE_PAGE, starts[i]))),
  );
  const floor = Math.max(...pages.map((page) => (page.nextCursor !== null ? Math.min(...page.entries.map((e) => e.at)) : -Infinity)));
  const order = (e: Entry) => PARAMS.indexOf(e.kind === "submission" ? "forms" : e.kind === "log" ? "cursor" : "changes");
  const kept = pages
    .flatMap((page) => page.entries)
    .filter((e) => e.at >= floor)
    .sort((a, b) => b.at - a.at || order(a) - order(b));
  const next = await Promise.all(
    PARAMS.map(async (p, i) => {
      const page = pages[i]!;
      const shown = kept.filter((e) => order(e) === i).length;
      if (shown === page.entries.length) return page.nextCursor ?? DONE;
      if (shown === 0) return starts[i];
      return (await sources[p](shown, starts[i])).nextCursor ?? DONE;
    }),
  );
  let older: URLSearchParams | null = null;
  if (next.some((n) => n !== DONE)) {
    older = new URLSearchParams();
    PARAMS.forEach((p, i) => next[i] && older!.set(p, next[i]!));
  }
  const records = kept.flatMap((e) => (e.kind === "change" ? [e.record] : []));
  const mergedAt = kept.flatMap((e) => (e.kind === "change" && e.record.action === "merged" ? [e.at] : []));
  const [actors, merges] = await Promise.all([actorNames(db, projectId, records), mergesAt(db, contact.id, mergedAt)]);
  return { entries: kept, actors, older, later: starts.some((at) => at !== undefined), merges, now };
}

/** A flat map of names to values as a definition list, names through `name`; values whole (the timeline is the only place they show). */
const Values: FC<{ values: Record<string, unknown>; name: (key: string) => string }> = ({ values, name }) =>
  Object.keys(values).length > 0 ? (
    <dl class="props">
      {Object.entries(values).map(([k, v]) => (
        <>
          <dt>{name(k)}</dt>
          <dd>{v === null || v === undefined || v === "" ? <span class="none">—</span> : shownValue(v)}</dd>
        </>
      ))}
    </dl>
  ) : null;

const Log: FC<{ log: InteractionLog }> = ({ log }) => (
  <li class={log.interactionType.id === "note" ? "entry note" : "entry interaction"}>
    <p class="meta">
      <Time at={log.date} /> · <span class="kind">Interaction:</span> <strong>{log.interactionType.name}</strong>
    </p>
    {log.note ? <p class="prewrap">{log.note}</p> : null}
    <Values values={log.fields} name={(k) => k} />
  </li>
);

/** A submission's values by the form's field names: contact fields by their labels, custom fields by title. */
const Submission: FC<{ submission: ContactSubmission; customTitles: Map<string, string> }> = ({ submission, customTitles }) => (
  <li class="entry submission">
    <p class="meta">
      <Time at={submission.submittedAt} /> · <span class="kind">Form submission:</span> <strong>{submission.formName ?? submission.formId}</strong>
    </p>
    <Values values={submission.values} name={(k) => (customTitles.has(k) ? customTitles.get(k)! : fieldName(k, customTitles))} />
  </li>
);

/** The timeline's list and its link to older entries; `here` is the contact page's path. */
export const TimelineList: FC<{ page: TimelinePage; here: string; customTitles: Map<string, string> }> = ({ page, here, customTitles }) => (
  <>
    {page.entries.length === 0 ? (
      <p class="none">Nothing on the timeline yet.</p>
    ) : (
      <ol class="timeline" aria-label="Timeline, newest first">
        {page.entries.map((e) =>
          e.kind === "log" ? (
            <Log log={e.log} />
          ) : e.kind === "submission" ? (
            <Submission submission={e.submission} customTitles={customTitles} />
          ) : (
            <Change record={e.record} names={page.actors} customTitles={customTitles} merge={e.record.action === "merged" ? page.merges.get(e.at) : undefined} here={here} now={page.now} />
          ),
        )}
      </ol>
    )}
    {page.older || page.later ? (
      <nav class="pager" aria-label="Timeline pages">
        {page.later ? <a href={`${here}#timeline`}>Newest entries</a> : null}
        {page.older ? <a href={`${here}?${page.older}#timeline`}>Older entries</a> : null}
      </nav>
    ) : null}
  </>
);
