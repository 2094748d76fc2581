import type { SqliteHandle } from "../runtime/index.ts";
import { migrations } from "./migrations.ts";

/**
 * Applies the embedded migrations not yet recorded, each in its own IMMEDIATE transaction,
 * so a CLI and a server starting together apply each file exactly once.
 */
export function migrate(raw: SqliteHandle): string[] {
  raw.exec("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT");
  const applied: string[] = [];
  for (const { name, sql } of migrations) {
    raw.exec("BEGIN IMMEDIATE");
    try {
      const done = raw.all("SELECT 1 FROM schema_migrations WHERE name = ?", [name]).length > 0;
      if (!done) {
        raw.exec(sql);
        raw.all("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?) RETURNING name", [
          name,
          new Date().toISOString(),
        ]);
        applied.push(name);
      }
      raw.exec("COMMIT");
    } catch (error) {
      raw.exec("ROLLBACK");
      throw error;
    }
  }
  return applied;
}

/** True when every embedded migration is recorded (for /readyz). */
export function migrationsApplied(raw: SqliteHandle): boolean {
  const rows = raw.all<{ n: number }>("SELECT count(*) AS n FROM schema_migrations");
  return rows[0]?.n === migrations.length;
}
