import { keysetAfter } from "../storage/keyset.ts";
import type { Db } from "../storage/schema.ts";

/** A stored web-form submission (docs/api.md §15.2) with its form's name, as a contact's timeline shows it. */
export interface ContactSubmission {
  id: string;
  formId: string;
  formName: string | null;
  values: Record<string, unknown>;
  submittedAt: string;
}

/**
 * The submissions that created or updated contact `contactId` (its internal row id), newest
 * first then by id, strictly after `after` ([submittedAt, id]) when given; `limit + 1` rows
 * are read so the caller knows whether there are more. A contact has few, found through
 * the form_submissions_contact index.
 */
export async function submissionsOfContact(db: Db, contactId: number, limit: number, after?: [string, string]): Promise<ContactSubmission[]> {
  let q = db
    .selectFrom("form_submissions")
    .leftJoin("forms", "forms.id", "form_submissions.form_id")
    .select(["form_submissions.id", "form_submissions.form_id", "forms.name as form_name", "form_submissions.values", "form_submissions.submitted_at"])
    .where("form_submissions.contact_id", "=", contactId);
  if (after) q = q.where((eb) => keysetAfter(eb as never, ["form_submissions.submitted_at", "form_submissions.id"], after, "desc"));
  const rows = await q.orderBy("form_submissions.submitted_at", "desc").orderBy("form_submissions.id", "desc").limit(limit + 1).execute();
  return rows.map((r) => ({
    id: r.id,
    formId: r.form_id,
    formName: r.form_name ?? null,
    values: parseValues(r.values),
    submittedAt: r.submitted_at,
  }));
}

function parseValues(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
