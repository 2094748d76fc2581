import type { Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import { systemClock } from "../lib/clock.ts";
import { isoNow } from "../lib/time.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { findProject } from "../projects/service.ts";
import { addContactType, addCustomField, addInteractionType, ReferenceInputError } from "../reference/service.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

async function projectOf(db: Kysely<Database>, id: string) {
  if (!(await findProject(db, id))) throw new UsageError(`no project ${id}`);
  return id;
}

/** The shared rules' refusal as a usage error naming the option: `--options is required for select`. */
async function checked<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ReferenceInputError) throw new UsageError(`--${error.field} ${error.predicate}`);
    throw error;
  }
}

/** `crm contact-type create` (docs/cli.md §4, docs/api.md §10). */
export async function contactTypeCreate(db: Kysely<Database>, writes: UnitOfWork, { values }: Input<"contact-type create">): Promise<void> {
  const projectId = await projectOf(db, values.project);
  const input = { name: values.name, category: values.category, isDefault: values.default ?? false };
  const created = await checked(() => writes.run(projectId, (trx) => addContactType(trx, projectId, input, isoNow(systemClock))));
  output(values.json, created, `Created contact type ${created.name} (${created.id}).`);
}

/** `crm interaction-type create` (docs/cli.md §4, docs/api.md §10). */
export async function interactionTypeCreate(db: Kysely<Database>, writes: UnitOfWork, { values }: Input<"interaction-type create">): Promise<void> {
  const projectId = await projectOf(db, values.project);
  const created = await checked(() => writes.run(projectId, (trx) => addInteractionType(trx, projectId, values.name, isoNow(systemClock))));
  output(values.json, created, `Created interaction type ${created.name} (${created.id}).`);
}

/** `crm custom-field create` (docs/cli.md §4, docs/api.md §10). */
export async function customFieldCreate(db: Kysely<Database>, writes: UnitOfWork, { values }: Input<"custom-field create">): Promise<void> {
  const projectId = await projectOf(db, values.project);
  const created = await checked(() => writes.run(projectId, (trx) => addCustomField(trx, projectId, { title: values.title, type: values.type, options: values.options, unique: values.unique ?? false }, isoNow(systemClock))));
  output(values.json, created, `Created custom field ${created.title} (${created.id}).`);
}
