import type { FC } from "hono/jsx";
import { readHistory } from "../../changes/service.ts";
import type { ChangeRecord } from "../../changes/schemas.ts";
import { findContactIdentity } from "../../contacts/repository.ts";
import { notFound } from "../../errors.ts";
import type { InteractionLog } from "../../interactions/schemas.ts";
import { listInteractions } from "../../interactions/service.ts";
import type { CursorCodec } from "../../lib/cursor.ts";
import type { Db } from "../../storage/schema.ts";
import { Time } from "../ui.tsx";
import { shownValue } from "./contact-common.ts";
import { mergesAt, MergeStatus, type MergeInfo } from "./merge-timeline.tsx";

/**
 * The contact's timeline (docs/admin.md §3, docs/api.md §19: "the console's contact timeline
 * shows the change history beside the interactions"): its interaction logs and its change
 * records in one list, newest first, each change with its action, who made it, when, and
 * for an update the fields with their former and new values. Read through the services
 * (listInteractions, readHistory), never over HTTP. A merge's record carries "Undo merge"
 * while it can be undone (docs/api.md §20.4).
 */

/** Entries of each kind read per page: a page shows at least this many, at most twice as many. */
export const TIMELINE_PAGE = 20;
/** Longest value a change shows; longer ones end in "…" (the contact's fields above show them whole). */
const MAX_VALUE = 120;
/** A source's cursor once all of it is shown. */
const DONE = "end";

type Entry = { kind: "log"; at: number; log: InteractionLog } | { kind: "change"; at: number; record: ChangeRecord };

/** One page of the timeline, who made its changes by name, and the query of the next (older) page, if any. */
export interface TimelinePage {
  entries: Entry[];
  actors: Map<string, string>;
  older: URLSearchParams | null;
  /** The merges of the page's "merged" records, by their time in ms (docs/api.md §20.4), and the time they are judged at. */
  merges: Map<number, MergeInfo>;
  now: string;
}

/** Where a page starts: `cursor` for the interaction logs (as before the merge), `changes` for the change records; "end" when done. */
export interface TimelineQuery {
  cursor?: string;
  changes?: string;
}

type Read<T> = (limit: number) => Promise<{ data: T[]; pagination: { nextCursor: string | null } }>;

/** One source of the timeline from `at` (undefined: its newest; DONE: nothing left): a page of it, or none. */
async function pageOf<T>(read: Read<T>, at: string | undefined) {
  if (at === DONE) return { data: [] as T[], more: false, nextCursor: null };
  const page = await read(TIMELINE_PAGE);
  return { data: page.data, more: page.pagination.nextCursor !== null, nextCursor: page.pagination.nextCursor };
}

/** Where a source goes on from once `kept` of its page are shown: its page's cursor, DONE, where it was, or after the kept (read again to that length). */
async function nextOf<T>(read: Read<T>, at: string | undefined, page: { data: T[]; nextCursor: string | null }, kept: number): Promise<string | undefined> {
  if (kept === page.data.length) return page.nextCursor ?? DONE;
  if (kept === 0) return at;
  return (await read(kept)).pagination.nextCursor ?? DONE;
}

/**
 * A page of the merged timeline. Both sources are read newest first, a page of each; the
 * page keeps what is not older than the oldest entry of a source that has more (older
 * entries of the other source could come between), and each source's next cursor points
 * after the last entry the page kept of it.
 */
export async function readTimeline(db: Db, cursors: CursorCodec, projectId: string, contactNumber: number, query: TimelineQuery, now: string): Promise<TimelinePage> {
  const contact = await findContactIdentity(db, projectId, contactNumber);
  if (!contact) throw notFound("Contact");
  const logsAt = query.cursor || undefined;
  const changesAt = query.changes || undefined;
  const readLogs: Read<InteractionLog> = (limit) => listInteractions(db, cursors, projectId, contactNumber, { limit, cursor: logsAt });
  const readChanges: Read<ChangeRecord> = (limit) => readHistory(db, cursors, contact.id, { limit, cursor: changesAt });
  const [logs, changes] = await Promise.all([pageOf(readLogs, logsAt), pageOf(readChanges, changesAt)]);
  const entries: Entry[] = [
    ...logs.data.map((log): Entry => ({ kind: "log", at: Date.parse(log.date), log })),
    ...changes.data.map((record): Entry => ({ kind: "change", at: Date.parse(record.at), record })),
  ];
  const oldest = (page: { data: unknown[]; more: boolean }, kind: Entry["kind"]) =>
    page.more ? Math.min(...entries.filter((e) => e.kind === kind).map((e) => e.at)) : -Infinity;
  const floor = Math.max(oldest(logs, "log"), oldest(changes, "change"));
  const kept = entries.filter((e) => e.at >= floor).sort((a, b) => b.at - a.at || (a.kind === b.kind ? 0 : a.kind === "log" ? -1 : 1));
  const keptLogs = kept.filter((e) => e.kind === "log").length;
  const [nextLogs, nextChanges] = await Promise.all([nextOf(readLogs, logsAt, logs, keptLogs), nextOf(readChanges, changesAt, changes, kept.length - keptLogs)]);
  let older: URLSearchParams | null = null;
  if (nextLogs !== DONE || nextChanges !== DONE) {
    older = new URLSearchParams();
    if (nextLogs) older.set("cursor", nextLogs);
    if (nextChanges) older.set("changes", nextChanges);
  }
  const mergedAt = kept.flatMap((e) => (e.kind === "change" && e.record.action === "merged" ? [e.at] : []));
  const [actors, merges] = await Promise.all([actorNames(db, projectId, kept), mergesAt(db, contact.id, mergedAt)]);
  return { entries: kept, actors, older, merges, now };
}

/** The names of who made the page's changes, by `type:id`: a key's name, an admin's email, a form's name, an import's file. */
async function actorNames(db: Db, projectId: string, entries: Entry[]): Promise<Map<string, string>> {
  const ids = (type: string) => [...new Set(entries.flatMap((e) => (e.kind === "change" && e.record.actor?.type === type && e.record.actor.id ? [e.record.actor.id] : [])))];
  const [keys, admins, forms, imports] = [ids("api_key"), ids("admin"), ids("form"), ids("import")];
  const none = Promise.resolve([] as Array<{ id: string; name: string | null }>);
  const rows = await Promise.all([
    keys.length ? db.selectFrom("api_keys").select(["id", "name"]).where("project_id", "=", projectId).where("id", "in", keys).execute() : none,
    admins.length ? db.selectFrom("admins").select(["id", "email as name"]).where("id", "in", admins).execute() : none,
    forms.length ? db.selectFrom("forms").select(["id", "name"]).where("project_id", "=", projectId).where("id", "in", forms).execute() : none,
    imports.length ? db.selectFrom("admin_imports").select(["id", "file_name as name"]).where("project_id", "=", projectId).where("id", "in", imports).execute() : none,
  ]);
  const names = new Map<string, string>();
  ["api_key", "admin", "form", "import"].forEach((type, i) => {
    for (const row of rows[i]!) if (row.name) names.set(`${type}:${row.id}`, row.name);
  });
  return names;
}

const ACTIONS: Record<ChangeRecord["action"], string> = {
  created: "Contact created",
  updated: "Contact updated",
  deleted: "Moved to the trash",
  restored: "Restored from the trash",
  merged: "Merged",
  erased: "Erased",
};

const ACTOR_KINDS: Record<NonNullable<ChangeRecord["actor"]>["type"], string> = {
  api_key: "API key",
  admin: "admin",
  import: "import",
  form: "form",
  system: "the service",
};

/** Who made a change, as a person reads it: "Website integration (API key)", "ops@example.com (admin)", "the service". */
function actorText(actor: NonNullable<ChangeRecord["actor"]>, names: Map<string, string>): string {
  const kind = ACTOR_KINDS[actor.type] ?? actor.type;
  if (actor.type === "system") return kind;
  const name = actor.id ? (names.get(`${actor.type}:${actor.id}`) ?? actor.id) : null;
  return name ? `${name} (${kind})` : kind;
}

const FIELD_NAMES: Record<string, string> = {
  contactId: "Contact id",
  identityType: "Identity",
  source: "Source",
  firstName: "First name",
  lastName: "Last name",
  email: "Email",
  phone: "Phone",
  businessName: "Business name",
  website: "Website",
  contactType: "Contact type",
  subscribed: "Subscribed",
  smsSubscribed: "SMS subscribed",
  notes: "Notes",
  tags: "Tags",
  "address.line1": "Address line 1",
  "address.line2": "Address line 2",
  "address.city": "City",
  "address.state": "State",
  "address.zip": "ZIP / postal code",
  "address.country": "Country",
};

function fieldName(field: string, customTitles: Map<string, string>): string {
  if (field.startsWith("customFields.")) return customTitles.get(field.slice("customFields.".length)) ?? field.slice("customFields.".length);
  return FIELD_NAMES[field] ?? field;
}

/** A value as text, cut at MAX_VALUE characters: tags are names, a contact type its name. */
function valueText(value: unknown): string | null {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return null;
  const named = typeof value === "object" && !Array.isArray(value) && typeof (value as { name?: unknown }).name === "string" ? (value as { name: string }).name : value;
  const text = shownValue(named);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

const Shown: FC<{ value: unknown }> = ({ value }) => {
  const text = valueText(value);
  return text === null ? <span class="none">—</span> : <>{text}</>;
};

/** A change's fields: an update's from → to; a creation's values, folded (the contact's fields above show them as they are now). */
const Fields: FC<{ record: ChangeRecord; customTitles: Map<string, string> }> = ({ record, customTitles }) => {
  const created = record.action === "created";
  const list = (
    <dl class="props">
      {record.changes!.map((c) => (
        <>
          <dt>{fieldName(c.field, customTitles)}</dt>
          <dd>
            {created ? (
              <Shown value={c.to} />
            ) : (
              <>
                <Shown value={c.from} /> → <Shown value={c.to} />
              </>
            )}
          </dd>
        </>
      ))}
    </dl>
  );
  if (!created) return list;
  const n = record.changes!.length;
  return (
    <details>
      <summary>
        {n} field{n === 1 ? "" : "s"} set
      </summary>
      {list}
    </details>
  );
};

/** The contact a "deleted" record's contact was merged into (docs/api.md §20.2), if that is how it left. */
function mergedInto(record: ChangeRecord): string | null {
  const into = record.action === "deleted" ? record.changes?.find((c) => c.field === "mergedInto")?.to : undefined;
  return typeof into === "string" ? into : null;
}

interface ChangeProps {
  record: ChangeRecord;
  names: Map<string, string>;
  customTitles: Map<string, string>;
  merge?: MergeInfo;
  here: string;
  now: string;
}

const Change: FC<ChangeProps> = ({ record, names, customTitles, merge, here, now }) => (
  <li>
    <p class="meta">
      <Time at={record.at} /> · <strong>{mergedInto(record) ? `Merged into ${mergedInto(record)}` : (ACTIONS[record.action] ?? record.action)}</strong>
      {record.actor ? <> · by {actorText(record.actor, names)}</> : null}
    </p>
    {merge ? <MergeStatus merge={merge} here={here} now={now} /> : null}
    {record.changes && record.changes.length > 0 && !mergedInto(record) ? <Fields record={record} customTitles={customTitles} /> : null}
  </li>
);

const Log: FC<{ log: InteractionLog }> = ({ log }) => (
  <li>
    <p class="meta">
      <Time at={log.date} /> · {log.interactionType.name}
    </p>
    {log.note ? <p class="prewrap">{log.note}</p> : null}
    {Object.keys(log.fields).length > 0 ? (
      <dl class="props">
        {Object.entries(log.fields).map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
      </dl>
    ) : null}
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
          ) : (
            <Change record={e.record} names={page.actors} customTitles={customTitles} merge={e.record.action === "merged" ? page.merges.get(e.at) : undefined} here={here} now={page.now} />
          ),
        )}
      </ol>
    )}
    {page.older ? (
      <nav class="pager" aria-label="Timeline pages">
        <a href={`${here}?${page.older}#timeline`}>Older entries</a>
      </nav>
    ) : null}
  </>
);
