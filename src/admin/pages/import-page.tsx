import { Hono, type Context } from "hono";
import { notFound } from "../../errors.ts";
import type { AdminEnv } from "../env.ts";
import { clearRejectedRows, findImport, importStatus, REJECTED_ROWS_KEPT, STORED_SKIPS, storedSkips, type ImportRow } from "../imports.ts";
import { askToConfirm, confirmed } from "../confirm.tsx";
import { write } from "../actions.ts";
import { Layout, PostForm, projectPath, TableWrap, Time } from "../ui.tsx";

/**
 * One import's page (docs/admin.md §3): while it runs, a progress bar and counts, refreshed
 * by the page itself every few seconds (a meta refresh, no script); then its summary with
 * the rejected rows and their reasons, or why it failed, and the rejected rows as a CSV to
 * fix and import again (docs/import-export.md §1.11). Read from the database, so any node shows it.
 */
export const importPage = new Hono<AdminEnv>();

const REFRESH_SECONDS = 2;
type Status = ReturnType<typeof importStatus>;

const STATUS_TEXT: Record<Status, [text: string, badge: string]> = {
  running: ["Running", "badge"],
  done: ["Done", "badge ok"],
  failed: ["Failed", "badge bad"],
  interrupted: ["Interrupted", "badge bad"],
};

export const StatusBadge = ({ status }: { status: Status }) => <span class={STATUS_TEXT[status][1]}>{STATUS_TEXT[status][0]}</span>;

const n = (value: number) => value.toLocaleString("en");

const Counts = ({ row }: { row: ImportRow }) => (
  <>
    <dt>Rows</dt>
    <dd>{n(row.rows_read)}</dd>
    <dt>Created</dt>
    <dd>{n(row.created)}</dd>
    <dt>Skipped</dt>
    <dd>{n(row.skipped_count)}</dd>
    <dt>Blank rows skipped</dt>
    <dd>{n(row.blank_rows)}</dd>
  </>
);

const Progress = ({ row }: { row: ImportRow }) => {
  const share = row.bytes_total > 0 ? Math.min(row.bytes_read / row.bytes_total, 1) : 0;
  return (
    <section class="card" aria-labelledby="progress-label">
      <p id="progress-label">
        Importing… {Math.floor(share * 100)}% of the file read. This page refreshes itself every {REFRESH_SECONDS} seconds.
      </p>
      <progress max={row.bytes_total} value={row.bytes_read} aria-labelledby="progress-label">
        {Math.floor(share * 100)}%
      </progress>
    </section>
  );
};

/** The rejected rows' CSV: download it, or delete it before its 7 days are over. */
const RejectedFile = ({ c, row }: { c: Context<AdminEnv>; row: ImportRow }) => {
  const base = `${projectPath(c.var.project, "import")}/${row.id}/rejected`;
  if (row.rejected_csv === null) {
    return row.skipped_count > 0 && row.status !== "running" ? (
      <p class="hint">The rejected rows' CSV is no longer kept: it is deleted 7 days after the import, or when deleted here.</p>
    ) : null;
  }
  return (
    <div class="import-actions">
      <a class="button" href={`${base}.csv`} download>
        Download rejected rows (CSV)
      </a>
      <PostForm action={`${base}/delete`} token={c.var.session.csrfToken} label="Delete rejected rows">
        <button type="submit" class="secondary">
          Delete rejected rows
        </button>
      </PostForm>
      <p class="hint">
        The file's header and each rejected row as it was, with an “error” column giving the reason
        {row.skipped_count > REJECTED_ROWS_KEPT ? ` (the first ${n(REJECTED_ROWS_KEPT)} rows)` : ""}. Fix the rows and import the file again: the “error”
        column is skipped. Kept for 7 days.
      </p>
    </div>
  );
};

const Rejected = ({ c, row }: { c: Context<AdminEnv>; row: ImportRow }) => {
  const skipped = storedSkips(row).sort((a, b) => a.row - b.row);
  if (skipped.length === 0) return null;
  return (
    <section aria-labelledby="rejected" class="import-rejected">
      <h2 id="rejected">Rejected rows</h2>
      <RejectedFile c={c} row={row} />
      <p class="hint">
        {row.skipped_count > skipped.length
          ? `The first ${n(skipped.length)} of ${n(row.skipped_count)} rejected rows (at most ${n(STORED_SKIPS)} are kept).`
          : "Rows count from 1 after the header row."}
      </p>
      <TableWrap label="Rejected rows">
        <table>
          <thead>
            <tr>
              <th scope="col">Row</th>
              <th scope="col">Reason</th>
              <th scope="col">Field</th>
            </tr>
          </thead>
          <tbody>
            {skipped.map((skip) => (
              <tr>
                <td class="num" data-label="Row">
                  {skip.row}
                </td>
                <td class="wrap" data-label="Reason">
                  {skip.reason}
                </td>
                <td class="mono wrap" data-label="Field">
                  {skip.fieldName ?? <span class="none">—</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </section>
  );
};

const INTERRUPTED = "The server running this import stopped before it finished; the rows before it were imported. Upload the rest of the file again.";

const ImportView = ({ c, row }: { c: Context<AdminEnv>; row: ImportRow }) => {
  const status = importStatus(row, c.var.deps.clock.now());
  const reason = status === "interrupted" ? INTERRUPTED : row.error;
  return (
    <Layout title={`Import of ${row.file_name}`} session={c.var.session} project={c.var.project} section="import" refresh={status === "running" ? REFRESH_SECONDS : undefined}>
      <h1>Import of {row.file_name}</h1>
      {status === "running" ? <Progress row={row} /> : null}
      {reason ? (
        <div class="errors" role="alert">
          <h2>Failure reason</h2>
          <p class="prewrap">{reason}</p>
        </div>
      ) : null}
      <dl class="props card" aria-label="Summary">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={status} />
        </dd>
        <dt>File</dt>
        <dd>
          {row.file_name} ({n(row.bytes_total)} bytes)
        </dd>
        <dt>Started</dt>
        <dd>
          <Time at={row.created_at} />
        </dd>
        <dt>{status === "done" || status === "failed" ? "Finished" : "Last progress"}</dt>
        <dd>
          <Time at={row.updated_at} />
        </dd>
        <Counts row={row} />
      </dl>
      <Rejected c={c} row={row} />
      <p>
        <a href={projectPath(c.var.project, "import")}>Back to imports</a>
      </p>
    </Layout>
  );
};

importPage.get("/:importId", async (c) => {
  const row = await findImport(c.var.deps.db, c.var.project.id, c.req.param("importId"));
  if (!row) throw notFound("Import");
  return c.html(<ImportView c={c} row={row} />);
});

/** The rejected rows as a CSV (docs/import-export.md §1.11); 404 once deleted or expired. */
importPage.get("/:importId/rejected.csv", async (c) => {
  const row = await findImport(c.var.deps.db, c.var.project.id, c.req.param("importId"));
  if (!row || row.rejected_csv === null) throw notFound("Rejected rows");
  const name = `rejected-${row.id.replace(/[^A-Za-z0-9-]/g, "-")}.csv`;
  return c.body(row.rejected_csv, 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${name}"`,
    "Cache-Control": "no-store",
  });
});

/** Deletes the rejected rows' CSV now, after a confirmation (docs/admin.md §2). */
importPage.post("/:importId/rejected/delete", async (c) => {
  const { deps, project } = c.var;
  const row = await findImport(deps.db, project.id, c.req.param("importId"));
  if (!row) throw notFound("Import");
  const back = `${projectPath(project, "import")}/${row.id}`;
  if (!confirmed(c)) {
    return askToConfirm(c, {
      title: `Delete the rejected rows of ${row.file_name}?`,
      consequence: <p>Their CSV can no longer be downloaded. The summary's row numbers and reasons stay.</p>,
      button: "Delete rejected rows",
      back,
      section: "import",
    });
  }
  await write(c, project.id, (trx) => clearRejectedRows(trx, project.id, row.id));
  return c.redirect(back, 303);
});
