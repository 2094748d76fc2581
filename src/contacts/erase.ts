import { sql, type Kysely } from "kysely";
import { PAIR } from "./search/pair-terms.ts";
import { searchTerms } from "./search/terms.ts";
import { forgetTypoWords } from "./search/typo-keys.ts";
import { reclaimErased } from "../storage/query.ts";
import type { Database, Db } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { notFound } from "../errors.ts";
import { eventsAbout, idempotentAnswersAbout, idHistory, scrubPersonalData, type IdPeriod, type Sealer, type StoredAnswer } from "../events/scrub.ts";
import { findContactIdentity } from "./repository.ts";
import { eventOf, recordChange } from "../changes/record.ts";
import { redactChangesOf } from "../changes/repository.ts";
import type { EventSubject } from "../webhooks/filter.ts";
import { formatContactId } from "./service.ts";
import { indexDuplicates, keysOfRow } from "../duplicates/maintain.ts";
import { forgetMergesOf } from "../merges/repository.ts";

/** What an erase removed (docs/import-export.md §3), as `crm contact erase --json` prints it. */
export interface Erasure {
  contactId: string;
  projectId: string;
  erasedAt: string;
  removed: { interactionLogs: number; tagLinks: number; searchTerms: number; formSubmissions: number };
  scrubbed: { events: number; pendingDeliveries: number; idempotentAnswers: number; deliveryResponses: number };
}

export interface EraseOptions {
  /** Where the erase's one transaction runs, under the project's share of the queue: the CLI's own unit of work, or the server's (docs/api.md §7). */
  writes: UnitOfWork;
  now: string;
  /** The server key: stored idempotent answers are sealed with it. */
  secrets: Sealer;
  /** Told when the erase committed but its freed space could not be taken out of the files (docs/security.md §7). */
  warn?(message: string): void;
}

/** The tables an erase deletes from or rewrites; their freed space is reclaimed once it commits (docs/security.md §7). */
const ERASED_TABLES = [
  "contacts",
  "interaction_logs",
  "contact_tags",
  "contact_search_terms",
  "search_typo_keys",
  "contact_name_keys",
  "merges",
  "form_submissions",
  "projects",
  "events",
  "delivery_attempts",
  "idempotency_records",
] as const;

/** Events written while the first scan ran are found again from this long before it (clocks of several nodes, docs/scaling.md §6). */
const CATCH_UP_MS = 60_000;
/** Ids per IN list. */
const CHUNK = 500;

const count = (result: { numDeletedRows?: bigint; numUpdatedRows?: bigint } | undefined) =>
  Number(result?.numDeletedRows ?? result?.numUpdatedRows ?? 0);

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * Erases a contact (docs/import-export.md §3): deletes it with its interaction logs, tag links, search
 * terms and form submissions, and nulls its personal data in the project's stored events
 * (so in pending deliveries, which send the stored body) and in stored idempotent answers.
 * Its number goes to `erased_contacts`, never to be given again; its change records are
 * redacted and `contact.erased` is recorded (docs/api.md §19.1), also for a contact in the trash.
 *
 * The events are searched first outside the transaction (a project's 30 days of events can
 * be large, and a long read must not hold the write lock other tenants wait on), then again
 * inside it for those written meanwhile. After the commit, the space the erase freed is
 * taken out of the database's files (docs/security.md §7): SQLite's log is checkpointed, the
 * PostgreSQL tables vacuumed (src/storage/query.ts); so `db` is the database, not a transaction.
 */
export async function eraseContact(db: Kysely<Database>, projectId: string, contactNumber: number, options: EraseOptions): Promise<Erasure> {
  const contactId = formatContactId(contactNumber);
  if (!(await findContactIdentity(db, projectId, contactNumber, { trashed: true }))) throw notFound("Contact");
  const watermark = await latestEventTime(db, projectId);
  const history = await idHistory(db, projectId, contactId);
  const scanned = await eventsAbout(db, projectId, history, null);
  const answers = await idempotentAnswersAbout(db, projectId, history, options.secrets, null);

  const erasure = await options.writes.run(projectId, async (trx) => {
    const contact = await findContactIdentity(trx, projectId, contactNumber, { trashed: true });
    if (!contact) throw notFound("Contact");
    // Subscription filters judge contact.erased on the contact as it was (docs/webhooks.md §8).
    const subject = await subjectBeforeErasure(trx, contact.id);
    const since = watermark === null ? null : new Date(Date.parse(watermark) - CATCH_UP_MS).toISOString();
    const eventIds = new Set([...scanned.keys(), ...(await eventsAbout(trx, projectId, history, since)).keys()]);
    const stored = new Map([...answers, ...(await idempotentAnswersAbout(trx, projectId, history, options.secrets, since))].map((a) => [`${a.api_key_id}\n${a.key}`, a]));
    const removed = await deleteContact(trx, projectId, contact.id, contactNumber, options.now, contact.deleted_at !== null);
    // The change log keeps that something happened, not what (docs/api.md §19.1), and tells receivers to purge their copies.
    await redactChangesOf(trx, contact.id);
    const event = eventOf("contact.erased", { contactId }, options.now, subject);
    await recordChange(trx, { projectId, object: "contact", id: contactId, contactId: null, action: "erased", at: options.now, events: [event] });
    const scrubbed = await scrubEvents(trx, [...eventIds], history);
    const idempotentAnswers = await scrubIdempotentAnswers(trx, [...stored.values()], history, options.secrets);
    return { contactId, projectId, erasedAt: options.now, removed, scrubbed: { ...scrubbed, idempotentAnswers } };
  });
  await reclaim(db, contactId, options.warn);
  return erasure;
}

/** The erase is done once committed; a reclaim that cannot finish is told, never thrown. */
async function reclaim(db: Kysely<Database>, contactId: string, warn: EraseOptions["warn"]): Promise<void> {
  const failure = await reclaimErased(db, ERASED_TABLES).then(
    (complete) => (complete ? null : "another connection held an older snapshot of the database throughout"),
    (error: unknown) => String((error as Error)?.message ?? error),
  );
  if (failure === null) return;
  warn?.(
    `${contactId} is erased, but its freed space was not yet taken out of the database's files (${failure}): ` +
      "the next checkpoint or vacuum does it (docs/import-export.md, What the erase does not reach).",
  );
}

/** What an erase would remove and scrub, for the console's confirmation; writes nothing. */
export async function erasurePreview(db: Db, projectId: string, contactNumber: number) {
  const contact = await findContactIdentity(db, projectId, contactNumber, { trashed: true });
  if (!contact) throw notFound("Contact");
  const countOf = async (table: "interaction_logs" | "contact_tags" | "contact_search_terms" | "form_submissions") => {
    let q = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as("n")).where("contact_id", "=", contact.id);
    // Pair terms are the index's own rows, made of the contact's words (src/contacts/search/pair-terms.ts): not counted.
    if (table === "contact_search_terms") q = q.where(sql<boolean>`term NOT LIKE ${`${PAIR}%`}`);
    const row = await q.executeTakeFirst();
    return Number(row?.n ?? 0);
  };
  const events = await eventsAbout(db, projectId, await idHistory(db, projectId, formatContactId(contactNumber)), null);
  return {
    interactionLogs: await countOf("interaction_logs"),
    tagLinks: await countOf("contact_tags"),
    searchTerms: await countOf("contact_search_terms"),
    formSubmissions: await countOf("form_submissions"),
    events: events.size,
  };
}

/** The category and tags of a contact about to be erased: live tags, or those waiting in the trash. */
async function subjectBeforeErasure(trx: Db, id: number): Promise<EventSubject> {
  const row = await trx
    .selectFrom("contacts")
    .leftJoin("contact_types", "contact_types.id", "contacts.contact_type_id")
    .select(["contact_types.category", "contacts.trashed_tags"])
    .where("contacts.id", "=", id)
    .executeTakeFirstOrThrow();
  const live = await trx.selectFrom("contact_tags").select("tag_id").where("contact_id", "=", id).execute();
  const tagIds = row.trashed_tags ? (JSON.parse(row.trashed_tags) as string[]) : live.map((t) => t.tag_id);
  return { contactId: id, category: row.category ?? null, tagIds };
}

async function latestEventTime(db: Db, projectId: string): Promise<string | null> {
  const row = await db.selectFrom("events").select((eb) => eb.fn.max("created_at").as("latest")).where("project_id", "=", projectId).executeTakeFirst();
  return row?.latest ?? null;
}

async function deleteContact(trx: Db, projectId: string, id: number, contactNumber: number, now: string, trashed: boolean): Promise<Erasure["removed"]> {
  // Its pair terms first, uncounted: the index's own rows, made of its words (as in erasurePreview).
  await trx.deleteFrom("contact_search_terms").where("contact_id", "=", id).where("term", "like", `${PAIR}%`).execute();
  const removed = {
    interactionLogs: count(await trx.deleteFrom("interaction_logs").where("contact_id", "=", id).executeTakeFirst()),
    tagLinks: count(await trx.deleteFrom("contact_tags").where("contact_id", "=", id).executeTakeFirst()),
    searchTerms: count(await trx.deleteFrom("contact_search_terms").where("contact_id", "=", id).executeTakeFirst()),
    formSubmissions: count(await trx.deleteFrom("form_submissions").where("contact_id", "=", id).executeTakeFirst()),
  };
  const keyed = await trx.selectFrom("contacts").select(["first_name", "last_name", "business_name", "email", "email_key", "phone_key"]).where("id", "=", id).executeTakeFirstOrThrow();
  // Merges it took part in can no longer be undone (docs/api.md §20.4).
  await forgetMergesOf(trx, id);
  await trx.deleteFrom("contacts").where("id", "=", id).execute();
  // A trashed or merged-away contact holds no keys any more (src/contacts/trash.ts).
  await indexDuplicates(trx, projectId, [{ contactId: id, before: trashed ? [] : keysOfRow(keyed), after: [] }], now);
  // Its words leave the typo index unless another contact has them (docs/security.md §7).
  const terms = searchTerms({ firstName: keyed.first_name, lastName: keyed.last_name, businessName: keyed.business_name, email: keyed.email, phoneKey: null, contactId: "" });
  await forgetTypoWords(trx, projectId, terms);
  // The counter (last_contact_number) is left as it is: it only grows, so no create takes the number.
  // A contact in the trash no longer counts (src/contacts/trash.ts).
  if (!trashed) await trx.updateTable("projects").set((eb) => ({ contact_count: eb("contact_count", "-", 1) })).where("id", "=", projectId).execute();
  await trx.insertInto("erased_contacts").values({ project_id: projectId, contact_number: contactNumber, erased_at: now }).execute();
  return removed;
}

async function scrubEvents(trx: Db, eventIds: string[], history: IdPeriod[]) {
  const ids = new Set(history.map((p) => p.contactId));
  let events = 0;
  let pendingDeliveries = 0;
  let deliveryResponses = 0;
  for (const chunk of chunks(eventIds)) {
    for (const row of await trx.selectFrom("events").select(["id", "body"]).where("id", "in", chunk).execute()) {
      const body = JSON.parse(row.body) as unknown;
      if (!scrubPersonalData(body, ids)) continue;
      await trx.updateTable("events").set({ body: JSON.stringify(body) }).where("id", "=", row.id).execute();
      events++;
    }
    const pending = await trx
      .selectFrom("deliveries")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("event_id", "in", chunk)
      .where("status", "=", "pending")
      .executeTakeFirst();
    pendingDeliveries += Number(pending?.n ?? 0);
    // A receiver's answer may echo what it was sent.
    deliveryResponses += count(
      await trx.updateTable("delivery_attempts").set({ response_snippet: null }).where("event_id", "in", chunk).where("response_snippet", "is not", null).executeTakeFirst(),
    );
  }
  return { events, pendingDeliveries, deliveryResponses };
}

async function scrubIdempotentAnswers(trx: Db, answers: StoredAnswer[], history: IdPeriod[], secrets: Sealer): Promise<number> {
  const ids = new Set(history.map((p) => p.contactId));
  let scrubbed = 0;
  for (const answer of answers) {
    let body: unknown;
    try {
      body = JSON.parse(answer.plain);
    } catch {
      continue;
    }
    if (!scrubPersonalData(body, ids)) continue;
    await trx
      .updateTable("idempotency_records")
      .set({ response_body: secrets.seal(JSON.stringify(body)) })
      .where("api_key_id", "=", answer.api_key_id)
      .where("key", "=", answer.key)
      .execute();
    scrubbed++;
  }
  return scrubbed;
}
