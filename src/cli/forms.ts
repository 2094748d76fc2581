import type { Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { systemClock } from "../lib/clock.ts";
import { isoNow } from "../lib/time.ts";
import { FormFieldsError } from "../forms/fields.ts";
import { listForms } from "../forms/repository.ts";
import { createForm, toForm } from "../forms/service.ts";
import { findProject } from "../projects/service.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

/** The option a refusal is about, in front of its message: "--redirect-url must be …". */
const OPTION_OF = { fields: "", name: "--name ", redirectUrl: "--redirect-url " } as const;

/**
 * `crm form create` (docs/cli.md §4, docs/api.md §15). Fields are contact field names (firstName, email,
 * address.city, …) or custom-field ids or exact titles, stored by id; anything else is a
 * usage error (exit 2).
 */
export async function formCreate(db: Kysely<Database>, writes: UnitOfWork, { values }: Input<"form create">): Promise<void> {
  const projectId = values.project;
  if (!(await findProject(db, projectId))) throw new UsageError(`no project ${projectId}`);
  const fields = values.fields.split(",").map((f) => f.trim()).filter(Boolean);
  const redirectUrl = values["redirect-url"] ?? null;
  let form;
  try {
    form = await writes.run(projectId, (trx) => createForm(trx, { projectId, name: values.name, fields, redirectUrl }, isoNow(systemClock)));
  } catch (error) {
    if (error instanceof FormFieldsError) throw new UsageError(OPTION_OF[error.field] + error.message);
    throw error;
  }
  output(values.json, form, `Created form ${form.name} (${form.id}). Page: /f/${form.id}`);
}

/** `crm form list [--project ID]` (docs/api.md §15). */
export async function formList(db: Kysely<Database>, { values }: Input<"form list">): Promise<void> {
  const forms = (await listForms(db, values.project)).map(toForm);
  const lines = forms.map((f) => `${f.id}  ${f.projectId}  ${f.name}  ${f.fields.join(",")}`);
  output(values.json, { data: forms }, lines.join("\n") || "No forms.");
}
