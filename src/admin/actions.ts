import type { Context } from "hono";
import type { Transaction } from "kysely";
import type { Database } from "../storage/schema.ts";
import { ApiError } from "../errors.ts";
import type { AdminEnv } from "./env.ts";
import { noErrors, type FormErrors } from "./ui.tsx";

/**
 * A console action's writes: the same write queue as the API's requests (group commit on
 * SQLite, a pooled transaction on PostgreSQL), counted against the project's share of it
 * (decisions §16), one transaction for the whole action; the dispatcher is woken after
 * the commit for the events it recorded. Same services, same rules, same events as the
 * API (decisions §14).
 */
export async function write<T>(c: Context<AdminEnv>, projectId: string | undefined, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  const deps = c.var.deps;
  const result = await deps.writes.run(work, projectId);
  deps.onEventsCommitted();
  return result;
}

/**
 * A refused action's errors for its form: an ApiError (the API's own validation, quota
 * and conflict errors) becomes the message of the field it names, or a general one.
 * Anything else is not the user's mistake and is thrown on.
 */
export function formErrors(error: unknown, fieldNames: Record<string, string> = {}): FormErrors {
  if (!(error instanceof ApiError)) throw error;
  const errors = noErrors();
  const field = error.fieldName && (fieldNames[error.fieldName] ?? error.fieldName);
  if (field) errors.fields[field] = error.message;
  else errors.general.push(error.message);
  return errors;
}
