/**
 * The SQLite scenarios of bench/run.ts: request paths drawn from the measured project's own
 * data, the load runs (warm-up, measured seconds, the server's CPU per request), the
 * single-connection runs, the page-cache drop before the cold ones, and the statement-cache
 * probe (bench/stmt-probe.ts preloaded into the server).
 */
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SECONDS, SINGLE_SECONDS, WARMUP } from "./config.ts";
import { procTicks, runLoad, ticksToUs, type LoadResult } from "./harness/load.ts";

/**
 * Request paths for the read scenarios, from the measured project's own data: contacts by
 * number, emails and phones as they were stored, its types and tags, and 3-letter prefixes
 * of the names (drawn from contacts, so common names come up as often as they occur).
 * Writes the project's interaction types to `tmp`/interaction-types (interaction.lua).
 */
export function samplePaths(dbPath: string, projectId: string, measured: number, tmp: string) {
  const db = new Database(dbPath, { readonly: true });
  const rand = (n: number) => 1 + Math.floor(Math.random() * n);
  const ids = Array.from({ length: 20_000 }, () => rand(measured));
  const rows = db
    .query(`SELECT first_name, last_name, email, phone FROM contacts WHERE project_id = ? AND contact_number IN (${Array.from({ length: 3000 }, () => rand(measured)).join(",")})`)
    .all(projectId) as Array<{ first_name: string | null; last_name: string | null; email: string | null; phone: string | null }>;
  const prefixes = rows.flatMap((r) => {
    const word = [r.first_name, r.last_name][Math.floor(Math.random() * 2)]?.toLowerCase();
    return word && [...word].length >= 3 ? [[...word].slice(0, 3).join("")] : [];
  });
  const emails = rows.flatMap((r) => (r.email ? [r.email] : []));
  const phones = rows.flatMap((r) => (r.phone ? [r.phone] : []));
  const types = db.query("SELECT id FROM contact_types WHERE project_id = ?").all(projectId) as Array<{ id: string }>;
  const tags = db.query("SELECT name FROM tags WHERE project_id = ?").all(projectId) as Array<{ name: string }>;
  const interactionTypes = db.query("SELECT id FROM interaction_types WHERE project_id = ?").all(projectId) as Array<{ id: string }>;
  const hasStat1 = (db.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_stat1'").get() as { n: number }).n > 0;
  const statistics = hasStat1 && (db.query("SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl = 'contacts'").get() as { n: number }).n > 0;
  db.close();
  writeFileSync(join(tmp, "interaction-types"), interactionTypes.map((t) => t.id).join("\n") + "\n");
  const q = encodeURIComponent;
  return {
    get: ids.map((n) => `/v1/contacts/CR-${n}`),
    search: prefixes.map((p) => `/v1/contacts?search=${q(p)}&limit=50`),
    type: types.map((t) => `/v1/contacts?contactTypeId=${q(t.id)}`),
    tag: tags.map((t) => `/v1/contacts?tag=${q(t.name)}`),
    email: emails.map((e) => `/v1/contacts?email=${q(e)}`),
    phone: phones.map((p) => `/v1/contacts?phone=${q(p)}`),
    ids,
    statistics,
  };
}

export type Paths = ReturnType<typeof samplePaths>;

/** Each scenario's paths in a file of `tmp` (get.lua reads one), plus the mixed reads of the statement probe. */
export function writePathFiles(tmp: string, paths: Paths) {
  const write = (name: string, list: string[]) => {
    const file = join(tmp, `${name}.paths`);
    writeFileSync(file, list.join("\n") + "\n");
    return file;
  };
  return {
    get: write("get", paths.get),
    search: write("search", paths.search),
    type: write("type", paths.type),
    tag: write("tag", paths.tag),
    email: write("email", paths.email),
    phone: write("phone", paths.phone),
    mixed: write("mixed", [...paths.get.slice(0, 2000), ...paths.search, ...paths.type, ...paths.tag, ...paths.email.slice(0, 500)]),
  };
}

export type PathFiles = ReturnType<typeof writePathFiles>;

/** Drops the file's pages from the OS page cache (posix_fadvise DONTNEED through GNU dd): the next reads come from disk. */
export function dropFromPageCache(path: string) {
  for (const file of [path, `${path}-wal`]) Bun.spawnSync(["dd", `if=${file}`, "iflag=nocache", "count=0", "status=none"]);
}

export type Measured = LoadResult & { cpuUs: number };

/** The load runs of one bench: wrk (or bench/loadgen.ts) with the run's threads and connections. */
export function loader(o: { wrk: string | null; threads: number; connections: number; tmp: string; children: Set<Subprocess>; contacts: () => number }) {
  /** One wrk (or bench/loadgen.ts) run; source: a file of GET paths, "POST" or "INTERACTIONS" (bench/harness/load.ts). */
  const load = (url: string, key: string | null, source: string, seconds: number, threads = o.threads, connections = o.connections) =>
    runLoad({
      url, key, source, seconds, threads, connections, wrk: o.wrk,
      contacts: o.contacts(), typesFile: join(o.tmp, "interaction-types"), children: o.children,
    });
  return {
    load,
    /** wrk -t1 -c1: the latency of one request with nothing queued in front of it. */
    single: (url: string, key: string, source: string) => load(url, key, source, SINGLE_SECONDS, 1, 1),
    /** Warm-up, then the measured run; with `pid`, that process's CPU (utime+stime) per request over the measured seconds. */
    async scenario(url: string, key: string | null, source: string, pid?: number): Promise<Measured> {
      if (WARMUP > 0) await load(url, key, source, WARMUP);
      const before = pid ? procTicks(pid) : 0;
      const r = await load(url, key, source, SECONDS);
      const cpuUs = pid ? ticksToUs(procTicks(pid) - before) / Math.max(1, r.requests) : Number.NaN;
      return { ...r, cpuUs };
    },
  };
}

export type Loader = ReturnType<typeof loader>;

export interface Probe {
  name: string;
  requests: number;
  distinct: number;
  prepared: number;
}

/**
 * Statements the server prepared under load (a server started with bench/stmt-probe.ts
 * preloaded, writing its counts to `probeFile`): 2 s per scenario after a 1 s warm-up.
 */
export async function statementProbes(load: Loader["load"], url: string, key: string, files: PathFiles, probeFile: string): Promise<Probe[]> {
  const readProbe = async () => {
    await Bun.sleep(400);
    return JSON.parse(await Bun.file(probeFile).text().catch(() => "{}")) as Record<string, number>;
  };
  const probes: Probe[] = [];
  for (const [name, source] of [["GET one", files.get], ["search", files.search], ["list ?tag", files.tag], ["POST", "POST"], ["mixed reads (all GET kinds)", files.mixed]] as const) {
    await load(url, key, source, 1); // first use of each statement is a necessary prepare
    const before = await readProbe();
    const { requests } = await load(url, key, source, 2);
    const after = await readProbe();
    let prepared = 0, distinct = 0;
    for (const [sql, n] of Object.entries(after)) {
      if (n > (before[sql] ?? 0)) distinct++;
      prepared += n - (before[sql] ?? 0);
    }
    probes.push({ name, requests, distinct, prepared });
  }
  return probes;
}
