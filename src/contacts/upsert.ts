import type { Context } from "hono";
import { takeContactCreate } from "../auth/limits.ts";
import { ApiError, validationError } from "../errors.ts";
import type { AppEnv } from "../http/env.ts";
import { lockUntilCommit } from "../storage/query.ts";
import type { Db } from "../storage/schema.ts";
import { emailKey, phoneKey } from "./matching.ts";
import { checkPrecondition, type Precondition } from "./preconditions.ts";
import * as repo from "./repository.ts";
import { CreateContactBody, UpsertContactQuery, type ContactInput, type UpsertOptions } from "./schemas.ts";
import { createContact, formatContactId, patchContact } from "./service.ts";
import { fillOnly } from "./upsert-fill.ts";
import { contactsHoldingUniqueValue, uniqueFieldsOf, uniqueKey } from "./unique-values.ts";

export type UpsertResult = "created" | "updated" | "unchanged";

/** At most this many contactIds are listed by ERR_AMBIGUOUS_MATCH (docs/api.md §18.2). */
const MAX_LISTED_MATCHES = 10;

/**
 * Creates or updates the one contact that holds the body's `matchOn` value
 * (docs/api.md §18.2). Concurrent upserts of one value take turns on a lock named by the
 * project and the normalised value, taken before the lookup: on PostgreSQL a transaction-
 * scoped advisory lock shared by every node; on SQLite the single writer already orders
 * them. The later one then finds the contact the first created. The creates-per-hour token
 * of an upsert that creates is taken before the transaction (takeCreateTokenIfNew, below).
 */
export async function upsertContact(
  db: Db,
  projectId: string,
  input: ContactInput,
  options: UpsertOptions & { now: string; ifMatch?: Precondition; source?: string },
): Promise<{ contact: Awaited<ReturnType<typeof createContact>>; result: UpsertResult }> {
  const key = await matchKey(db, projectId, options.matchOn, input);
  await lockUntilCommit(db, matchLock(projectId, key));
  const numbers = await matchingContacts(db, projectId, key);
  if (numbers.length > 1) {
    throw new ApiError(
      "ERR_AMBIGUOUS_MATCH",
      `${numbers.length > MAX_LISTED_MATCHES ? "More than 10" : numbers.length} contacts hold this ${options.matchOn} value; update one of them by its contactId.`,
      "matchOn",
      undefined,
      { matches: numbers.slice(0, MAX_LISTED_MATCHES).map(formatContactId) },
    );
  }
  if (numbers.length === 0) {
    checkPrecondition(options.ifMatch, undefined);
    const contact = await createContact(db, projectId, input, { now: options.now, source: options.source });
    return { contact, result: "created" };
  }
  const n = numbers[0]!;
  const patch = options.update === "fill" || options.tags === "add" ? await fillOnly(db, projectId, n, input, options) : input;
  const { contact, changed } = await patchContact(db, projectId, n, patch, options.now, options.ifMatch);
  return { contact, result: changed.length > 0 ? "updated" : "unchanged" };
}

type MatchKey = { name: "email" | "phone"; value: string } | { name: "customField"; fieldId: string; value: string };

/** The lock upserts of one value take turns on, named by the project and the normalised value. */
export const matchLock = (projectId: string, key: MatchKey) => `upsert:${projectId}:${key.name}:${key.value}`;

/** The normalised value of `matchOn` in the body (docs/api.md §11.7 for email and phone); 422 when it is missing. */
export async function matchKey(db: Db, projectId: string, matchOn: string, input: ContactInput): Promise<MatchKey> {
  if (matchOn === "email") {
    const value = input.email ? emailKey(input.email) : null;
    if (!value) throw validationError("email", "email is required: it is the matchOn value.");
    return { name: "email", value };
  }
  if (matchOn === "phone") {
    const value = input.phone ? phoneKey(input.phone, await repo.projectRegion(db, projectId)) : null;
    if (!value) throw validationError("phone", "phone is required: it is the matchOn value.");
    return { name: "phone", value };
  }
  const ref = matchOn.slice("customFields.".length);
  const field = (await uniqueFieldsOf(db, projectId)).find((f) => f.id === ref || f.title === ref);
  if (!matchOn.startsWith("customFields.") || !field) {
    throw validationError(
      "matchOn",
      `matchOn must be email, phone or customFields.<id or title> of a unique custom field; ${matchOn} is not one.`,
    );
  }
  const sent = input.customFields ? (input.customFields[field.id] ?? input.customFields[field.title]) : undefined;
  const value = uniqueKey(sent);
  if (value === null) throw validationError(`customFields.${field.id}`, `customFields.${field.id} (${field.title}) is required: it is the matchOn value.`);
  return { name: "customField", fieldId: field.id, value };
}

export async function matchingContacts(db: Db, projectId: string, key: MatchKey): Promise<number[]> {
  if (key.name === "customField") {
    const ids = await contactsHoldingUniqueValue(db, projectId, key.fieldId, key.value);
    return repo.contactNumbersOf(db, ids);
  }
  return repo.contactNumbersByMatchKey(db, projectId, key.name === "email" ? "email_key" : "phone_key", key.value, MAX_LISTED_MATCHES + 1);
}

/**
 * Before PUT /contacts's transaction opens (docs/api.md §18.2): when no contact holds the
 * value yet, the upsert will create, so it takes a token of the key's create bucket here
 * (429 when empty), outside the transaction like every bucket. An input that does not
 * validate takes nothing: the route's validation answers it. Two racing upserts of one new
 * value may both take a token although one of them ends up updating.
 */
export async function takeCreateTokenIfNew(c: Context<AppEnv>): Promise<void> {
  const query = UpsertContactQuery.safeParse(c.req.query());
  let body: unknown;
  try {
    body = JSON.parse(c.get("rawBody") ?? "");
  } catch {
    return;
  }
  const input = CreateContactBody.safeParse(body);
  if (!query.success || !input.success) return;
  const db = c.get("deps").db;
  const projectId = c.get("caller").projectId;
  const key = await matchKey(db, projectId, query.data.matchOn, input.data).catch(() => null);
  if (key && (await matchingContacts(db, projectId, key)).length === 0) await takeContactCreate(c);
}
