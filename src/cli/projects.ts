import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { createProject, findProject, listProjects, updateProject } from "../projects/service.ts";
import { integer, options, output, required, UsageError } from "./args.ts";

const settingFlags = {
  name: { type: "string" },
  "contact-quota": { type: "string" },
  "rate-limit-per-minute": { type: "string" },
  "contact-creates-per-hour": { type: "string" },
} as const;

function settings(values: Record<string, string | boolean | undefined>) {
  return {
    contactQuota: integer(values["contact-quota"] as string | undefined, "--contact-quota"),
    rateLimitPerMinute: integer(values["rate-limit-per-minute"] as string | undefined, "--rate-limit-per-minute", 1),
    contactCreatesPerHour: integer(values["contact-creates-per-hour"] as string | undefined, "--contact-creates-per-hour", 1),
  };
}

/** `crm project create|update|list` (decisions §3). */
export async function projectCommand(db: Kysely<Database>, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = options(rest, settingFlags);
  if (action === "create") {
    const project = await db.transaction().execute((trx) => createProject(trx, required(values.name, "--name"), settings(values)));
    return output(values.json, project, `Created project ${project.name} (${project.id}).`);
  }
  if (action === "update") {
    const id = required(positionals[0], "project ID");
    if (!(await findProject(db, id))) throw new UsageError(`no project ${id}`);
    const project = (await updateProject(db, id, { name: values.name, ...settings(values) }))!;
    return output(values.json, project, `Updated project ${project.name} (${project.id}).`);
  }
  if (action === "list") {
    const projects = await listProjects(db);
    const lines = projects.map((p) => `${p.id}  ${p.name}  contacts=${p.contactCount}${p.contactQuota === null ? "" : `/${p.contactQuota}`}  rate=${p.rateLimitPerMinute}/min creates=${p.contactCreatesPerHour}/h`);
    return output(values.json, { data: projects }, lines.join("\n") || "No projects.");
  }
  throw new UsageError("usage: crm project create|update ID|list [options]");
}
