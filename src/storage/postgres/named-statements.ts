import pg from "pg";

/**
 * Named prepared statements for the statements built once (src/storage/prepared.ts,
 * docs/scaling.md §4): each connection parses such a statement once and, after five runs,
 * PostgreSQL may keep a generic plan for it, so a GET by id is no longer planned anew each
 * time (0.5–0.6 ms of a 1.4 ms statement, docs/performance.md). Every other statement stays
 * unnamed. Named statements are session state: behind PgBouncer this needs session mode, which
 * the service requires anyway (docs/scaling.md §4).
 */
const names = new Map<string, string>();

/** Marks `sql` as built once: from now on every connection runs it as a named statement. */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `crm_${names.size + 1}`);
}

/**
 * PostgreSQL refuses to run a prepared statement whose result columns changed under it
 * (SQLSTATE 0A000, "cached plan must not change result type"): a `contacts.*` read prepared
 * before a newer node's migration added a column.
 */
function isStalePlan(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e?.code === "0A000" && typeof e.message === "string" && e.message.includes("cached plan must not change result type");
}

type Rows = pg.QueryResult<pg.QueryResultRow>;

/**
 * node-postgres's client, running the statements marked by `nameStatement` by name. When one
 * has gone stale, this connection moves to a new generation of names (`crm_7_1`): the
 * migration that changed it may have changed others, and each is prepared again as it next
 * runs (the old ones are left to the session). The stale run is repeated at once when no
 * transaction was open, since it changed nothing; inside a transaction the error reaches the
 * request (500 with Retry-After, docs/api.md §4), whose retry finds the new name.
 */
export class NamedStatementsClient extends pg.Client {
  #generation = 0;

  // pg's overloads (callbacks, config objects, cursors) pass through untouched.
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    const name = typeof text === "string" && callback === undefined ? names.get(text) : undefined;
    if (name === undefined || (values !== undefined && !Array.isArray(values))) return (super.query as (...a: unknown[]) => never)(...args);
    return this.#runNamed(name, text as string, (values ?? []) as unknown[]) as never;
  }

  async #runNamed(name: string, text: string, values: unknown[]): Promise<Rows> {
    const idle = this.getTransactionStatus() === "I";
    try {
      return await super.query({ name: `${name}_${this.#generation}`, text, values });
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      this.#generation++;
      if (!idle) throw error;
      return await super.query({ name: `${name}_${this.#generation}`, text, values });
    }
  }
}
