/**
 * The PostgreSQL bench's data helpers (bench/postgres.ts): request paths drawn from the
 * measured project, pg_stat_statements' top statements, planner statistics and the log
 * summaries (bench/report/postgres.ts prints them).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import type { LoadResult } from "../harness/load.ts";
// ---------- data for the scenarios ----------

export const client = async (url: string) => {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => {});
  await c.connect();
  return c;
};

/** Request paths from the measured project's data, as bench/run.ts samplePaths draws them (and ids for the raw reads). */
export async function samplePaths(url: string, projectId: string, measured: number, tmp: string) {
  const db = await client(url);
  try {
    const rand = (n: number) => 1 + Math.floor(Math.random() * n);
    const numbers = Array.from({ length: 20_000 }, () => rand(measured));
    const { rows } = await db.query<{ first_name: string | null; last_name: string | null; email: string | null; phone: string | null }>(
      "SELECT first_name, last_name, email, phone FROM contacts WHERE project_id = $1 AND contact_number = ANY($2::int[])",
      [projectId, Array.from({ length: 3000 }, () => rand(measured))],
    );
    const prefixes = rows.flatMap((r) => {
      const word = [r.first_name, r.last_name][Math.floor(Math.random() * 2)]?.toLowerCase();
      return word && [...word].length >= 3 ? [[...word].slice(0, 3).join("")] : [];
    });
    const column = async (sql: string) => (await db.query(sql, [projectId])).rows.map((r) => String(Object.values(r)[0]));
    const types = await column("SELECT id FROM contact_types WHERE project_id = $1");
    const tags = await column("SELECT name FROM tags WHERE project_id = $1");
    const interactionTypes = await column("SELECT id FROM interaction_types WHERE project_id = $1");
    const ids = (await column("SELECT id FROM contacts WHERE project_id = $1 ORDER BY random() LIMIT 20000")).map(Number);
    const q = encodeURIComponent;
    const write = (name: string, paths: string[]) => {
      const file = join(tmp, `${name}.paths`);
      writeFileSync(file, paths.join("\n") + "\n");
      return file;
    };
    const typesFile = join(tmp, "interaction-types");
    writeFileSync(typesFile, interactionTypes.join("\n") + "\n");
    return {
      files: {
        get: write("get", numbers.map((n) => `/v1/contacts/CR-${n}`)),
        search: write("search", prefixes.map((p) => `/v1/contacts?search=${q(p)}&limit=50`)),
        type: write("type", types.map((t) => `/v1/contacts?contactTypeId=${q(t)}`)),
        tag: write("tag", tags.map((t) => `/v1/contacts?tag=${q(t)}`)),
        email: write("email", rows.flatMap((r) => (r.email ? [`/v1/contacts?email=${q(r.email)}`] : []))),
        phone: write("phone", rows.flatMap((r) => (r.phone ? [`/v1/contacts?phone=${q(r.phone)}`] : []))),
      },
      typesFile,
      ids,
    };
  } finally {
    await db.end();
  }
}

// ---------- measuring ----------

export interface Measured {
  name: string;
  nodes: number;
  r: LoadResult;
  crmUs: number;
  pgUs: number;
}

/** A row of pg_stat_statements (times in ms). */
export interface Statement {
  query: string;
  calls: number;
  total: number;
  mean: number;
  max: number;
  rows: number;
}

/** pg_stat_statements of the bench database since the last reset: the statements that took the most time. */
export async function topStatements(url: string, limit: number): Promise<Statement[]> {
  const db = await client(url);
  try {
    const { rows } = await db.query<Statement>(
      `SELECT query, calls::float8 AS calls, total_exec_time AS total, mean_exec_time AS mean, max_exec_time AS max, rows::float8 AS rows
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       ORDER BY total_exec_time DESC LIMIT $1`,
      [limit],
    );
    return rows;
  } finally {
    await db.end();
  }
}

/**
 * Whether autovacuum had analyzed the tables the lists read when the measuring began (nobody
 * runs ANALYZE here, as on SQLite: the figures are what a database built through the API gets).
 */
export async function planStatistics(url: string): Promise<string> {
  const db = await client(url);
  try {
    const { rows } = await db.query<{ relname: string; analyzed: string | null; mods: number; live: number }>(
      `SELECT relname, coalesce(last_autoanalyze, last_analyze)::text AS analyzed, n_mod_since_analyze::float8 AS mods, n_live_tup::float8 AS live
       FROM pg_stat_user_tables WHERE relname IN ('contacts', 'contact_tags', 'contact_search_terms') ORDER BY relname`,
    );
    return rows.map((r) => `${r.relname} ${r.analyzed ? `analyzed by autovacuum, ${r.mods.toLocaleString("en")} rows changed since` : "never analyzed"}`).join("; ");
  } finally {
    await db.end();
  }
}

export async function resetStatements(url: string) {
  const db = await client(url);
  await db.query("SELECT pg_stat_statements_reset()").finally(() => db.end());
}

/** Counts of the nodes' log lines by level and message (warn and above: the nodes run at warn). */
export function nodeLogSummary(files: string[]): string[] {
  const counts = new Map<string, number>();
  for (const file of files) {
    for (const path of [file, `${file}.err`]) {
      if (!existsSync(path)) continue;
      for (const line of readFileSync(path, "utf8").split("\n")) {
        if (!line.trim()) continue;
        let key = `stderr: ${line.slice(0, 160)}`;
        try {
          const j = JSON.parse(line) as { level?: string; msg?: string; error?: string };
          key = `${j.level} "${j.msg}"${j.error ? ` (${String(j.error).split("\n")[0]!.slice(0, 140)})` : ""}`;
        } catch {}
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} × ${k}`);
}

/** PostgreSQL's own log: slow statements (by their text), lock waits, errors. */
export function postgresLogSummary(lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const [i, line] of lines.entries()) {
    const m = /(LOG|WARNING|ERROR|FATAL|PANIC):\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, level, text] = m as unknown as [string, string, string];
    let key: string;
    if (/^duration: /.test(text)) {
      // A statement that starts with a line break continues on the next log line.
      const sql = text.replace(/^duration: [\d.]+ ms\s+(statement|execute [^:]*|parse [^:]*|bind [^:]*):\s*/, "") || (lines[i + 1] ?? "");
      key = `slow statement: ${sql.replace(/\s+/g, " ").trim().slice(0, 160)}`;
    }
    else if (/still waiting for|acquired .* after/.test(text)) key = `lock wait: ${text.replace(/\d+/g, "N").slice(0, 160)}`;
    else if (level === "LOG") continue; // start-up, checkpoints
    else key = `${level}: ${text.replace(/\s+/g, " ").slice(0, 160)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} × ${k}`);
}

