import { raw } from "hono/html";
import type { Child, FC, PropsWithChildren } from "hono/jsx";
import { assetPath } from "./assets.ts";
import type { Project } from "./env.ts";
import type { Session } from "./sessions.ts";

/**
 * The console's building blocks (docs/admin.md §2): one layout, labelled fields, the CSRF
 * field every form carries. hono/jsx escapes every value it renders; nothing here writes
 * raw HTML.
 */

/** A project's sections, in the order of its navigation (the accessible names the tests rely on). */
export const PROJECT_SECTIONS = [
  ["home", "Home"],
  ["keys", "API keys"],
  ["contacts", "Contacts"],
  ["duplicates", "Duplicates"],
  ["reference", "Reference data"],
  ["forms", "Forms"],
  ["webhooks", "Webhooks"],
  ["events", "Events"],
  ["import", "Import"],
  ["export", "Export"],
  ["settings", "Settings"],
] as const;
export type Section = (typeof PROJECT_SECTIONS)[number][0];

/** A project's page; its home is the project's own path. */
export const projectPath = (project: { id: string }, section?: string) =>
  `/admin/projects/${project.id}${section && section !== "home" ? `/${section}` : ""}`;

/** The hidden CSRF field of every form (docs/admin.md §2). */
export const Csrf: FC<{ token: string }> = ({ token }) => <input type="hidden" name="_csrf" value={token} />;

/** A form that posts to `action` with the CSRF field; children are its fields and buttons. */
export const PostForm: FC<PropsWithChildren<{ action: string; token: string; class?: string; enctype?: "multipart/form-data"; label?: string }>> = (props) => (
  <form method="post" action={props.action} class={props.class} enctype={props.enctype} aria-label={props.label}>
    <Csrf token={props.token} />
    {props.children}
  </form>
);

interface Page {
  title: string;
  session?: Session;
  project?: Project;
  section?: Section;
  /** Refresh the page every N seconds (an import in progress), without script. */
  refresh?: number;
}

export const Layout: FC<PropsWithChildren<Page>> = ({ title, session, project, section, refresh, children }) => (
  <>
  {raw("<!DOCTYPE html>")}
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      {refresh ? <meta http-equiv="refresh" content={String(refresh)} /> : null}
      <title>{project ? `${title} · ${project.name} · CRM admin` : `${title} · CRM admin`}</title>
      <link rel="stylesheet" href={assetPath("admin.css")} />
      <script src={assetPath("admin.js")} defer></script>
    </head>
    <body>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/admin/projects">
          CRM admin
        </a>
        {session ? (
          <div class="who">
            <span class="email">{session.email}</span>
            <PostForm action="/admin/sign-out" token={session.csrfToken} class="inline">
              <button type="submit" class="link">
                Sign out
              </button>
            </PostForm>
          </div>
        ) : null}
      </header>
      {project ? <ProjectNav project={project} section={section} /> : null}
      <main id="main">{children}</main>
    </body>
  </html>
  </>
);

const SectionLinks: FC<{ project: Project; section?: Section; class?: string }> = (p) => (
  <ul class={p.class}>
    {PROJECT_SECTIONS.map(([path, name]) => (
      <li>
        <a href={projectPath(p.project, path)} aria-current={p.section === path ? "page" : undefined}>
          {name}
        </a>
      </li>
    ))}
  </ul>
);

/**
 * The project's navigation: a row of links on a wide screen; on a phone the same links
 * folded into one "Menu" (CSS shows one or the other), so it never takes three rows.
 */
const ProjectNav: FC<{ project: Project; section?: Section }> = ({ project, section }) => (
  <nav class="project" aria-label={`Project ${project.name}`}>
    <div class="head">
      <a href="/admin/projects" class="crumb">
        Projects
      </a>
      <span aria-hidden="true" class="sep">
        /
      </span>
      <a href={projectPath(project)} class="crumb" title={project.name}>
        {project.name}
      </a>
    </div>
    <SectionLinks project={project} section={section} class="wide" />
    <details class="menu">
      <summary>Menu</summary>
      <SectionLinks project={project} section={section} />
    </details>
  </nav>
);

/** What went wrong with a submitted form: one message per field, and messages that belong to no field. */
export interface FormErrors {
  fields: Record<string, string>;
  general: string[];
}
export const noErrors = (): FormErrors => ({ fields: {}, general: [] });

/** The errors at the top of a form, announced, each linking to its field. */
export const ErrorSummary: FC<{ errors?: FormErrors; ids?: Record<string, string> }> = ({ errors, ids }) => {
  if (!errors || (errors.general.length === 0 && Object.keys(errors.fields).length === 0)) return null;
  return (
    <div class="errors" role="alert" tabindex={-1}>
      <h2>There is a problem</h2>
      <ul>
        {errors.general.map((m) => (
          <li>{m}</li>
        ))}
        {Object.entries(errors.fields).map(([field, m]) => (
          <li>{ids?.[field] ? <a href={`#${ids[field]}`}>{m}</a> : m}</li>
        ))}
      </ul>
    </div>
  );
};

/** A field's error, read with it (its id is what aria-describedby names). */
const FieldError: FC<{ id: string; error?: string }> = ({ id, error }) =>
  error ? (
    <p class="error" id={`${id}-error`}>
      {error}
    </p>
  ) : null;

const fieldId = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

interface FieldProps {
  label: string;
  name: string;
  value?: string | number | null;
  type?: string;
  error?: string;
  hint?: Child;
  required?: boolean;
  autocomplete?: string;
  inputmode?: "numeric" | "email" | "tel" | "url" | "decimal";
  id?: string;
  placeholder?: string;
  min?: string | number;
}

/** A labelled input; its error and hint are tied to it (aria-describedby) so a screen reader reads them with it. */
export const Field: FC<FieldProps> = (p) => {
  const id = p.id ?? fieldId(p.name);
  const described = [p.hint ? `${id}-hint` : null, p.error ? `${id}-error` : null].filter(Boolean).join(" ") || undefined;
  return (
    <div class={p.error ? "field invalid" : "field"}>
      <label for={id}>{p.label}</label>
      {p.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {p.hint}
        </p>
      ) : null}
      <FieldError id={id} error={p.error} />
      <input
        id={id}
        name={p.name}
        type={p.type ?? "text"}
        value={p.value ?? undefined}
        required={p.required}
        autocomplete={p.autocomplete}
        inputmode={p.inputmode}
        placeholder={p.placeholder}
        min={p.min}
        aria-invalid={p.error ? "true" : undefined}
        aria-describedby={described}
      />
    </div>
  );
};

export const TextArea: FC<Omit<FieldProps, "type"> & { rows?: number }> = (p) => {
  const id = p.id ?? fieldId(p.name);
  return (
    <div class={p.error ? "field invalid" : "field"}>
      <label for={id}>{p.label}</label>
      <FieldError id={id} error={p.error} />
      <textarea id={id} name={p.name} rows={p.rows ?? 4} required={p.required} aria-invalid={p.error ? "true" : undefined} aria-describedby={p.error ? `${id}-error` : undefined}>
        {p.value ?? ""}
      </textarea>
    </div>
  );
};

export const Select: FC<{ label: string; name: string; options: Array<[value: string, text: string]>; value?: string | null; error?: string; id?: string }> = (p) => {
  const id = p.id ?? fieldId(p.name);
  return (
    <div class={p.error ? "field invalid" : "field"}>
      <label for={id}>{p.label}</label>
      <FieldError id={id} error={p.error} />
      <select id={id} name={p.name} aria-invalid={p.error ? "true" : undefined} aria-describedby={p.error ? `${id}-error` : undefined}>
        {p.options.map(([value, text]) => (
          <option value={value} selected={value === (p.value ?? "")}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
};

export const Checkbox: FC<{ label: string; name: string; value?: string; checked?: boolean; id?: string }> = (p) => {
  const id = p.id ?? fieldId(`${p.name}-${p.value ?? "on"}`);
  return (
    <div class="check">
      <input type="checkbox" id={id} name={p.name} value={p.value ?? "on"} checked={p.checked} />
      <label for={id}>{p.label}</label>
    </div>
  );
};

/** A button that copies the text of the element `target` names; hidden until the console's script runs. */
export const CopyButton: FC<{ target: string; label?: string }> = ({ target, label }) => (
  <button type="button" class="secondary copy" data-copy={target} hidden>
    {label ?? "Copy"}
  </button>
);

/**
 * A secret shown once (a new API key, a new signing secret), in a read-only text box named
 * by `label`: selectable, copyable with its button, readable as its value and as its text.
 * Pages show it from a one-time cookie (src/admin/shown-once.ts), so a reload does not.
 */
export const ShownOnce: FC<{ label: string; value: string; note: string }> = ({ label, value, note }) => (
  <section class="once" aria-labelledby="once-label">
    <label for="once-value" id="once-label">
      {label}
    </label>
    <textarea id="once-value" readonly rows={2} spellcheck={false} autocomplete="off">
      {value}
    </textarea>
    <CopyButton target="once-value" label={`Copy ${label.charAt(0).toLowerCase()}${label.slice(1)}`} />
    <p class="hint">{note}</p>
  </section>
);

/**
 * A time as UTC ISO text, machine-readable too; a dash when there is none. The date and the
 * clock time each stay on one line, so a narrow table column breaks it in two, not in four.
 */
export const Time: FC<{ at: string | null | undefined }> = ({ at }) => {
  if (!at) return <span class="none">—</span>;
  const text = at.replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, " UTC");
  const space = text.indexOf(" ");
  if (space < 0) return <time datetime={at}>{text}</time>;
  return (
    <time datetime={at}>
      <span>{text.slice(0, space)}</span> <span>{text.slice(space + 1)}</span>
    </time>
  );
};

/** A wide table that scrolls inside itself on a phone instead of the whole page. */
export const TableWrap: FC<PropsWithChildren<{ label: string }>> = ({ label, children }) => (
  <div class="table" role="region" aria-label={label} tabindex={0}>
    {children}
  </div>
);

/** A status line after a successful action (post/redirect/get carries it as `?done=`). */
export const Notice: FC<{ text?: string | null }> = ({ text }) =>
  text ? (
    <p class="notice" role="status">
      {text}
    </p>
  ) : null;
