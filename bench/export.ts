/**
 * `crm export` in constant memory (docs/import-export.md §2, issue 16): the CLI run as a user runs it,
 * under `/usr/bin/time -v`, on a copy of a database of 1 M contacts built through the API
 * (bench/run.ts), for the big project (≈1 M contacts) and a small one (≈10 k) of the same
 * file, in both formats. Prints contacts, seconds, contacts/s and peak RSS for each run, and
 * the ratio of peak RSS 1 M / 10 k per format: constant memory means ≈ 1.
 *
 *   bun bench/export.ts                 data from /tmp/golden1m (crm.db, tenants.json)
 *   EXPORT_DATA=<dir> bun bench/export.ts
 *   EXPORT_KEEP=1 …                     keep the scratch folder (the copy and the exports)
 *
 * The database is copied first (`cp --reflink=auto`): opening it may apply migrations, and
 * the data folder is never written. One untimed export of the small project warms the copy.
 */
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const DATA = process.env.EXPORT_DATA ?? "/tmp/golden1m";
const SMALL_TARGET = 10_000;

interface Tenant {
  id: string;
  name: string;
  count: number;
}

interface Run {
  project: string;
  format: "csv" | "jsonl";
  contacts: number;
  seconds: number;
  peakRssMb: number;
  bytes: number;
}

async function sh(cmd: string[], env: Record<string, string | undefined> = process.env) {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${stdout}\n${stderr}`);
  return { stdout, stderr };
}

/** Copies the database (and its WAL, if any) into a scratch folder; the data folder is never written. */
async function copyData(): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), "crm-export-bench-"));
  for (const file of ["crm.db", "crm.db-wal", "secret.key"]) {
    if (existsSync(join(DATA, file))) await sh(["cp", "--reflink=auto", join(DATA, file), join(scratch, file)]);
  }
  return scratch;
}

const wall = (text: string) => {
  const m = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(text);
  if (!m) throw new Error(`no elapsed time in:\n${text}`);
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]);
};

async function exportRun(dbPath: string, scratch: string, tenant: Tenant, format: "csv" | "jsonl"): Promise<Run> {
  const output = join(scratch, `${tenant.name}.${format}`);
  const env = { ...process.env, CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn" };
  // time's report goes to a file of its own: written to the stderr it shares with the export, it was cut short.
  const report = join(scratch, "time.txt");
  const { stderr } = await sh(["/usr/bin/time", "-v", "-o", report, process.execPath, "src/main.ts", "export", "--project", tenant.id, "--format", format, "--output", output], env);
  const timed = readFileSync(report, "utf8");
  const exported = /exported (\d+) contacts/.exec(stderr);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(timed);
  if (!exported || !rss) throw new Error(`unexpected output:\n${stderr}\n${timed}`);
  const contacts = Number(exported[1]);
  if (format === "jsonl") {
    // One line per contact: count them without holding the file.
    let lines = 0;
    for await (const chunk of createReadStream(output) as AsyncIterable<Buffer>) {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    }
    if (lines !== contacts) throw new Error(`${output}: ${lines} lines for ${contacts} contacts`);
  }
  return { project: tenant.name, format, contacts, seconds: wall(timed), peakRssMb: Number(rss[1]) / 1024, bytes: statSync(output).size };
}

const tenants: Tenant[] = JSON.parse(readFileSync(join(DATA, "tenants.json"), "utf8")).projects;
const big = tenants.reduce((a, b) => (b.count > a.count ? b : a));
const small = tenants.reduce((a, b) => (Math.abs(b.count - SMALL_TARGET) < Math.abs(a.count - SMALL_TARGET) ? b : a));

const started = performance.now();
const scratch = await copyData();
const dbPath = join(scratch, "crm.db");
console.log(`copy of ${DATA}/crm.db in ${((performance.now() - started) / 1000).toFixed(1)} s; ${big.name} ${big.count} contacts, ${small.name} ${small.count}`);
try {
  await exportRun(dbPath, scratch, small, "csv");
  const runs: Run[] = [];
  for (const format of ["csv", "jsonl"] as const) for (const tenant of [big, small]) runs.push(await exportRun(dbPath, scratch, tenant, format));

  console.log("\n| project | format | contacts | seconds | contacts/s | peak RSS (MB) | file (MB) |");
  console.log("|---|---|---:|---:|---:|---:|---:|");
  for (const r of runs) {
    const rate = Math.round(r.contacts / r.seconds).toLocaleString("en");
    console.log(`| ${r.project} | ${r.format} | ${r.contacts.toLocaleString("en")} | ${r.seconds.toFixed(2)} | ${rate} | ${r.peakRssMb.toFixed(0)} | ${(r.bytes / 1e6).toFixed(0)} |`);
  }
  console.log();
  for (const format of ["csv", "jsonl"] as const) {
    const [a, b] = [runs.find((r) => r.format === format && r.project === big.name)!, runs.find((r) => r.format === format && r.project === small.name)!];
    console.log(`${format}: peak RSS ${a.contacts.toLocaleString("en")} / ${b.contacts.toLocaleString("en")} contacts = ${(a.peakRssMb / b.peakRssMb).toFixed(2)}`);
  }
} finally {
  if (process.env.EXPORT_KEEP === "1") console.log(`kept ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
}
