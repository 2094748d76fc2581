import type { Db } from "../storage/schema.ts";
import { isHttpUrl } from "../lib/formats.ts";
import { allCustomFields } from "../reference/repository.ts";
import { FormFieldsError, resolveFieldNames } from "./fields.ts";
import { toForm } from "./service.ts";

/**
 * Changing a web form and reading its submissions (docs/admin.md §3), under the rules that
 * create it (src/forms/service.ts createForm): the same name, field and redirect checks.
 * The public page and the submission endpoint read the form anew on every request, so a
 * change applies to the next visitor; submissions already taken keep what they were sent.
 */

/** Thrown when a form is asked for that this project does not have, or cannot go. */
export class FormRefusedError extends Error {}

export async function findProjectForm(db: Db, projectId: string, formId: string) {
  const row = await db.selectFrom("forms").selectAll().where("project_id", "=", projectId).where("id", "=", formId).executeTakeFirst();
  return row ? toForm(row) : undefined;
}

/** A form's name, fields and redirect URL, checked as createForm checks them. */
export async function updateForm(db: Db, projectId: string, formId: string, input: { name: string; fields: string[]; redirectUrl: string | null }) {
  const name = input.name.trim();
  if (name === "" || name.length > 255) throw new FormFieldsError("takes 1–255 characters", "name");
  const { redirectUrl } = input;
  if (redirectUrl !== null && (redirectUrl.length > 2048 || !isHttpUrl(redirectUrl))) {
    throw new FormFieldsError("must be an http(s) URL of at most 2048 characters", "redirectUrl");
  }
  const fields = resolveFieldNames(input.fields, await allCustomFields(db, projectId));
  const done = await db
    .updateTable("forms")
    .set({ name, fields: JSON.stringify(fields), redirect_url: redirectUrl })
    .where("project_id", "=", projectId)
    .where("id", "=", formId)
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) === 0) throw new FormRefusedError("This form no longer exists.");
}

export async function countSubmissions(db: Db, formId: string): Promise<number> {
  const row = await db.selectFrom("form_submissions").select((eb) => eb.fn.countAll<number>().as("n")).where("form_id", "=", formId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Removes a form without submissions. One with submissions stays: they are part of their
 * contacts' timelines. Its page stops answering (404) at once.
 */
export async function removeForm(db: Db, projectId: string, formId: string) {
  const taken = await countSubmissions(db, formId);
  if (taken > 0) {
    throw new FormRefusedError(`This form has ${taken.toLocaleString("en")} submission${taken === 1 ? "" : "s"}, which their contacts' timelines show: it cannot be deleted.`);
  }
  await db.deleteFrom("forms").where("project_id", "=", projectId).where("id", "=", formId).execute();
}

export interface SubmissionRow {
  id: string;
  submittedAt: string;
  values: Record<string, unknown>;
  /** The contact's number; null once it was erased (its submissions go with it). */
  contactNumber: number;
  contactDeleted: boolean;
}

/** A page of a form's submissions, newest first, after the position `before` ([submittedAt, id]); `limit + 1` rows tell whether more follow. */
export async function listSubmissions(db: Db, formId: string, limit: number, before?: [string, string]): Promise<SubmissionRow[]> {
  let q = db
    .selectFrom("form_submissions")
    .innerJoin("contacts", "contacts.id", "form_submissions.contact_id")
    .select(["form_submissions.id", "form_submissions.submitted_at", "form_submissions.values", "contacts.contact_number", "contacts.deleted_at"])
    .where("form_submissions.form_id", "=", formId);
  if (before) {
    const [at, id] = before;
    q = q.where((eb) => eb.or([eb("form_submissions.submitted_at", "<", at), eb.and([eb("form_submissions.submitted_at", "=", at), eb("form_submissions.id", "<", id)])]));
  }
  const rows = await q.orderBy("form_submissions.submitted_at", "desc").orderBy("form_submissions.id", "desc").limit(limit + 1).execute();
  return rows.map((r) => ({
    id: r.id,
    submittedAt: r.submitted_at,
    values: JSON.parse(r.values) as Record<string, unknown>,
    contactNumber: r.contact_number,
    contactDeleted: r.deleted_at !== null,
  }));
}
