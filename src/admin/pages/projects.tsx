import { Hono, type Context } from "hono";
import { z } from "zod";
import { isoNow } from "../../lib/time.ts";
import { createProject, listProjects, updateProject } from "../../projects/service.ts";
import { write } from "../actions.ts";
import type { AdminEnv, Project } from "../env.ts";
import { field } from "../security.ts";
import { ErrorSummary, Field, Layout, noErrors, Notice, PostForm, projectPath, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { contactPages } from "./contacts.tsx";
import { eventPages } from "./events.tsx";
import { exportPages } from "./export.tsx";
import { formPages } from "./forms.tsx";
import { homePages } from "./home.tsx";
import { importPages } from "./import.tsx";
import { keyPages } from "./keys.tsx";
import { referencePages } from "./reference.tsx";
import { webhookPages } from "./webhooks.tsx";

/** Projects: list, create, edit quota and limits (docs/cli.md §4, docs/admin.md §3); each project's sections hang below. */
export const projectPages = new Hono<AdminEnv>();

/** Blank means "not set"; anything else must be a whole number from `min`. */
const wholeNumber = (min: number, label: string) =>
  z
    .string()
    .trim()
    .transform((s, ctx) => {
      if (s === "") return undefined;
      const n = Number(s);
      if (!Number.isInteger(n) || n < min || n > 1_000_000_000) {
        ctx.addIssue({ code: "custom", message: `${label} must be a whole number from ${min} to 1,000,000,000.` });
        return z.NEVER;
      }
      return n;
    });

/** The project form: the CLI's options (docs/cli.md §4), as fields. */
const ProjectForm = z.object({
  name: z.string().trim().min(1, "Name is required.").max(255, "Name must have at most 255 characters."),
  contactQuota: wholeNumber(0, "Contact quota"),
  rateLimitPerMinute: wholeNumber(1, "Requests per minute"),
  contactCreatesPerHour: wholeNumber(1, "Contact creates per hour"),
  batchItemsPerHour: wholeNumber(1, "Batch items per hour"),
});
type ProjectValues = Record<keyof z.input<typeof ProjectForm>, string>;

function readProjectForm(c: Context<AdminEnv>) {
  const values: ProjectValues = {
    name: field(c, "name"),
    contactQuota: field(c, "contactQuota"),
    rateLimitPerMinute: field(c, "rateLimitPerMinute"),
    contactCreatesPerHour: field(c, "contactCreatesPerHour"),
    batchItemsPerHour: field(c, "batchItemsPerHour"),
  };
  const parsed = ProjectForm.safeParse(values);
  if (parsed.success) return { values, data: parsed.data };
  const errors = noErrors();
  for (const issue of parsed.error.issues) errors.fields[String(issue.path[0])] ??= issue.message;
  return { values, errors };
}

const fieldIds = {
  name: "f-name",
  contactQuota: "f-contactQuota",
  rateLimitPerMinute: "f-rateLimitPerMinute",
  contactCreatesPerHour: "f-contactCreatesPerHour",
  batchItemsPerHour: "f-batchItemsPerHour",
};

const ProjectFields = (p: { values: Partial<ProjectValues>; errors?: FormErrors; limits: boolean }) => (
  <>
    <Field label="Name" name="name" value={p.values.name} required error={p.errors?.fields.name} />
    {p.limits ? (
      <div class="row">
        <Field label="Contact quota" name="contactQuota" inputmode="numeric" value={p.values.contactQuota} hint="Blank: no limit." error={p.errors?.fields.contactQuota} />
        <Field label="Requests per minute" name="rateLimitPerMinute" inputmode="numeric" value={p.values.rateLimitPerMinute} hint="Per API key." error={p.errors?.fields.rateLimitPerMinute} />
        <Field label="Contact creates per hour" name="contactCreatesPerHour" inputmode="numeric" value={p.values.contactCreatesPerHour} hint="Per API key." error={p.errors?.fields.contactCreatesPerHour} />
        <Field label="Batch items per hour" name="batchItemsPerHour" inputmode="numeric" value={p.values.batchItemsPerHour} hint="Per API key, both batch routes together." error={p.errors?.fields.batchItemsPerHour} />
      </div>
    ) : null}
  </>
);

const ProjectsPage = (p: { c: Context<AdminEnv>; projects: Project[]; values?: Partial<ProjectValues>; errors?: FormErrors }) => (
  <Layout title="Projects" session={p.c.var.session}>
    <h1>Projects</h1>
    <TableWrap label="Projects">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Contacts</th>
            <th scope="col">Limits</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {p.projects.map((project) => (
            <tr>
              <td data-label="Name">
                <a href={projectPath(project)}>{project.name}</a>
              </td>
              <td class="mono" data-label="Id">
                {project.id}
              </td>
              <td class="num" data-label="Contacts">
                {project.contactCount.toLocaleString("en")}
                {project.contactQuota === null ? "" : ` / ${project.contactQuota.toLocaleString("en")}`}
              </td>
              <td data-label="Limits">
                {project.rateLimitPerMinute}/min, {project.contactCreatesPerHour} creates/h, {project.batchItemsPerHour.toLocaleString("en")} batch items/h
              </td>
              <td data-label="Created">
                <Time at={project.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
    <section class="card" aria-labelledby="new-project">
      <h2 id="new-project">New project</h2>
      <ErrorSummary errors={p.errors} ids={fieldIds} />
      <PostForm action="/admin/projects" token={p.c.var.session.csrfToken}>
        <ProjectFields values={p.values ?? {}} errors={p.errors} limits={false} />
        <button type="submit">Create project</button>
      </PostForm>
    </section>
  </Layout>
);

projectPages.get("/", async (c) => c.html(<ProjectsPage c={c} projects={await listProjects(c.var.deps.db)} />));

projectPages.post("/", async (c) => {
  const { values, data, errors } = readProjectForm(c);
  if (!data) return c.html(<ProjectsPage c={c} projects={await listProjects(c.var.deps.db)} values={values} errors={errors} />, 422);
  const project = await write(c, undefined, (trx) => createProject(trx, data.name, isoNow(c.var.deps.clock), data));
  return c.redirect(`${projectPath(project, "settings")}?done=created`, 303);
});

const SettingsPage = (p: { c: Context<AdminEnv>; values: Partial<ProjectValues>; errors?: FormErrors; done?: string }) => {
  const project = p.c.var.project;
  return (
    <Layout title="Settings" session={p.c.var.session} project={project} section="settings">
      <h1>{project.name}</h1>
      <Notice text={p.done === "created" ? "Project created." : p.done === "saved" ? "Settings saved." : null} />
      <dl class="props card">
        <dt>Id</dt>
        <dd class="mono">{project.id}</dd>
        <dt>Contacts</dt>
        <dd>{project.contactCount.toLocaleString("en")}</dd>
        <dt>Created</dt>
        <dd>
          <Time at={project.createdAt} />
        </dd>
      </dl>
      <section class="card" aria-labelledby="settings">
        <h2 id="settings">Name, quota and limits</h2>
        <ErrorSummary errors={p.errors} ids={fieldIds} />
        <PostForm action={projectPath(project, "settings")} token={p.c.var.session.csrfToken}>
          <ProjectFields values={p.values} errors={p.errors} limits />
          <button type="submit">Save</button>
        </PostForm>
      </section>
    </Layout>
  );
};

const valuesOf = (project: Project): ProjectValues => ({
  name: project.name,
  contactQuota: project.contactQuota === null ? "" : String(project.contactQuota),
  rateLimitPerMinute: String(project.rateLimitPerMinute),
  contactCreatesPerHour: String(project.contactCreatesPerHour),
  batchItemsPerHour: String(project.batchItemsPerHour),
});

projectPages.get("/:projectId/settings", (c) => c.html(<SettingsPage c={c} values={valuesOf(c.var.project)} done={c.req.query("done")} />));

projectPages.post("/:projectId/settings", async (c) => {
  const { values, data, errors } = readProjectForm(c);
  if (!data) return c.html(<SettingsPage c={c} values={values} errors={errors} />, 422);
  const id = c.var.project.id;
  // A blank quota removes the limit; blank limits keep their values.
  await write(c, id, (trx) => updateProject(trx, id, { ...data, contactQuota: data.contactQuota ?? null }, isoNow(c.var.deps.clock)));
  return c.redirect(`${projectPath(c.var.project, "settings")}?done=saved`, 303);
});

projectPages.route("/:projectId", homePages);
projectPages.route("/:projectId/keys", keyPages);
projectPages.route("/:projectId/contacts", contactPages);
projectPages.route("/:projectId/reference", referencePages);
projectPages.route("/:projectId/forms", formPages);
projectPages.route("/:projectId/webhooks", webhookPages);
projectPages.route("/:projectId/events", eventPages);
projectPages.route("/:projectId/import", importPages);
projectPages.route("/:projectId", exportPages);
