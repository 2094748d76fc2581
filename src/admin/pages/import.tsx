import { Hono, type Context } from "hono";
import { newId } from "../../lib/ids.ts";
import { write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { storeUpload } from "../import-uploads.ts";
import { importStatus, recentImports, runningImport, type ImportRow } from "../imports.ts";
import { ErrorSummary, Layout, noErrors, PostForm, projectPath, TableWrap, Time, type FormErrors } from "../ui.tsx";
import { importPage, StatusBadge } from "./import-page.tsx";
import { importPreview } from "./import-preview.tsx";

/**
 * CSV import of a project (docs/admin.md §3, docs/import-export.md §1): upload a file, check which field each
 * column fills (src/admin/pages/import-preview.tsx), start it, watch its progress, read the
 * summary. The import runs in the background through the importer of `crm import`
 * (src/admin/imports.ts).
 */
export const importPages = new Hono<AdminEnv>();

const UploadForm = (p: { c: Context<AdminEnv>; errors?: FormErrors }) => {
  const error = p.errors?.fields.file;
  return (
    <section class="card" aria-labelledby="upload">
      <h2 id="upload">New import</h2>
      <ErrorSummary errors={p.errors} ids={{ file: "f-file" }} />
      <PostForm action={projectPath(p.c.var.project, "import")} token={p.c.var.session.csrfToken} enctype="multipart/form-data">
        <div class={error ? "field invalid" : "field"}>
          <label for="f-file">CSV file</label>
          <p class="hint" id="f-file-hint">
            The first row names the columns: contact fields (firstName, lastName, email, phone, businessName, website, notes, address.city, tags, …),
            HubSpot's, Pipedrive's and Google Contacts' usual headers (First Name, Website URL, State/Region, Person - Email, Lifecycle Stage, …) or
            custom fields by id or title. The next page shows the field of each
            column and checks every row's values before anything is imported. Each other row creates a contact with source “import”, under the project's quota; no contact.created
            event is sent. At most 20 MiB.
          </p>
          {error ? (
            <p class="error" id="f-file-error">
              {error}
            </p>
          ) : null}
          <input id="f-file" type="file" name="file" accept=".csv,text/csv" required aria-invalid={error ? "true" : undefined} aria-describedby={error ? "f-file-hint f-file-error" : "f-file-hint"} />
        </div>
        <button type="submit">Upload</button>
      </PostForm>
    </section>
  );
};

const ImportList = (p: { c: Context<AdminEnv>; imports: ImportRow[] }) => {
  const now = p.c.var.deps.clock.now();
  if (p.imports.length === 0) return <p class="none">No file has been imported into this project from the console yet.</p>;
  return (
    <TableWrap label="Recent imports">
      <table>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Started</th>
            <th scope="col">Status</th>
            <th scope="col">Rows</th>
            <th scope="col">Created</th>
            <th scope="col">Skipped</th>
          </tr>
        </thead>
        <tbody>
          {p.imports.map((row) => (
            <tr>
              <td data-label="File" class="wrap">
                <a href={`${projectPath(p.c.var.project, "import")}/${row.id}`}>{row.file_name}</a>
              </td>
              <td data-label="Started">
                <Time at={row.created_at} />
              </td>
              <td data-label="Status">
                <StatusBadge status={importStatus(row, now)} />
              </td>
              <td class="num" data-label="Rows">
                {row.rows_read.toLocaleString("en")}
              </td>
              <td class="num" data-label="Created">
                {row.created.toLocaleString("en")}
              </td>
              <td class="num" data-label="Skipped">
                {row.skipped_count.toLocaleString("en")}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
};

/** The section's page: the upload form (with what was wrong with the last upload) and the project's recent imports. */
async function importsPage(c: Context<AdminEnv>, errors?: FormErrors, status: 200 | 409 | 422 = 200) {
  const imports = await recentImports(c.var.deps.db, c.var.project.id);
  return c.html(
    <Layout title="Import" session={c.var.session} project={c.var.project} section="import">
      <h1>Import</h1>
      <UploadForm c={c} errors={errors} />
      <h2>Recent imports</h2>
      <ImportList c={c} imports={imports} />
    </Layout>,
    status,
  );
}

importPages.get("/", (c) => importsPage(c));

/** The file's own name, without a path some browsers send, at most 255 characters. */
const fileNameOf = (file: File) => (file.name.split(/[\\/]/).pop() || "upload.csv").slice(0, 255);

importPages.post("/", async (c) => {
  const sent = c.var.form.file;
  const file = Array.isArray(sent) ? sent[0] : sent;
  const refuse = async (status: 409 | 422, message: string) => {
    const errors = noErrors();
    errors.fields.file = message;
    return importsPage(c, errors, status);
  };
  if (!(file instanceof File) || file.size === 0) return refuse(422, "Choose a CSV file (with a header row) to import.");
  const { deps, project } = c.var;
  // One import of a project at a time (on any node): a second would only compete with it for the project's share of writes.
  if (await runningImport(deps.db, project.id, deps.clock.now())) {
    return refuse(409, "An import of this project is still running; wait until it finishes, then upload the next file.");
  }
  // Stored, not run: its columns are shown first (docs/import-export.md §1); the import takes this id when it starts.
  const id = newId("imp");
  const body = new Uint8Array(await file.arrayBuffer());
  await write(c, project.id, (trx) => storeUpload(trx, { id, projectId: project.id, fileName: fileNameOf(file), body, now: deps.clock.now() }));
  return c.redirect(`${projectPath(project, "import")}/uploads/${id}`, 303);
});

importPages.route("/", importPreview);
importPages.route("/", importPage);
