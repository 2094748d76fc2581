import type { Db, FormRow } from "../storage/schema.ts";

/** Forms and submissions (db/0003_forms.sql). Plain functions taking `db | trx` first. */

export async function insertForm(db: Db, row: FormRow): Promise<void> {
  await db.insertInto("forms").values(row).execute();
}

export async function findForm(db: Db, id: string): Promise<FormRow | undefined> {
  return db.selectFrom("forms").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listForms(db: Db, projectId?: string): Promise<FormRow[]> {
  let q = db.selectFrom("forms").selectAll();
  if (projectId) q = q.where("project_id", "=", projectId);
  return q.orderBy("created_at").orderBy("id").execute();
}

export async function insertSubmission(
  db: Db,
  row: { id: string; formId: string; projectId: string; contactId: number; values: Record<string, unknown>; submittedAt: string },
): Promise<void> {
  await db
    .insertInto("form_submissions")
    .values({
      id: row.id,
      form_id: row.formId,
      project_id: row.projectId,
      contact_id: row.contactId,
      values: JSON.stringify(row.values),
      submitted_at: row.submittedAt,
    })
    .execute();
}
