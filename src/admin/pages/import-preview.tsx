import { Hono, type Context } from "hono";
import { planColumns, SKIP_REASONS, type Column, type ColumnMatch, type HeaderPlan } from "../../transfer/import-columns.ts";
import { ADDRESS_FIELDS, BOOLEAN_FIELDS, CONTACT_TYPE_FIELD, TEXT_FIELDS } from "../../transfer/csv-columns.ts";
import { ApiError } from "../../errors.ts";
import { isoNow } from "../../lib/time.ts";
import { READ_ONLY_TYPES, type CustomField } from "../../reference/custom-fields.ts";
import { allCustomFields } from "../../reference/repository.ts";
import { write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { findUpload, previewUpload, takeUpload, uploadBlob, type UploadPreview, type UploadRow } from "../import-uploads.ts";
import { insertImport, runningImport, startImport } from "../imports.ts";
import { checkUpload } from "../import-checks.ts";
import type { CheckReport } from "../../transfer/import-check.ts";
import { ValueCheck } from "./import-check.tsx";
import { ErrorSummary, Layout, noErrors, PostForm, projectPath, TableWrap, type FormErrors } from "../ui.tsx";

/**
 * The console's check before an import runs (docs/import-export.md §1.6): every column of the
 * uploaded file with the field it fills (or why it is skipped), the first rows under them, a
 * choice of field or "skip" (the console's --map) for each column no field matches and for
 * each lifecycle-like one (the contact type, by name), and every row's values checked as the
 * import will check them. "Check again" checks with the choices made; "Start import" turns
 * the upload into an import (src/admin/imports.ts) with them.
 */
export const importPreview = new Hono<AdminEnv>();

const SAMPLE_ROWS = 3;
/** The select's value for "skip this column" (no field is spelled so: custom fields are offered as customFields.<id>). */
const SKIP = "skip";
const gone = () =>
  new ApiError("ERR_NOT_FOUND", "This upload is gone: an upload is kept for an hour and starts one import. Upload the file again.");

/** The form field of column `i`'s choice (its value: a field, "skip", or "" for none yet). */
const choiceName = (i: number) => `col-${i}`;

/** Every field a column may fill: contact fields, then the project's writable custom fields by title. */
const fieldOptions = (fields: CustomField[]): Array<[string, string]> => [
  ["", "Choose a field…"],
  [SKIP, "Skip this column"],
  ...[...TEXT_FIELDS, ...BOOLEAN_FIELDS, ...ADDRESS_FIELDS, "tags", CONTACT_TYPE_FIELD].map((f): [string, string] => [f, f === CONTACT_TYPE_FIELD ? `${f} (by name)` : f]),
  ...fields.filter((f) => !READ_ONLY_TYPES.includes(f.type)).map((f): [string, string] => [`customFields.${f.id}`, `${f.title} (custom field)`]),
];

const fieldLabel = (column: Column) =>
  column.kind === "custom" ? `${column.field.title} (custom field)` : column.kind === "contactType" ? `${CONTACT_TYPE_FIELD} (by name)` : column.kind === "address" ? `address.${column.key}` : column.kind === "tags" ? "tags" : column.kind === "fullName" ? "firstName and lastName (whole name, split at the first space)" : column.name;

interface View {
  upload: UploadRow;
  preview: UploadPreview;
  fields: CustomField[];
  /** What the admin chose per unknown column, as posted ("skip", a field, or nothing). */
  posted: Map<number, string>;
  /** The columns offering a choice: those no field matches (with their closest field) and the lifecycle-like ones. */
  choosable: Map<number, { closest?: string; lifecycle?: true; default: string }>;
  plan: HeaderPlan | null;
  /** The rows' values checked with the plan; null while the plan has a problem. */
  check: CheckReport | null;
}

/**
 * The upload, its first rows and the header's plan with the choices posted for the columns
 * no field matches (a posted field for any other column is not read: the header decides
 * those); a missing or expired upload is a 404 page.
 */
async function load(c: Context<AdminEnv>, form?: AdminEnv["Variables"]["form"], check = true): Promise<View> {
  const { deps, project } = c.var;
  const upload = await findUpload(deps.db, project.id, c.req.param("uploadId")!, deps.clock.now());
  if (!upload) throw gone();
  const [preview, fields] = await Promise.all([previewUpload(upload, SAMPLE_ROWS), allCustomFields(deps.db, project.id)]);
  const posted = new Map<number, string>();
  if (!preview.header) return { upload, preview, fields, posted, choosable: new Map(), plan: null, check: null };
  const base = planColumns(preview.header, fields);
  const choosable: View["choosable"] = new Map(base.unknown.map((i) => [i, { closest: base.matches[i]!.closest, default: "" }]));
  base.matches.forEach((m, i) => m.lifecycle && choosable.set(i, { lifecycle: true, default: m.column ? CONTACT_TYPE_FIELD : SKIP }));
  for (const i of choosable.keys()) {
    const value = form?.[choiceName(i)];
    if (typeof value === "string" && value !== "") posted.set(i, value);
  }
  const plan = posted.size ? planColumns(preview.header, fields, { chosen: chosenOf(posted) }) : base;
  const view = { upload, preview, fields, posted, choosable, plan, check: null };
  return check ? withCheck(c, view) : view;
}

/** The view with its rows' values checked (not while its columns have a problem). */
async function withCheck(c: Context<AdminEnv>, v: View): Promise<View> {
  if (!v.plan || v.plan.problems.length > 0) return v;
  return { ...v, check: await checkUpload(c.var.deps.db, c.var.project, v.upload, v.plan, v.fields) };
}

/** The posted choices as the importer takes them: a field, or "" to skip. */
const chosenOf = (posted: Map<number, string>) => new Map([...posted].map(([i, value]): [number, string] => [i, value === SKIP ? "" : value]));

const FieldCell = ({ m, i, v, error }: { m: ColumnMatch; i: number; v: View; error?: string }) => {
  const choice = v.choosable.get(i);
  if (!choice) {
    return m.column ? (
      <td data-label="Field">
        {fieldLabel(m.column)}
        {m.fallback !== undefined ? " (second choice: where another column leaves it empty)" : ""}
      </td>
    ) : (
      <td class="none" data-label="Field">
        skipped: {m.skipped ? SKIP_REASONS[m.skipped] : "set by the service"}
      </td>
    );
  }
  const id = `f-${choiceName(i)}`;
  const hint = choice.lifecycle
    ? "lifecycle-like: its values name the project's contact types"
    : choice.closest
      ? `unknown — closest: ${choice.closest}`
      : "unknown (the column has no name)";
  return (
    <td class={error ? "field invalid" : "field"} data-label="Field">
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
      {error ? (
        <p class="error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
      <select id={id} name={choiceName(i)} aria-label={`Field for column ${m.header || i + 1}`} aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`} aria-invalid={error ? "true" : undefined}>
        {fieldOptions(v.fields).map(([value, text]) => (
          <option value={value} selected={value === (v.posted.get(i) ?? choice.default)}>
            {text}
          </option>
        ))}
      </select>
    </td>
  );
};

const Columns = ({ v, errors }: { v: View; errors?: FormErrors }) => (
  <TableWrap label="Columns">
    <table>
      <thead>
        <tr>
          <th scope="col">Column</th>
          <th scope="col">Field</th>
          {v.preview.rows.map((_, r) => (
            <th scope="col">Row {r + 1}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {v.plan!.matches.map((m, i) => (
          <tr>
            <td class="mono wrap" data-label="Column">
              {m.header.trim() === "" ? <span class="none">(column {i + 1}, no name)</span> : m.header}
            </td>
            <FieldCell m={m} i={i} v={v} error={errors?.fields[choiceName(i)]} />
            {v.preview.rows.map((row, r) => (
              <td class="wrap" data-label={`Row ${r + 1}`}>
                {row[i] ?? ""}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  </TableWrap>
);

function previewPage(c: Context<AdminEnv>, v: View, errors?: FormErrors, status: 200 | 409 | 422 = 200) {
  const { project, session } = c.var;
  const ids = Object.fromEntries((v.plan?.unknown ?? []).map((i) => [choiceName(i), `f-${choiceName(i)}`]));
  return c.html(
    <Layout title={`Columns of ${v.upload.file_name}`} session={session} project={project} section="import">
      <h1>Check the columns of {v.upload.file_name}</h1>
      <p>
        Nothing is imported yet. Each column of the file is matched to a field by its header (case, spaces, _, - and . aside; HubSpot's, Pipedrive's and
        Google Contacts' usual headers count). Choose a field, or skip, for each column no field matches; a lifecycle-like column (“Lifecycle Stage”, “Lead
        Status”, …) gives the contact type by name unless you choose otherwise. Check again with your choices, then start the import. This upload is kept
        for an hour.
      </p>
      <ErrorSummary errors={errors} ids={ids} />
      {v.preview.failure ? <p class="error">The file has a malformed record, {v.preview.failure} The import would stop there; the rows before it would be imported.</p> : null}
      {v.plan ? (
        <PostForm action={`${projectPath(project, "import")}/uploads/${v.upload.id}/start`} token={session.csrfToken} label="Start import">
          <Columns v={v} errors={errors} />
          {v.check ? <ValueCheck report={v.check} /> : null}
          <div class="import-actions">
            <button type="submit">Start import</button>
            {v.choosable.size > 0 ? (
              <button type="submit" class="secondary" formaction={`${projectPath(project, "import")}/uploads/${v.upload.id}`}>
                Check again
              </button>
            ) : null}
          </div>
        </PostForm>
      ) : (
        <p class="error">The file has no header row, so it cannot be imported.</p>
      )}
      <p>
        <a href={projectPath(project, "import")}>Back to imports</a>
      </p>
    </Layout>,
    status,
  );
}

importPreview.get("/uploads/:uploadId", async (c) => previewPage(c, await load(c)));
/** "Check again": the preview with the posted choices, their values checked (nothing is written). */
importPreview.post("/uploads/:uploadId", async (c) => previewPage(c, await load(c, c.var.form)));

importPreview.post("/uploads/:uploadId/start", async (c) => {
  const { deps, project } = c.var;
  const v = await load(c, c.var.form, false);
  const errors = noErrors();
  if (!v.plan) errors.general.push("The file has no header row, so it cannot be imported.");
  for (const i of v.plan?.unknown ?? []) {
    const header = v.plan!.matches[i]!.header.trim();
    errors.fields[choiceName(i)] = `Choose the field of column ${header ? `“${header}”` : i + 1}, or skip it.`;
  }
  errors.general.push(...(v.plan?.problems ?? []).map((p) => `${p}.`));
  if (errors.general.length > 0 || Object.keys(errors.fields).length > 0) return previewPage(c, await withCheck(c, v), errors, 422);
  // One import of a project at a time (on any node), as for an upload (src/admin/pages/import.tsx).
  if (await runningImport(deps.db, project.id, deps.clock.now())) {
    errors.general.push("An import of this project is still running; start this one once it finishes.");
    return previewPage(c, await withCheck(c, v), errors, 409);
  }
  const { upload } = v;
  await write(c, project.id, async (trx) => {
    // Deleted first: of two starts of one upload, the second finds nothing and starts nothing.
    if (!(await takeUpload(trx, project.id, upload.id))) throw gone();
    await insertImport(trx, { id: upload.id, projectId: project.id, fileName: upload.file_name, bytesTotal: upload.body.byteLength, now: isoNow(deps.clock) });
  });
  startImport(deps, { id: upload.id, project, file: uploadBlob(upload), columns: { chosen: chosenOf(v.posted) } });
  return c.redirect(`${projectPath(project, "import")}/${upload.id}`, 303);
});
