import { HONEYPOT, IDENTITY_FIELDS, type FieldSpec } from "./fields.ts";
import type { FieldError, RawSubmission } from "./input.ts";

/**
 * The pages of a web form (docs/api.md §15): plain HTML, no script, no external asset. Every
 * input has a bound label, a type that fits its field and an autocomplete token where one
 * exists; errors are listed in an alert region and tied to their inputs with
 * aria-describedby. Everything from the database or the submitter is escaped.
 */

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

const STYLE = `body{font:1rem/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff;margin:0;padding:1rem}
main{max-width:36rem;margin:0 auto}label,legend{display:block;font-weight:600;margin-bottom:.25rem}
.field{margin:0 0 1rem}fieldset{border:0;margin:0 0 1rem;padding:0}.choice{font-weight:400;display:flex;gap:.5rem;align-items:center}
input:not([type=checkbox]):not([type=radio]),select,textarea{box-sizing:border-box;width:100%;font:inherit;padding:.5rem;border:1px solid #555;border-radius:4px}
textarea{min-height:6rem}:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}[aria-invalid=true]{border-color:#b00020}
.error{color:#b00020;margin:.25rem 0 0}.errors{border:2px solid #b00020;padding:.5rem 1rem;margin-bottom:1rem}
button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:4px;background:#1d4ed8;color:#fff;cursor:pointer}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** Headers of every form page: no script, no outside asset; the form posts here (and may be sent on to the redirect). */
export function pageHeaders(redirectUrl: string | null): Record<string, string> {
  const formAction = ["'self'", ...(redirectUrl ? [new URL(redirectUrl).origin] : [])].join(" ");
  return {
    "Content-Security-Policy": `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; base-uri 'none'`,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
  };
}

const inputId = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

/** The form, empty, or filled again with what was sent and the errors that refused it. */
export function formPage(
  form: { id: string; name: string },
  specs: FieldSpec[],
  sent: { values?: RawSubmission; errors?: FieldError[] } = {},
): string {
  const errors = sent.errors ?? [];
  const labelOf = (name: string) => specs.find((s) => s.name === name)?.label ?? name;
  const summary = errors.length
    ? `<div class="errors" role="alert" aria-labelledby="errors-title">
<h2 id="errors-title">Please correct ${errors.length === 1 ? "this field" : "these fields"}</h2>
<ul>
${errors.map((e) => `<li><a href="#${inputId(e.fieldName)}">${escape(labelOf(e.fieldName))}: ${escape(detail(e))}</a></li>`).join("\n")}
</ul>
</div>`
    : "";
  const identities = specs.filter((s) => IDENTITY_FIELDS.includes(s.name));
  const fields = specs.map((spec) => {
    const error = errors.find((e) => e.fieldName === spec.name);
    const values = valuesOf(sent.values?.[spec.name]);
    // With one identity field, that field is what makes a contact: the browser asks for it.
    const required = identities.length === 1 && identities[0] === spec;
    return field(spec, values, error, required);
  });
  const hint =
    identities.length > 1 ? `<p>Fill in at least one of: ${identities.map((s) => escape(s.label)).join(", ")}.</p>\n` : "";
  return page(
    form.name,
    `<h1>${escape(form.name)}</h1>
${summary}
<form method="post" action="/v1/forms/${encodeURIComponent(form.id)}/submissions" accept-charset="utf-8">
${hint}${fields.join("\n")}
<div class="hp" hidden>
<label for="${HONEYPOT}">Leave this field empty</label>
<input type="text" id="${HONEYPOT}" name="${HONEYPOT}" value="" tabindex="-1" autocomplete="off" hidden>
</div>
<button type="submit">Send</button>
</form>`,
  );
}

function field(spec: FieldSpec, values: string[], error: FieldError | undefined, required: boolean): string {
  const id = inputId(spec.name);
  const name = escape(spec.name);
  const errorId = `${id}-error`;
  const aria = error ? ` aria-invalid="true" aria-describedby="${errorId}"` : "";
  const errorLine = error ? `\n<p class="error" id="${errorId}">${escape(detail(error))}</p>` : "";
  const req = required ? " required" : "";
  const value = values[values.length - 1] ?? "";
  if (spec.kind === "radio" || spec.kind === "multiselect") {
    const type = spec.kind === "radio" ? "radio" : "checkbox";
    const choices = (spec.options ?? []).map((option, i) => {
      const checked = values.includes(option) ? " checked" : "";
      const oid = i === 0 ? id : `${id}-${i}`;
      return `<label class="choice" for="${oid}"><input type="${type}" id="${oid}" name="${name}" value="${escape(option)}"${checked}${aria}>${escape(option)}</label>`;
    });
    return `<fieldset class="field"${error ? ` aria-describedby="${errorId}"` : ""}>\n<legend>${escape(spec.label)}</legend>\n${choices.join("\n")}${errorLine}\n</fieldset>`;
  }
  if (spec.kind === "checkbox") {
    const checked = values.some((v) => ["true", "on", "1", "yes"].includes(v.toLowerCase())) ? " checked" : "";
    return `<div class="field">\n<label class="choice" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="true"${checked}${aria}>${escape(spec.label)}</label>${errorLine}\n</div>`;
  }
  const attrs = `id="${id}" name="${name}"${spec.maxLength ? ` maxlength="${spec.maxLength}"` : ""}${spec.autocomplete ? ` autocomplete="${spec.autocomplete}"` : ""}${req}${aria}`;
  let control: string;
  if (spec.kind === "textarea") control = `<textarea ${attrs}>${escape(value)}</textarea>`;
  else if (spec.kind === "select") {
    const options = (spec.options ?? []).map((o) => `<option value="${escape(o)}"${o === value ? " selected" : ""}>${escape(o)}</option>`);
    control = `<select ${attrs}>\n<option value="">Choose…</option>\n${options.join("\n")}\n</select>`;
  } else {
    const step = spec.kind === "number" ? ` step="any"` : "";
    control = `<input type="${spec.kind}" ${attrs}${step} value="${escape(value)}">`;
  }
  return `<div class="field">\n<label for="${id}">${escape(spec.label)}</label>\n${control}${errorLine}\n</div>`;
}

/** A short page: thank-you, or why a submission was refused. */
export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escape(title)}</h1>\n<p>${escape(message)}</p>`);
}

function valuesOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** "email must be a valid email address." → "Must be a valid email address." (the label beside it says which field). */
function detail({ fieldName, message }: FieldError): string {
  const text = message.startsWith(`${fieldName} `) ? message.slice(fieldName.length + 1) : message;
  return text.charAt(0).toUpperCase() + text.slice(1);
}
