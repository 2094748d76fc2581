import { emailKey } from "../contacts/matching.ts";
import { listContactRows } from "../contacts/list-query.ts";
import * as contacts from "../contacts/repository.ts";
import type { ContactInput } from "../contacts/schemas.ts";
import { createContact, parseContactId, patchContact } from "../contacts/service.ts";
import type { Db, FormRow } from "../storage/schema.ts";
import { eventOf, recordChange } from "../changes/record.ts";
import { subjectOf } from "../changes/diff.ts";
import { newId } from "../lib/ids.ts";
import { isHttpUrl } from "../lib/formats.ts";
import { allCustomFields } from "../reference/repository.ts";
import { fieldSpecs, FormFieldsError, resolveFieldNames, type FieldSpec } from "./fields.ts";
import { asSubmissionError } from "./input.ts";
import * as repo from "./repository.ts";

/** A form as the CLI shows it (docs/cli.md §4, docs/api.md §15). */
export interface Form {
  id: string;
  projectId: string;
  name: string;
  fields: string[];
  redirectUrl: string | null;
  createdAt: string;
}

export const toForm = (row: FormRow): Form => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  fields: JSON.parse(row.fields) as string[],
  redirectUrl: row.redirect_url,
  createdAt: row.created_at,
});

/**
 * `crm form create` and the console (docs/api.md §15, docs/admin.md §3): a name of 1–255 characters
 * (trimmed), an optional http(s) redirect URL of at most 2048; custom fields given by title
 * are stored by id, so a later rename does not break the form. Throws FormFieldsError for
 * what it refuses. `now`: the console's clock, or the system's in the CLI.
 */
export async function createForm(db: Db, input: { projectId: string; name: string; fields: string[]; redirectUrl: string | null }, now: string) {
  const name = input.name.trim();
  if (name === "" || name.length > 255) throw new FormFieldsError("takes 1–255 characters", "name");
  const { redirectUrl } = input;
  if (redirectUrl !== null && (redirectUrl.length > 2048 || !isHttpUrl(redirectUrl))) {
    throw new FormFieldsError("must be an http(s) URL of at most 2048 characters", "redirectUrl");
  }
  const fields = resolveFieldNames(input.fields, await allCustomFields(db, input.projectId));
  const row: FormRow = {
    id: newId("frm"),
    project_id: input.projectId,
    name,
    fields: JSON.stringify(fields),
    redirect_url: input.redirectUrl,
    created_at: now,
  };
  await repo.insertForm(db, row);
  return toForm(row);
}

/** The form's fields with what the page and the submission need (labels, kinds, options). */
export async function specsOf(db: Db, form: FormRow): Promise<FieldSpec[]> {
  return fieldSpecs(JSON.parse(form.fields) as string[], await allCustomFields(db, form.project_id));
}

export interface Submitted {
  submissionId: string;
  submittedAt: string;
}

/**
 * Takes one validated submission (docs/api.md §15) in the request's unit of work (`trx`, a
 * savepoint of a group commit: src/http/transaction.ts; its Idempotency-Key is kept by
 * src/idempotency/middleware.ts): updates the project's contact with the same email (match key of
 * docs/api.md §11; the most recently updated one when several share it, as
 * `GET /contacts?email=` lists first) or creates one with source `web_form` (quota 402
 * applies; an update keeps the stored email as written), which records contact.updated or
 * contact.created as the API does, then stores the submission and records
 * web_form.submitted with the contact as it now is (docs/webhooks.md §2).
 */
export async function submitForm(
  trx: Db,
  form: FormRow,
  specs: FieldSpec[],
  submission: { input: ContactInput; values: Record<string, unknown> },
  now: string,
): Promise<Submitted> {
  const projectId = form.project_id;
  const { input, values } = submission;
  try {
    const key = input.email ? emailKey(input.email) : null;
    const [match] = key ? await listContactRows(trx, projectId, { emailKey: key }, 1) : [];
    // The email matched: how it was first written (case, spaces) stays.
    const contact = match
      ? (await patchContact(trx, projectId, match.contact_number, { ...input, email: undefined }, now)).contact
      : await createContact(trx, projectId, input, { source: "web_form", now });
    const row = await contacts.findContactRow(trx, projectId, parseContactId(contact.contactId)!);
    const submitted = { submissionId: newId("sub"), submittedAt: now };
    await repo.insertSubmission(trx, {
      id: submitted.submissionId,
      formId: form.id,
      projectId,
      contactId: row!.id,
      values,
      submittedAt: submitted.submittedAt,
    });
    // The submission's event follows the contact's change, if the submission made one (docs/webhooks.md §8).
    const data = { form: { id: form.id, name: form.name }, submission: { id: submitted.submissionId, submittedAt: submitted.submittedAt, values }, contact };
    const event = eventOf("web_form.submitted", data, now, subjectOf(row!.id, contact));
    await recordChange(trx, { projectId, object: "contact", id: contact.contactId, contactId: row!.id, action: null, at: now, events: [event] });
    return submitted;
  } catch (error) {
    throw asSubmissionError(error, specs);
  }
}
