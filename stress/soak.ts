/**
 * Soak: mixed load (GET one, lists, searches, creates, patches, interactions; bench/wrk/mixed.lua)
 * on the real server at about 70 % of its measured capacity for SOAK_MINUTES, reporting the
 * server's RSS, p99 latency and open file handles (/proc/<pid>/fd) at the start and at the end.
 * Exits non-zero when open file handles grow by more than SOAK_FD_SLACK, the server logs an
 * error (every 500 does), or the server dies. Non-2xx answers are broken down by kind.
 *
 * 1. seeds SOAK_CONTACTS contacts (bench/harness/seed/sqlite.ts) into a fresh database in a temp dir;
 * 2. capacity: wrk, closed loop (no pacing), SOAK_CAPACITY_SECONDS after a 3 s warm-up;
 * 3. soak: wrk paced by mixed.lua's delay() at SOAK_LOAD × capacity, in windows of
 *    SOAK_WINDOW_SECONDS (each gives its rate, p99 and peak RSS; each connection pauses
 *    connections / target s minus the last mean response time, never less than half that);
 *    file handles are counted mid-window (under
 *    load) and with the server idle before the first and after the last window (the verdict).
 * Everything on 127.0.0.1 (server, load and seed from bench/harness/); every child is killed on
 * exit, error, Ctrl-C and at a hard limit.
 *
 * A step of stress/run.ts (`soakStress`), or alone: `SOAK_MINUTES=2 bun stress/soak.ts`.
 *
 * Env: SOAK_MINUTES (20), SOAK_CONTACTS (100000), SOAK_LOAD (0.7), SOAK_CAPACITY_SECONDS (10),
 * SOAK_WINDOW_SECONDS (30), SOAK_CONNECTIONS (32), SOAK_FD_SLACK (8), SOAK_KEEP=1 keeps the temp dir.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runLoad, type LoadResult } from "../bench/harness/load.ts";
import { Children, crmCli, guard, startServer } from "../bench/harness/process.ts";
import { errorsOf } from "../bench/harness/report.ts";
import { mb, openFds, sampleRss } from "../bench/harness/rss.ts";
import { seed } from "../bench/harness/seed/sqlite.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const MINUTES = env("SOAK_MINUTES", 20);
const CONTACTS = env("SOAK_CONTACTS", 100_000);
const LOAD = env("SOAK_LOAD", 0.7);
const CAPACITY_SECONDS = env("SOAK_CAPACITY_SECONDS", 10);
const WINDOW_SECONDS = env("SOAK_WINDOW_SECONDS", 30);
const CONNECTIONS = env("SOAK_CONNECTIONS", 32);
const FD_SLACK = env("SOAK_FD_SLACK", 8);

const WRK = Bun.which("wrk");
const children = new Children();
let tmp = "";
let dbPath = "";
const log = (msg: string) => console.log(`[soak] ${msg}`);

function cleanup() {
  children.killAll();
  if (tmp && !process.env.SOAK_KEEP) rmSync(tmp, { recursive: true, force: true });
}

const cli = (args: string[]) => crmCli({ CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false" }, 30_000)(args);

/** The server on the soak's database; warnings and errors only (each 500 logs one) in server.log, read back for the verdict. */
const start = () =>
  startServer({ env: { CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn" }, stdout: join(tmp, "server.log"), children });

/** GET paths and interaction type ids for mixed.lua, from the seeded data. */
function writeInputs() {
  const db = new Database(dbPath, { readonly: true });
  const rand = (n: number) => 1 + Math.floor(Math.random() * n);
  const rows = db
    .query(`SELECT first_name, last_name, email FROM contacts WHERE id IN (${Array.from({ length: 3000 }, () => rand(CONTACTS)).join(",")})`)
    .all() as Array<{ first_name: string | null; last_name: string | null; email: string | null }>;
  const types = db.query("SELECT id FROM contact_types").all() as Array<{ id: string }>;
  const tags = db.query("SELECT name FROM tags").all() as Array<{ name: string }>;
  const interactionTypes = db.query("SELECT id FROM interaction_types").all() as Array<{ id: string }>;
  db.close();
  const q = encodeURIComponent;
  const search = rows.flatMap((r) => {
    const word = [r.first_name, r.last_name, r.email][Math.floor(Math.random() * 3)]?.toLowerCase();
    const len = 3 + Math.floor(Math.random() * 3);
    return word && word.length >= len ? [`/v1/contacts?search=${q(word.slice(0, len))}`] : [];
  });
  const list = [
    ...types.map((t) => `/v1/contacts?contactTypeId=${q(t.id)}`),
    ...tags.map((t) => `/v1/contacts?tag=${q(t.name)}`),
    ...rows.flatMap((r) => (r.email ? [`/v1/contacts?email=${q(r.email)}`] : [])).slice(0, 500),
  ];
  const get = Array.from({ length: 20_000 }, () => `/v1/contacts/CR-${rand(CONTACTS)}`);
  const files = { get: join(tmp, "get.paths"), list: join(tmp, "list.paths"), search: join(tmp, "search.paths"), types: join(tmp, "interaction-types") };
  writeFileSync(files.get, get.join("\n") + "\n");
  writeFileSync(files.list, list.join("\n") + "\n");
  writeFileSync(files.search, search.join("\n") + "\n");
  writeFileSync(files.types, interactionTypes.map((t) => t.id).join("\n") + "\n");
  return files;
}

type WrkResult = LoadResult;

/** bench/wrk/mixed.lua through bench/harness/load.ts: 2 threads, each connection pausing `delayMs` between requests. */
const wrk = (url: string, key: string, files: ReturnType<typeof writeInputs>, seconds: number, connections: number, delayMs: number) =>
  runLoad({
    url, key, source: "MIXED", seconds, threads: 2, connections, wrk: WRK, children,
    script: { file: "mixed.lua", args: [String(CONTACTS), files.get, files.list, files.search, files.types, delayMs.toFixed(3)] },
  });

async function main(): Promise<number> {
  if (!WRK) throw new Error("stress/soak.ts needs wrk on PATH (apt-get install -y wrk) for its paced load");
  log(`${MINUTES} min at ${Math.round(LOAD * 100)} % of capacity, ${CONTACTS.toLocaleString("en")} contacts, temp dir ${tmp}`);
  const project = cli(["project", "create", "--name", "soak"]);
  const key = cli(["key", "create", "--project", project.id, "--scopes", "contacts:read,contacts:write,interactions:write"]).key as string;
  cli(["project", "update", project.id, "--rate-limit-per-minute", "1000000000", "--contact-creates-per-hour", "1000000000"]);
  const seeded = seed(dbPath, project.id, CONTACTS);
  log(`seeded ${seeded.contacts} contacts in ${seeded.seconds.toFixed(1)} s`);
  const files = writeInputs();

  const server = await start();
  const pid = server.proc.pid;
  const rss = sampleRss(pid, 250);
  const alive = () => server.proc.exitCode === null;

  log(`measuring capacity: closed-loop mixed load, 3 s warm-up + ${CAPACITY_SECONDS} s…`);
  await wrk(server.url, key, files, 3, 16, 0);
  const capacity = await wrk(server.url, key, files, CAPACITY_SECONDS, 16, 0);
  const target = capacity.rps * LOAD;
  log(`capacity ${capacity.rps.toFixed(0)} req/s (p99 ${(capacity.p99Us / 1000).toFixed(2)} ms, ${errorsOf(capacity)} errors); target ${target.toFixed(0)} req/s`);

  await Bun.sleep(1500);
  const fdIdleStart = openFds(pid)!;
  const rssIdleStart = rss.last();
  log(`idle before the soak: ${fdIdleStart} open file handles, RSS ${mb(rssIdleStart).toFixed(1)} MB`);

  interface Window { at: number; r: WrkResult; rssKb: number; fdsLoaded: number | null; delayMs: number }
  const windows: Window[] = [];
  const cycleMs = (CONNECTIONS * 1000) / target;
  let delayMs = Math.max(cycleMs / 2, cycleMs - capacity.meanUs / 1000 / 4);
  const soakStart = performance.now();
  const soakEnd = soakStart + MINUTES * 60_000;
  while (performance.now() < soakEnd - 1000) {
    if (!alive()) throw new Error(`the server died (exit ${server.proc.exitCode})`);
    const seconds = Math.max(1, Math.min(WINDOW_SECONDS, Math.round((soakEnd - performance.now()) / 1000)));
    rss.reset();
    let fdsLoaded: number | null = null;
    const probe = setTimeout(() => (fdsLoaded = openFds(pid)), (seconds * 1000) / 2);
    const r = await wrk(server.url, key, files, seconds, CONNECTIONS, delayMs);
    clearTimeout(probe);
    const w: Window = { at: (performance.now() - soakStart) / 60_000, r, rssKb: rss.max(), fdsLoaded, delayMs };
    windows.push(w);
    log(`${w.at.toFixed(1)} min: ${r.rps.toFixed(0)} req/s, p50 ${(r.p50Us / 1000).toFixed(2)} ms, p99 ${(r.p99Us / 1000).toFixed(2)} ms, ` +
      `${errorsOf(r)} non-2xx/err, RSS ${mb(w.rssKb).toFixed(1)} MB, fds under load ${fdsLoaded ?? "?"}`);
    // A connection's cycle is its delay plus the response time: take the last window's mean
    // response time off the pause, but never pause less than half the first estimate (so a
    // slow spell never turns this into a closed loop at full capacity).
    delayMs = Math.min(cycleMs, Math.max(cycleMs / 2, cycleMs - r.meanUs / 1000));
  }
  if (!alive()) throw new Error(`the server died (exit ${server.proc.exitCode})`);
  await Bun.sleep(1500);
  const fdIdleEnd = openFds(pid)!;
  const rssIdleEnd = rss.last();
  rss.stop();

  const first = windows[0]!;
  const last = windows[windows.length - 1]!;
  const growth = fdIdleEnd - fdIdleStart;
  const requests = windows.reduce((a, w) => a + w.r.requests, 0);
  const errors = windows.reduce((a, w) => a + errorsOf(w.r), 0);
  const row = (name: string, a: string, b: string) => `| ${name} | ${a} | ${b} |`;
  console.log();
  console.log(`Soak: ${MINUTES} min of mixed load at ${Math.round(LOAD * 100)} % of ${capacity.rps.toFixed(0)} req/s (target ${target.toFixed(0)} req/s), ` +
    `${CONNECTIONS} paced connections, ${windows.length} windows, ${requests} requests, ${errors} non-2xx/errors`);
  console.log();
  console.log(`| figure | start (first window) | end (last window) |`);
  console.log(`|---|---|---|`);
  console.log(row("req/s", first.r.rps.toFixed(0), last.r.rps.toFixed(0)));
  console.log(row("p50 ms", (first.r.p50Us / 1000).toFixed(2), (last.r.p50Us / 1000).toFixed(2)));
  console.log(row("p99 ms", (first.r.p99Us / 1000).toFixed(2), (last.r.p99Us / 1000).toFixed(2)));
  console.log(row("RSS MB (peak in window)", mb(first.rssKb).toFixed(1), mb(last.rssKb).toFixed(1)));
  console.log(row("RSS MB (idle, before / after)", mb(rssIdleStart).toFixed(1), mb(rssIdleEnd).toFixed(1)));
  console.log(row("open file handles (under load, mid-window)", String(first.fdsLoaded ?? "?"), String(last.fdsLoaded ?? "?")));
  console.log(row("open file handles (idle, before / after)", String(fdIdleStart), String(fdIdleEnd)));
  console.log();
  const kinds: Record<string, number> = {};
  for (const w of windows) for (const [kind, n] of Object.entries(w.r.errors)) kinds[kind] = (kinds[kind] ?? 0) + n;
  console.log(`non-2xx/errors by kind (wrk: status = an answer that is not 2xx/3xx): ${JSON.stringify(kinds)}`);
  const serverErrors = (await Bun.file(join(tmp, "server.log")).text()).split("\n").filter((l) => l.includes('"level":"error"'));
  console.log(`server errors logged (each 500 logs one): ${serverErrors.length}`);
  for (const line of serverErrors.slice(0, 3)) console.log(`  ${line.slice(0, 400)}`);
  const fdOk = growth <= FD_SLACK;
  console.log(`open file handles grew by ${growth} (allowed ≤ ${FD_SLACK}): ${fdOk ? "PASS" : "FAIL"}`);
  console.log(`no server errors: ${serverErrors.length === 0 ? "PASS" : "FAIL"}`);
  return fdOk && serverErrors.length === 0 ? 0 : 1;
}

/** The soak as a stress/run.ts step: true when it passed. */
export async function soakStress(): Promise<boolean> {
  tmp = mkdtempSync(join(tmpdir(), "crm-soak-"));
  dbPath = join(tmp, "crm.db");
  const limit = guard({ label: "soak", limitMs: (MINUTES + 10) * 60_000, cleanup });
  try {
    return (await main()) === 0;
  } catch (error) {
    console.error("[soak] failed:", error);
    return false;
  } finally {
    await children.stopAll();
    cleanup();
    limit.release();
  }
}

if (import.meta.main) process.exit((await soakStress()) ? 0 : 1);
