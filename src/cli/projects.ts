import type { Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { systemClock } from "../lib/clock.ts";
import { isoNow } from "../lib/time.ts";
import { createProject, findProject, listProjects, updateProject } from "../projects/service.ts";
import { integer, output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

function settings(values: Input<"project create" | "project update">["values"]) {
  return {
    contactQuota: integer(values["contact-quota"], "--contact-quota"),
    rateLimitPerMinute: integer(values["rate-limit-per-minute"], "--rate-limit-per-minute", 1),
    contactCreatesPerHour: integer(values["contact-creates-per-hour"], "--contact-creates-per-hour", 1),
    batchItemsPerHour: integer(values["batch-items-per-hour"], "--batch-items-per-hour", 1),
  };
}

/** `crm project create --name N [limits]` (docs/cli.md §4). */
export async function projectCreate(writes: UnitOfWork, { values }: Input<"project create">): Promise<void> {
  const project = await writes.run(null, (trx) => createProject(trx, values.name, isoNow(systemClock), settings(values)));
  output(values.json, project, `Created project ${project.name} (${project.id}).`);
}

/** `crm project update ID [--name N] [limits]` (docs/cli.md §4). */
export async function projectUpdate(db: Kysely<Database>, writes: UnitOfWork, { values, args }: Input<"project update">): Promise<void> {
  const id = args[0]!;
  if (!(await findProject(db, id))) throw new UsageError(`no project ${id}`);
  const project = (await writes.run(id, (trx) => updateProject(trx, id, { name: values.name, ...settings(values) }, isoNow(systemClock))))!;
  output(values.json, project, `Updated project ${project.name} (${project.id}).`);
}

/** `crm project list` (docs/cli.md §4). */
export async function projectList(db: Kysely<Database>, { values }: Input<"project list">): Promise<void> {
  const projects = await listProjects(db);
  const lines = projects.map((p) => `${p.id}  ${p.name}  contacts=${p.contactCount}${p.contactQuota === null ? "" : `/${p.contactQuota}`}  rate=${p.rateLimitPerMinute}/min creates=${p.contactCreatesPerHour}/h batch-items=${p.batchItemsPerHour}/h`);
  output(values.json, { data: projects }, lines.join("\n") || "No projects.");
}
