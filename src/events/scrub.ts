import type { Db } from "../storage/schema.ts";

/**
 * Finding and scrubbing a contact's personal data in stored JSON (docs/import-export.md §3: erasure).
 * Events and stored idempotent answers keep their shape; only the erased contact's values
 * become null.
 */

/**
 * Keys an erased contact's objects keep: they identify, they say nothing about the person
 * (contact.deleted's reason and mergedInto, docs/api.md §19.4, are the service's words).
 */
const KEPT_KEYS = new Set(["id", "contactId", "reason", "mergedInto"]);

/**
 * Nulls, in place, every value of each object about one of `contactIds` (a contact, an
 * interaction log: an object with a matching `contactId`) except its ids, and the values
 * of a web form submission about it. Returns whether anything changed.
 */
export function scrubPersonalData(value: unknown, contactIds: ReadonlySet<string>): boolean {
  if (Array.isArray(value)) return value.map((item) => scrubPersonalData(item, contactIds)).some(Boolean);
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  if (typeof record.contactId === "string" && contactIds.has(record.contactId)) {
    let changed = false;
    for (const key of Object.keys(record)) {
      if (KEPT_KEYS.has(key) || record[key] === null) continue;
      record[key] = null;
      changed = true;
    }
    return changed;
  }
  let changed = false;
  for (const child of Object.values(record)) if (scrubPersonalData(child, contactIds)) changed = true;
  // web_form.submitted (docs/webhooks.md §1.1): the submission's values are what the person typed.
  const data = record.data as { contact?: unknown; submission?: { values?: unknown }; previous?: unknown } | undefined;
  // contact.updated's `previous`: the person's former values.
  if (record.event === "contact.updated" && data?.previous && isAbout(data.contact, contactIds)) {
    data.previous = null;
    changed = true;
  }
  if (record.event === "web_form.submitted" && data?.submission && data.submission.values !== null && isAbout(data.contact, contactIds)) {
    data.submission.values = null;
    changed = true;
  }
  return changed;
}

const isAbout = (contact: unknown, contactIds: ReadonlySet<string>) =>
  typeof contact === "object" && contact !== null && contactIds.has((contact as { contactId?: string }).contactId ?? "");

/** A contactId's spell in stored JSON, for a first LIKE filter before the JSON is read. */
const spelled = (contactId: string) => `%"contactId":"${contactId}"%`;

/** Events per slice of a scan: a slice's read takes ~15 ms on a large project (SQLite, warm). */
export const SLICE = 10_000;

type EventRow = { id: string; body: string; created_at: string };

/**
 * The project's events, created at `since` or later when given, whose body is LIKE one of
 * `patterns`, oldest first. Read in slices of the (project_id, created_at, id) index with
 * a turn of the event loop between them: on SQLite a read runs on the server's thread,
 * and one LIKE over a million events (1.6 s, 5 s cold, measured) would stall every tenant.
 */
async function eventsLike(db: Db, projectId: string, patterns: string[], since: string | null, type?: string, slice = SLICE): Promise<EventRow[]> {
  const found: EventRow[] = [];
  // `id > ""` holds for every id: {since, ""} starts the scan at `since` inclusive. Row
  // values, not ORs: SQLite and PostgreSQL read them as one range of the index.
  let after: { created_at: string; id: string } | null = since === null ? null : { created_at: since, id: "" };
  for (;;) {
    const from = after;
    const inProject = db.selectFrom("events").where("project_id", "=", projectId);
    const sliced = from === null
      ? inProject
      : inProject.where((eb) => eb(eb.refTuple("created_at", "id"), ">", eb.tuple(from.created_at, from.id)));
    const edge = await sliced.select(["created_at", "id"]).orderBy("created_at").orderBy("id").offset(slice - 1).limit(1).executeTakeFirst();
    let query = sliced
      .select(["id", "body", "created_at"])
      .where((eb) => eb.or(patterns.map((pattern) => eb("body", "like", pattern))));
    if (type) query = query.where("type", "=", type);
    if (edge) {
      query = query.where((eb) => eb(eb.refTuple("created_at", "id"), "<=", eb.tuple(edge.created_at, edge.id)));
    }
    found.push(...(await query.orderBy("created_at").orderBy("id").execute()));
    if (!edge) return found;
    after = edge;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/** The ids a contact had over time: its current one, and before each relabel the one it left. */
export interface IdPeriod {
  contactId: string;
  /** Inclusive bounds on events' created_at; null is open. */
  from: string | null;
  until: string | null;
}

/**
 * The ids the contact now named `contactId` had, newest first: contact.updated events with
 * `previousContactId` (docs/api.md §11.4: a relabel) link each id to the one before. An old id
 * may since have been taken by another contact, so each counts only for its own period.
 */
export async function idHistory(db: Db, projectId: string, contactId: string, slice = SLICE): Promise<IdPeriod[]> {
  const relabels = (await eventsLike(db, projectId, ['%"previousContactId":%'], null, "contact.updated", slice)).reverse();
  const periods: IdPeriod[] = [];
  let current: IdPeriod = { contactId, from: null, until: null };
  for (const row of relabels) {
    const data = (JSON.parse(row.body) as { data: { contact: { contactId: string | null }; previousContactId?: string } }).data;
    if (data.contact.contactId !== current.contactId || !data.previousContactId) continue;
    periods.push({ ...current, from: row.created_at });
    current = { contactId: data.previousContactId, from: null, until: row.created_at };
  }
  periods.push(current);
  return periods;
}

const within = (period: IdPeriod, at: string) => (period.from === null || at >= period.from) && (period.until === null || at <= period.until);

/**
 * The project's stored events about a contact over its id history, created at `since` or
 * later when given: a LIKE on the body narrows the read, the parsed JSON decides.
 */
export async function eventsAbout(db: Db, projectId: string, history: IdPeriod[], since: string | null, slice = SLICE) {
  const found = new Map<string, { id: string; body: string }>();
  for (const row of await eventsLike(db, projectId, history.map((p) => spelled(p.contactId)), since, undefined, slice)) {
    const ids = new Set(history.filter((p) => within(p, row.created_at)).map((p) => p.contactId));
    if (ids.size > 0 && scrubPersonalData(JSON.parse(row.body), ids)) found.set(row.id, row);
  }
  return found;
}

/** Opens and seals stored answers (src/secrets/secret-box.ts: they are sealed at rest). */
export interface Sealer {
  open(sealed: string): string;
  seal(plain: string): string;
}

export interface StoredAnswer {
  api_key_id: string;
  key: string;
  /** The answer as sent, opened. */
  plain: string;
}

/**
 * The stored idempotent answers of the project's keys (they live 24 h) that name the
 * contact over its id history, created at `since` or later when given. They are sealed,
 * so each is opened to be read.
 */
export async function idempotentAnswersAbout(db: Db, projectId: string, history: IdPeriod[], secrets: Sealer, since: string | null) {
  let query = db
    .selectFrom("idempotency_records")
    .innerJoin("api_keys", "api_keys.id", "idempotency_records.api_key_id")
    .select(["idempotency_records.api_key_id", "idempotency_records.key", "idempotency_records.response_body", "idempotency_records.created_at"])
    .where("api_keys.project_id", "=", projectId);
  if (since !== null) query = query.where("idempotency_records.created_at", ">=", since);
  const found: StoredAnswer[] = [];
  for (const row of await query.execute()) {
    const plain = secrets.open(row.response_body);
    const about = history.some((p) => plain.includes(`"contactId":"${p.contactId}"`) && within(p, row.created_at));
    if (about) found.push({ api_key_id: row.api_key_id, key: row.key, plain });
  }
  return found;
}
