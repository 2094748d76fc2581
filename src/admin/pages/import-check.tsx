import type { CheckReport } from "../../transfer/import-check.ts";
import { TableWrap } from "../ui.tsx";

/**
 * The preview's "Values" section (docs/import-export.md §1.6): how many rows the import would
 * create, reject and skip as blank, and the reasons of the rejected ones with their counts
 * and first rows, before "Start import".
 */
const n = (value: number) => value.toLocaleString("en");
const plural = (count: number, one: string, many = `${one}s`) => `${n(count)} ${count === 1 ? one : many}`;

export const ValueCheck = ({ report }: { report: CheckReport }) => (
  <section class="card import-check" aria-labelledby="values">
    <h2 id="values">Values</h2>
    <p id="values-summary">
      Rows are checked as the import will check them, with the fields above; nothing was written.{" "}
      {report.checked < report.rows ? `Of the first ${plural(report.checked, "row")} of ${n(report.rows)},` : `Of ${plural(report.rows, "row")},`}{" "}
      <strong>{n(report.passing)}</strong> would be created and <strong>{n(report.failing)}</strong> would be rejected
      {report.blankRows > 0 ? <>; {plural(report.blankRows, "blank row")} would be skipped</> : null}.
    </p>
    {report.checked < report.rows ? (
      <p class="hint">
        The check ran out of time after row {n(report.checked)}: the counts above are of the first {plural(report.checked, "row")}; the other rows are
        checked as they are imported.
      </p>
    ) : null}
    {report.failure ? <p class="error">The file has a malformed record, {report.failure} The import would stop there.</p> : null}
    {report.reasons.length > 0 ? (
      <TableWrap label="Rows that would be rejected">
        <table>
          <thead>
            <tr>
              <th scope="col">Reason</th>
              <th scope="col">Field</th>
              <th scope="col">Rows</th>
              <th scope="col">First rows</th>
            </tr>
          </thead>
          <tbody>
            {report.reasons.map((g) => (
              <tr>
                <td data-label="Reason" class="wrap">
                  {g.reason}
                </td>
                <td data-label="Field" class="mono wrap">
                  {g.fieldName ?? <span class="none">—</span>}
                </td>
                <td data-label="Rows" class="num">
                  {n(g.count)}
                </td>
                <td data-label="First rows" class="num">
                  {g.rows.join(", ")}
                  {g.count > g.rows.length ? ", …" : ""}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    ) : null}
    {report.otherReasons > 0 ? <p class="hint">{plural(report.otherReasons, "more row")} would be rejected for other reasons.</p> : null}
    <p class="hint">
      Rows count from 1 after the header row. A value a unique custom field already holds is found only as the rows are written. Rejected rows can be
      downloaded as a CSV from the import's page once it has run.
    </p>
  </section>
);
