import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { FormFieldsError } from "../forms/fields.ts";
import { listForms } from "../forms/repository.ts";
import { createForm, toForm } from "../forms/service.ts";
import { isHttpUrl } from "../lib/formats.ts";
import { findProject } from "../projects/service.ts";
import { options, output, required, UsageError } from "./args.ts";

/**
 * `crm form create|list` (decisions §3, §10). Fields are contact field names (firstName,
 * email, address.city, …) or custom-field ids or exact titles, stored by id; anything
 * else is a usage error (exit 2).
 */
export async function formCommand(db: Kysely<Database>, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values } = options(rest, {
    project: { type: "string" },
    name: { type: "string" },
    fields: { type: "string" },
    "redirect-url": { type: "string" },
  });
  if (action === "create") {
    const projectId = required(values.project, "--project");
    if (!(await findProject(db, projectId))) throw new UsageError(`no project ${projectId}`);
    const name = required(values.name, "--name").trim();
    if (name === "" || name.length > 255) throw new UsageError("--name takes 1–255 characters");
    const fields = required(values.fields, "--fields").split(",").map((f) => f.trim()).filter(Boolean);
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
    return output(values.json, form, `Created form ${form.name} (${form.id}). Page: /f/${form.id}`);
  }
  if (action === "list") {
    const forms = (await listForms(db, values.project)).map(toForm);
    const lines = forms.map((f) => `${f.id}  ${f.projectId}  ${f.name}  ${f.fields.join(",")}`);
    return output(values.json, { data: forms }, lines.join("\n") || "No forms.");
  }
  throw new UsageError("usage: crm form create --project ID --name N --fields a,b,... [--redirect-url URL] | list [--project ID]");
}
