import { sql, type Expression, type ExpressionBuilder, type SqlBool } from "kysely";

/**
 * The keyset condition of every paginated list (decisions §5): rows strictly after
 * `position` in a list ordered by two columns, both ascending or both descending. The
 * second column is unique, so no row is skipped or repeated across pages.
 */
export function keysetAfter(
  eb: ExpressionBuilder<never, never>,
  columns: readonly [string, string],
  position: readonly [string | number, string | number],
  direction: "asc" | "desc",
): Expression<SqlBool> {
  const op = direction === "asc" ? ">" : "<";
  const [first, second] = [sql.ref(columns[0]), sql.ref(columns[1])];
  return eb.or([eb(first, op, position[0]), eb.and([eb(first, "=", position[0]), eb(second, op, position[1])])]);
}
