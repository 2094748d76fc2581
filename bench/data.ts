/**
 * The data of bench/run.ts: three projects filled at once through the API (the first is
 * measured; bench/harness/seed/api.ts), or with BENCH_DATA=<dir> the database an earlier run
 * built that way, copied into the temp dir (never written where it lies), its tenants and
 * seed figures from its tenants.json (found by name and given new keys without one).
 * Right after seeding, tenants.json in the temp dir keeps the project ids, keys, counts and
 * the seed figures, for a later BENCH_DATA run (with BENCH_KEEP=1).
 */
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTenants, findTenants, type ApiSeedProject, type ApiSeedResult } from "./harness/seed/api.ts";

export interface BenchData {
  made: ApiSeedProject[];
  seeded: ApiSeedResult | null;
  /** How reused data was built (empty for data this run builds). */
  dataNote: string;
  builtAt: string | undefined;
}

/** The tenants to build (`contacts` in the measured one), or those of BENCH_DATA with their counts as they are now. */
export function prepareData(o: { data: string | null; tmp: string; dbPath: string; contacts: number; cli: (args: string[]) => any; log: (msg: string) => void }): BenchData {
  if (!o.data) return { made: createTenants(o.cli, o.contacts), seeded: null, dataNote: "", builtAt: new Date().toISOString() };
  const DATA = o.data;
  if (!existsSync(join(DATA, "crm.db"))) throw new Error(`BENCH_DATA=${DATA} holds no crm.db`);
  o.log(`reusing the database of ${DATA} (BENCH_DATA): copying it into ${o.tmp}…`);
  for (const file of ["crm.db", "crm.db-wal", "secret.key"]) if (existsSync(join(DATA, file))) copyFileSync(join(DATA, file), join(o.tmp, file));
  let made: ApiSeedProject[];
  let seeded: ApiSeedResult | null = null;
  let dataNote: string;
  let builtAt: string | undefined;
  const saved = join(DATA, "tenants.json");
  if (existsSync(saved)) {
    const t = JSON.parse(readFileSync(saved, "utf8")) as { projects: ApiSeedProject[]; seed: ApiSeedResult | null; connections?: number; builtAt?: string };
    made = t.projects;
    seeded = t.seed;
    builtAt = t.builtAt;
    dataNote = `reused from ${DATA} (BENCH_DATA, copied into the temp dir): built through the HTTP API of the server under test (bench/harness/seed/api.ts) ` +
      `by an earlier run of this bench${t.builtAt ? ` (${t.builtAt})` : ""}, its keys and seed figures from its tenants.json`;
  } else {
    made = findTenants(o.cli);
    builtAt = undefined;
    dataNote = `reused from ${DATA} (BENCH_DATA, copied into the temp dir): built through the HTTP API of the server under test (bench/harness/seed/api.ts) ` +
      `by an earlier run of this bench that kept no tenants.json, so its projects were found by name (bench, tenant-b, tenant-c) and given new keys, ` +
      `and how it was built (requests, upserts, PATCHes, seconds, rate) is unknown`;
  }
  // Counts as they are now: the kept run's POST scenarios added contacts through the API too.
  const db = new Database(o.dbPath, { readonly: true });
  const now = new Map((db.query("SELECT id, contact_count AS n FROM projects").all() as Array<{ id: string; n: number }>).map((p) => [p.id, p.n]));
  db.close();
  made = made.map((p) => ({ ...p, count: now.get(p.id) ?? p.count }));
  return { made, seeded, dataNote, builtAt };
}

/** tenants.json in the temp dir: the tenants, their keys, and how the data was built. */
export function saveTenants(tmp: string, data: BenchData, reusedFrom: string | null, connections: number) {
  writeFileSync(join(tmp, "tenants.json"), JSON.stringify({
    builtBy: "bench/run.ts (bench/harness/seed/api.ts, through the HTTP API)",
    builtAt: data.builtAt,
    reusedFrom: reusedFrom ?? undefined,
    connections,
    projects: data.made,
    seed: data.seeded,
  }, null, 2) + "\n", { mode: 0o600 });
}

/** The measured project's last contact number (its contacts as built: an upsert that found its email made none). */
export function measuredContacts(dbPath: string, projectId: string): number {
  const db = new Database(dbPath, { readonly: true });
  const n = (db.query("SELECT last_contact_number AS n FROM projects WHERE id = ?").get(projectId) as { n: number }).n;
  db.close();
  return n;
}
