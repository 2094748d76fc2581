import { sql, type Expression, type ExpressionBuilder, type SqlBool } from "kysely";

/**
 * The keyset condition of every paginated list (docs/api.md §11): rows strictly after
 * `position` in a list ordered by two columns, both ascending or both descending. The
 * second column is unique, so no row is skipped or repeated across pages.
 */
export function keysetAfter(
  eb: ExpressionBuilder<never, never>,
  columns: readonly [string | Expression<unknown>, string | Expression<unknown>],
  position: readonly [string | number, string | number],
  direction: "asc" | "desc",
): Expression<SqlBool> {
  const op = direction === "asc" ? ">" : "<";
  // A column is a name, or an expression such as filterOnly(name) (src/storage/sqlite/statistics.ts).
  const [first, second] = columns.map((c) => (typeof c === "string" ? sql.ref(c) : c)) as [Expression<unknown>, Expression<unknown>];
  const after = eb.or([eb(first, op, position[0]), eb.and([eb(first, "=", position[0]), eb(second, op, position[1])])]);
  // The first column's own bound lets an index seek to the position instead of walking every earlier page.
  return eb.and([eb(first, `${op}=`, position[0]), after]);
}
