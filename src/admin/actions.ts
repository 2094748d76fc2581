import type { Context } from "hono";
import type { Work } from "../storage/unit-of-work.ts";
import { ApiError } from "../errors.ts";
import type { AdminEnv } from "./env.ts";
import { noErrors, type FormErrors } from "./ui.tsx";

/**
 * A console action's writes: one unit of work, as an API request's (group commit on
 * SQLite, a pooled transaction on PostgreSQL), counted against the project's share of the
 * write queue (docs/operations.md §3.1); a unit that queued deliveries wakes the dispatcher once it
 * has committed. Same services, same rules, same events as the API (docs/admin.md §3).
 */
export function write<T>(c: Context<AdminEnv>, projectId: string | undefined, work: Work<T>): Promise<T> {
  return c.var.deps.writes.run(projectId ?? "", work);
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
