import { Hono, type Context } from "hono";
import { exportContacts, type ExportFormat } from "../../transfer/export.ts";
import type { AdminEnv } from "../env.ts";
import { Layout, projectPath } from "../ui.tsx";

/**
 * A project's "Export" action (docs/admin.md §3, docs/import-export.md §2, docs/security.md §8): a page with the contact count and
 * two downloads, CSV and JSON lines, streamed by the exporter of `crm export`
 * (src/transfer/export.ts), so a download is byte for byte what the CLI writes. The CSV's
 * formulas are neutralised, as the CLI's are; /export.csv?raw=1 is `crm export --raw`.
 * Mounted at /admin/projects/:projectId: the downloads are /export.csv and /export.jsonl
 * beside /export.
 */
export const exportPages = new Hono<AdminEnv>();

const TYPES: Record<ExportFormat, string> = { csv: "text/csv; charset=utf-8", jsonl: "application/x-ndjson" };

/** `Acme Ltd.` → `acme-ltd`: a file name every system takes; the project id when nothing is left. */
export function fileStem(project: { id: string; name: string }): string {
  const slug = project.name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return slug || project.id;
}

const ExportPage = (p: { c: Context<AdminEnv> }) => {
  const project = p.c.var.project;
  const base = projectPath(project, "export");
  const count = project.contactCount;
  return (
    <Layout title="Export" session={p.c.var.session} project={project} section="export">
      <h1>Export</h1>
      <section class="card" aria-labelledby="download">
        <h2 id="download">Download every contact</h2>
        <p>
          This project has <strong>{count.toLocaleString("en")}</strong> {count === 1 ? "contact" : "contacts"}. The file lists them in contact-number order
          (CR-1, CR-2, …), as they are while it downloads.
        </p>
        <div class="actions">
          <a class="button" href={`${base}.csv`} download>
            Download CSV
          </a>
          <a class="button secondary" href={`${base}.jsonl`} download>
            Download JSON lines
          </a>
        </div>
        <p class="hint">
          CSV: one row per contact, tags and multi-select values joined by “; ”, custom fields by title; it imports into another project as the same contacts
          (Import). JSON lines: one contact per line, exactly as the API answers GET /v1/contacts/CR-n. The same files come from{" "}
          <code>crm export --project {project.id} --format csv|jsonl</code>.
        </p>
        <p class="hint">
          Spreadsheets: a CSV cell that starts with =, +, -, @, a tab or a carriage return gets a leading ' so it opens as text, never as a formula; Import
          takes the ' off again. For scripts that need the cells exactly as stored (never for a spreadsheet):{" "}
          <a href={`${base}.csv?raw=1`} download>
            raw CSV
          </a>{" "}
          (<code>crm export --raw</code>).
        </p>
      </section>
    </Layout>
  );
};

exportPages.get("/export", (c) => c.html(<ExportPage c={c} />));

/**
 * A download of the export: a stream the browser pulls, each page of contacts read only
 * when the previous one has been sent (constant memory, a slow client slows its own export).
 * An error past the first byte cannot change the status any more: the stream is broken
 * off, so the browser reports a failed download instead of saving a short file as whole.
 */
function download(c: Context<AdminEnv>, format: ExportFormat, raw = false) {
  const { deps, project } = c.var;
  const chunks = exportContacts(deps.db, project.id, format, { raw });
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (error) {
        deps.log.error("export failed", { requestId: c.var.requestId, projectId: project.id, error: String((error as Error)?.message ?? error) });
        controller.error(error);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  const date = new Date(deps.clock.now()).toISOString().slice(0, 10);
  return c.body(body, 200, {
    "Content-Type": TYPES[format],
    "Content-Disposition": `attachment; filename="${fileStem(project)}-contacts-${date}${raw ? "-raw" : ""}.${format}"`,
    "Cache-Control": "no-store",
  });
}

// ?raw=1: exact cells, formulas included (docs/security.md §8); anything else is the neutralised default.
exportPages.get("/export.csv", (c) => download(c, "csv", c.req.query("raw") === "1"));
exportPages.get("/export.jsonl", (c) => download(c, "jsonl"));
