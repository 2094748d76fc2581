/**
 * Soak: mixed load (GET one, lists, searches, creates, patches, interactions; bench/wrk/mixed.lua)
 * on the real server at about 70 % of its measured capacity for SOAK_MINUTES, reporting the
 * server's RSS, p99 latency and open file handles (/proc/<pid>/fd) at the start and at the end.
 * Exits non-zero when open file handles grow by more than SOAK_FD_SLACK, the server logs an
 * error (every 500 does), or the server dies. Non-2xx answers are broken down by kind.
 *
 * 1. seeds SOAK_CONTACTS contacts (bench/seed.ts) into a fresh database in a temp dir;
 * 2. capacity: wrk, closed loop (no pacing), SOAK_CAPACITY_SECONDS after a 3 s warm-up;
 * 3. soak: wrk paced by mixed.lua's delay() at SOAK_LOAD × capacity, in windows of
 *    SOAK_WINDOW_SECONDS (each gives its rate, p99 and peak RSS; each connection pauses
 *    connections / target s minus the last mean response time, never less than half that);
 *    file handles are counted mid-window (under
 *    load) and with the server idle before the first and after the last window (the verdict).
 * Everything on 127.0.0.1; every child is killed on exit, error, Ctrl-C and at a hard limit.
 *
 * A step of stress/run.ts (`soakStress`), or alone: `SOAK_MINUTES=2 bun stress/soak.ts`.
 *
 * Env: SOAK_MINUTES (20), SOAK_CONTACTS (100000), SOAK_LOAD (0.7), SOAK_CAPACITY_SECONDS (10),
 * SOAK_WINDOW_SECONDS (30), SOAK_CONNECTIONS (32), SOAK_FD_SLACK (8), SOAK_KEEP=1 keeps the temp dir.
 */
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { mb, openFds, sampleRss } from "../bench/rss.ts";
import { seed } from "../bench/seed.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const MINUTES = env("SOAK_MINUTES", 20);
const CONTACTS = env("SOAK_CONTACTS", 100_000);
const LOAD = env("SOAK_LOAD", 0.7);
const CAPACITY_SECONDS = env("SOAK_CAPACITY_SECONDS", 10);
const WINDOW_SECONDS = env("SOAK_WINDOW_SECONDS", 30);
const CONNECTIONS = env("SOAK_CONNECTIONS", 32);
const FD_SLACK = env("SOAK_FD_SLACK", 8);

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const HOST = "127.0.0.1";
const WRK = Bun.which("wrk");
const children = new Set<Subprocess>();
let tmp = "";
let dbPath = "";
const log = (msg: string) => console.log(`[soak] ${msg}`);

function cleanup() {
  for (const proc of children) proc.kill("SIGKILL");
  children.clear();
  if (tmp && !process.env.SOAK_KEEP) rmSync(tmp, { recursive: true, force: true });
}

function cli(args: string[]) {
  const r = Bun.spawnSync([BUN, "src/main.ts", ...args, "--json"], {
    cwd: ROOT,
    env: { ...process.env, CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false" },
    timeout: 30_000,
  });
  if (r.exitCode !== 0) throw new Error(`crm ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: HOST, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function startServer() {
  const port = freePort();
  const proc = Bun.spawn([BUN, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST, CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn" },
    // Warnings and errors only (each 500 logs one): read back for the verdict.
    stdout: Bun.file(join(tmp, "server.log")),
    stderr: "inherit",
  });
  children.add(proc);
  const url = `http://${HOST}:${port}`;
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return { proc, url };
    await Bun.sleep(100);
  }
  throw new Error("server did not answer /healthz within 30 s");
}

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

interface WrkResult {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
  errors: Record<string, number>;
  rps: number;
}

async function wrk(url: string, key: string, files: ReturnType<typeof writeInputs>, seconds: number, connections: number, delayMs: number): Promise<WrkResult> {
  const proc = Bun.spawn(
    [WRK!, "-t", "2", "-c", String(connections), "-d", `${seconds}s`, "--timeout", "5s", "-s", "bench/wrk/mixed.lua",
      "-H", `Authorization: Bearer ${key}`, url, "--", String(CONTACTS), files.get, files.list, files.search, files.types, delayMs.toFixed(3)],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  children.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), (seconds + 20) * 1000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  children.delete(proc);
  const line = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (!line) throw new Error(`wrk gave no result:\n${out}\n${err}`);
  const r = JSON.parse(line.slice("BENCH_JSON ".length));
  return { ...r, rps: r.requests / (r.durationUs / 1e6) };
}

const errorsOf = (r: WrkResult) => Object.values(r.errors).reduce((a, b) => a + b, 0);

async function main(): Promise<number> {
  if (!WRK) throw new Error("stress/soak.ts needs wrk on PATH (apt-get install -y wrk) for its paced load");
  log(`${MINUTES} min at ${Math.round(LOAD * 100)} % of capacity, ${CONTACTS.toLocaleString("en")} contacts, temp dir ${tmp}`);
  const project = cli(["project", "create", "--name", "soak"]);
  const key = cli(["key", "create", "--project", project.id, "--scopes", "contacts:read,contacts:write,interactions:write"]).key as string;
  cli(["project", "update", project.id, "--rate-limit-per-minute", "1000000000", "--contact-creates-per-hour", "1000000000"]);
  const seeded = seed(dbPath, project.id, CONTACTS);
  log(`seeded ${seeded.contacts} contacts in ${seeded.seconds.toFixed(1)} s`);
  const files = writeInputs();

  const server = await startServer();
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
  const hardLimitMs = (MINUTES + 10) * 60_000;
  const hardLimit = setTimeout(() => {
    console.error(`[soak] hard time limit of ${hardLimitMs / 60_000} min reached`);
    cleanup();
    process.exit(1);
  }, hardLimitMs);
  const onSignal = () => (cleanup(), process.exit(130));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return (await main()) === 0;
  } catch (error) {
    console.error("[soak] failed:", error);
    return false;
  } finally {
    for (const proc of [...children]) {
      proc.kill("SIGTERM");
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
      if (!exited) proc.kill("SIGKILL");
    }
    cleanup();
    clearTimeout(hardLimit);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

if (import.meta.main) process.exit((await soakStress()) ? 0 : 1);
