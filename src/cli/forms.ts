import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { FormFieldsError } from "../forms/fields.ts";
import { listForms } from "../forms/repository.ts";
import { createForm, toForm } from "../forms/service.ts";
import { isHttpUrl } from "../lib/formats.ts";
import { findProject } from "../projects/service.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

/**
 * `crm form create` (decisions §3, §10). Fields are contact field names (firstName, email,
 * address.city, …) or custom-field ids or exact titles, stored by id; anything else is a
 * usage error (exit 2).
 */
export async function formCreate(db: Kysely<Database>, { values }: Input<"form create">): Promise<void> {
  const projectId = values.project;
  if (!(await findProject(db, projectId))) throw new UsageError(`no project ${projectId}`);
  const name = values.name.trim();
  if (name === "" || name.length > 255) throw new UsageError("--name takes 1–255 characters");
  const fields = values.fields.split(",").map((f) => f.trim()).filter(Boolean);
  const redirectUrl = values["redirect-url"] ?? null;
  if (redirectUrl !== null && (redirectUrl.length > 2048 || !isHttpUrl(redirectUrl))) {
    throw new UsageError("--redirect-url must be an http(s) URL");
  }
  let form;
  try {
    form = await createForm(db, { projectId, name, fields, redirectUrl });
  } catch (error) {
    if (error instanceof FormFieldsError) throw new UsageError(error.message);
    throw error;
  }
  output(values.json, form, `Created form ${form.name} (${form.id}). Page: /f/${form.id}`);
}

/** `crm form list [--project ID]` (decisions §10). */
export async function formList(db: Kysely<Database>, { values }: Input<"form list">): Promise<void> {
  const forms = (await listForms(db, values.project)).map(toForm);
  const lines = forms.map((f) => `${f.id}  ${f.projectId}  ${f.name}  ${f.fields.join(",")}`);
  output(values.json, { data: forms }, lines.join("\n") || "No forms.");
}
