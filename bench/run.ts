/**
 * `npm run bench`: seeds 1 M contacts into a fresh database in a temp dir, starts the real
 * server on it and measures latency and throughput with wrk (or bench/loadgen.ts without
 * it), then prints a table and writes bench/RESULTS.md. Everything is on 127.0.0.1 and every
 * child is killed at the end, on error, on Ctrl-C, and at a hard time limit.
 *
 * Env: BENCH_CONTACTS (1000000), BENCH_SECONDS (10), BENCH_WARMUP (3), BENCH_THREADS (2),
 * BENCH_CONNECTIONS (32), BENCH_KEEP=1 keeps the temp dir, BENCH_NO_WRK=1 forces bench/loadgen.ts.
 */
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { profileQueries, type QueryProfile } from "./profile.ts";
import { seed } from "./seed.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CONTACTS = env("BENCH_CONTACTS", 1_000_000);
const SECONDS = env("BENCH_SECONDS", 10);
const WARMUP = env("BENCH_WARMUP", 3);
let THREADS = env("BENCH_THREADS", 2);
let CONNECTIONS = env("BENCH_CONNECTIONS", 32);
const HARD_LIMIT_MS = 20 * 60_000;

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const HOST = "127.0.0.1";
const WRK = process.env.BENCH_NO_WRK ? null : Bun.which("wrk");
const children = new Set<Subprocess>();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-"));
const dbPath = join(tmp, "crm.db");
const log = (msg: string) => console.log(`[bench] ${msg}`);

// ---------- processes ----------

async function stop(proc: Subprocess) {
  if (proc.exitCode === null && !proc.killed) proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
  if (!exited) proc.kill("SIGKILL");
  children.delete(proc);
}

function cleanup() {
  for (const proc of children) proc.kill("SIGKILL");
  if (!process.env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
}
setTimeout(() => {
  console.error(`[bench] hard time limit of ${HARD_LIMIT_MS / 60_000} min reached; stopping.`);
  cleanup();
  process.exit(1);
}, HARD_LIMIT_MS).unref();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => (cleanup(), process.exit(130)));

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

async function startServer(kind: "crm" | "bare", opts: { logLevel?: string; logFile?: string; preload?: string; extraEnv?: Record<string, string>; contactJson?: string } = {}) {
  const port = freePort();
  const cmd =
    kind === "crm"
      ? [BUN, ...(opts.preload ? ["--preload", opts.preload] : []), "src/main.ts", "serve"]
      : [BUN, "bench/bare-hono.ts", opts.contactJson!];
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST, CRM_DB_PATH: dbPath, CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: opts.logLevel ?? "warn", ...opts.extraEnv },
    stdout: opts.logFile ? Bun.file(opts.logFile) : "ignore",
    stderr: "inherit",
  });
  children.add(proc);
  const url = `http://${HOST}:${port}`;
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`${kind} server exited with ${proc.exitCode}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return { proc, url };
    await Bun.sleep(100);
  }
  await stop(proc);
  throw new Error(`${kind} server did not answer /healthz within 30 s`);
}

// ---------- load ----------

interface LoadResult {
  requests: number;
  durationUs: number;
  p50Us: number;
  p95Us: number;
  p99Us: number;
  errors: Record<string, number>;
  rps: number;
}

async function load(url: string, key: string | null, source: string, seconds: number): Promise<LoadResult> {
  const auth = `Bearer ${key ?? "none"}`;
  const cmd = WRK
    ? [WRK, "-t", String(THREADS), "-c", String(CONNECTIONS), "-d", `${seconds}s`, "--timeout", "5s",
       "-s", source === "POST" ? "bench/wrk/post.lua" : "bench/wrk/get.lua", "-H", `Authorization: ${auth}`, url,
       ...(source === "POST" ? [] : ["--", source])]
    : [BUN, "bench/loadgen.ts", url, String(seconds), String(CONNECTIONS), auth, source];
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), (seconds + 20) * 1000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  children.delete(proc);
  const line = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (!line) throw new Error(`load generator gave no result:\n${out}\n${err}`);
  const r = JSON.parse(line.slice("BENCH_JSON ".length));
  return { ...r, rps: r.requests / (r.durationUs / 1e6) };
}

/** wrk -t1 -c1: the latency of one request with nothing queued in front of it. */
async function loadSingle(url: string, key: string, source: string) {
  const [t, c] = [THREADS, CONNECTIONS];
  THREADS = 1;
  CONNECTIONS = 1;
  try {
    return await load(url, key, source, Math.max(2, Math.round(SECONDS / 2)));
  } finally {
    [THREADS, CONNECTIONS] = [t, c];
  }
}

async function scenario(url: string, key: string | null, source: string) {
  if (WARMUP > 0) await load(url, key, source, WARMUP);
  return load(url, key, source, SECONDS);
}

// ---------- data for the scenarios ----------

function samplePaths() {
  const db = new Database(dbPath, { readonly: true });
  const rand = (n: number) => 1 + Math.floor(Math.random() * n);
  const ids = Array.from({ length: 20_000 }, () => rand(CONTACTS));
  const rows = db
    .query(`SELECT first_name, last_name, email FROM contacts WHERE id IN (${Array.from({ length: 3000 }, () => rand(CONTACTS)).join(",")})`)
    .all() as Array<{ first_name: string | null; last_name: string | null; email: string | null }>;
  const prefixes = rows.flatMap((r) => {
    const word = [r.first_name, r.last_name, r.email][Math.floor(Math.random() * 3)]?.toLowerCase();
    const len = 3 + Math.floor(Math.random() * 3);
    return word && word.length >= len ? [word.slice(0, len)] : [];
  });
  const emails = rows.flatMap((r) => (r.email ? [r.email] : []));
  const types = db.query("SELECT id, name FROM contact_types").all() as Array<{ id: string; name: string }>;
  const tags = db.query("SELECT name FROM tags").all() as Array<{ name: string }>;
  db.close();
  const q = encodeURIComponent;
  return {
    get: ids.map((n) => `/v1/contacts/CR-${n}`),
    search: prefixes.map((p) => `/v1/contacts?search=${q(p)}`),
    type: types.map((t) => `/v1/contacts?contactTypeId=${q(t.id)}`),
    tag: tags.map((t) => `/v1/contacts?tag=${q(t.name)}`),
    email: emails.map((e) => `/v1/contacts?email=${q(e)}`),
    ids,
  };
}

function writePaths(name: string, paths: string[]) {
  const file = join(tmp, `${name}.paths`);
  writeFileSync(file, paths.join("\n") + "\n");
  return file;
}

// ---------- report ----------

interface Row {
  name: string;
  r: LoadResult;
  target?: { p95Ms?: number };
}

const ms = (us: number) => (us / 1000).toFixed(2);

function table(rows: Row[]): string {
  const head = ["scenario", "p50 ms", "p95 ms", "p99 ms", "req/s", "requests", "non-2xx/err", "target"];
  const lines = rows.map(({ name, r, target }) => {
    const errs = Object.values(r.errors).reduce((a, b) => a + b, 0);
    const verdict = target?.p95Ms === undefined ? "" : `p95 ≤ ${target.p95Ms} ms: ${r.p95Us / 1000 <= target.p95Ms ? "PASS" : "MISS"}`;
    return [name, ms(r.p50Us), ms(r.p95Us), ms(r.p99Us), r.rps.toFixed(0), String(r.requests), String(errs), verdict];
  });
  const all = [head, ...lines];
  const width = head.map((_, i) => Math.max(...all.map((l) => l[i]!.length)));
  const fmt = (l: string[]) => `| ${l.map((c, i) => c.padEnd(width[i]!)).join(" | ")} |`;
  return [fmt(head), `|${width.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(fmt)].join("\n");
}

// ---------- main ----------

async function main() {
  const started = new Date();
  const startLoad = loadavg()[0]!;
  const bunVersion = Bun.version;
  const nproc = cpus().length;
  const cpuModel = cpus()[0]?.model ?? "unknown CPU";
  const loader = WRK ? `wrk (${THREADS} threads, ${CONNECTIONS} connections)` : `bench/loadgen.ts (${CONNECTIONS} connections)`;
  log(`machine: ${nproc} CPUs (${cpuModel}), Bun ${bunVersion}; temp dir ${tmp}`);
  if (!WRK) log("wrk not found on PATH (install: apt-get install -y wrk); falling back to bench/loadgen.ts, a slower Bun load generator.");
  log(`load: ${loader}, ${WARMUP} s warm-up + ${SECONDS} s per scenario. Client and server share these ${nproc} CPUs.`);

  const project = cli(["project", "create", "--name", "bench"]);
  const key = cli(["key", "create", "--project", project.id, "--scopes", "contacts:read,contacts:write,interactions:write"]);
  cli(["project", "update", project.id, "--rate-limit-per-minute", "1000000000", "--contact-creates-per-hour", "1000000000"]);

  log(`seeding ${CONTACTS.toLocaleString("en")} contacts…`);
  const seeded = seed(dbPath, project.id, CONTACTS);
  log(`seeded ${seeded.contacts} contacts, ${seeded.searchTerms} search terms, ${seeded.contactTags} contact tags in ${seeded.seconds.toFixed(1)} s ` +
    `(rows ${seeded.phases.rows} s, indexes ${seeded.phases.indexes} s, ANALYZE ${seeded.phases.analyze} s)`);

  const paths = samplePaths();
  const files = {
    get: writePaths("get", paths.get),
    search: writePaths("search", paths.search),
    type: writePaths("type", paths.type),
    tag: writePaths("tag", paths.tag),
    email: writePaths("email", paths.email),
    mixed: writePaths("mixed", [...paths.get.slice(0, 2000), ...paths.search, ...paths.type, ...paths.tag, ...paths.email.slice(0, 500)]),
  };

  log("profiling the service code in-process (no HTTP)…");
  const qs = (p: string[]) => p.map((x) => x.split("?")[1]!);
  const profile = await profileQueries(dbPath, project.id, [
    { name: "GET one", inputs: paths.ids.slice(0, 300) },
    { name: "search", inputs: qs(paths.search) },
    { name: "list ?contactTypeId", inputs: qs(paths.type) },
    { name: "list ?tag", inputs: qs(paths.tag) },
    { name: "list ?email", inputs: qs(paths.email) },
  ]);

  const rows: Row[] = [];
  let server = await startServer("crm", { logLevel: "warn" });
  const sample = await fetch(`${server.url}/v1/contacts/CR-${Math.ceil(CONTACTS / 2)}`, { headers: { authorization: `Bearer ${key.key}` } });
  if (sample.status !== 200) throw new Error(`GET one answered ${sample.status}: ${await sample.text()}`);
  const contactJson = join(tmp, "contact.json");
  writeFileSync(contactJson, await sample.text());

  const run = async (name: string, url: string, k: string | null, source: string, target?: Row["target"]) => {
    log(`running ${name}…`);
    const r = await scenario(url, k, source);
    rows.push({ name, r, target });
    log(`  ${name}: p50 ${ms(r.p50Us)} ms, p95 ${ms(r.p95Us)} ms, ${r.rps.toFixed(0)} req/s`);
    const failed = Object.values(r.errors).reduce((a, b) => a + b, 0);
    if (failed > 0) console.warn(`[bench] WARNING: ${failed} of ${r.requests} ${name} requests failed or were not 2xx/3xx; its figures do not measure the happy path.`);
    return r;
  };
  const getOne = await run("GET /v1/contacts/CR-n", server.url, key.key, files.get);
  await run("GET ?search=<3-5 char prefix>", server.url, key.key, files.search, { p95Ms: 5 });
  await run("GET ?contactTypeId=<type>", server.url, key.key, files.type, { p95Ms: 5 });
  await run("GET ?tag=<tag name>", server.url, key.key, files.tag, { p95Ms: 5 });
  await run("GET ?email=<address>", server.url, key.key, files.email, { p95Ms: 5 });
  // Service latency without queueing: one connection, one request at a time.
  const single: Array<{ name: string; r: LoadResult }> = [];
  for (const [name, source] of [["GET one", files.get], ["search", files.search], ["?contactTypeId", files.type], ["?tag", files.tag], ["?email", files.email]] as const) {
    log(`running ${name} at 1 connection…`);
    single.push({ name, r: await loadSingle(server.url, key.key, source) });
  }
  await run("POST /v1/contacts", server.url, key.key, "POST");
  await stop(server.proc);

  server = await startServer("crm", { logLevel: "info", logFile: join(tmp, "server-info.log") });
  await run("GET one, CRM_LOG_LEVEL=info", server.url, key.key, files.get);
  await stop(server.proc);

  const bare = await startServer("bare", { contactJson });
  const bareR = await run("bare Hono GET (same JSON)", bare.url, null, files.get);
  await stop(bare.proc);
  const ratio = getOne.rps / bareR.rps;

  log("statement-cache probe (server with --preload bench/stmt-probe.ts, 2 s per scenario)…");
  const probeFile = join(tmp, "stmt-probe.json");
  server = await startServer("crm", { preload: join(ROOT, "bench/stmt-probe.ts"), extraEnv: { STMT_PROBE_OUT: probeFile } });
  const readProbe = async () => {
    await Bun.sleep(400);
    return JSON.parse(await Bun.file(probeFile).text().catch(() => "{}")) as Record<string, number>;
  };
  const probes: Array<{ name: string; requests: number; distinct: number; prepared: number }> = [];
  for (const [name, source] of [["GET one", files.get], ["search", files.search], ["list ?tag", files.tag], ["POST", "POST"], ["mixed reads (all GET kinds)", files.mixed]] as const) {
    await load(server.url, key.key, source, 1); // first use of each statement is a necessary prepare
    const before = await readProbe();
    const { requests } = await load(server.url, key.key, source, 2);
    const after = await readProbe();
    let prepared = 0, distinct = 0;
    for (const [sql, n] of Object.entries(after)) {
      if (n > (before[sql] ?? 0)) distinct++;
      prepared += n - (before[sql] ?? 0);
    }
    probes.push({ name, requests, distinct, prepared });
  }
  await stop(server.proc);

  // ---------- print ----------
  const lines: string[] = [];
  const out = (s = "") => (console.log(s), lines.push(s));
  out(`# CRM service benchmark`);
  out();
  out(`- date: ${started.toISOString()}`);
  out(`- machine: nproc=${nproc} (${cpuModel}), Bun ${bunVersion}, ${process.platform}/${process.arch}`);
  out(`- load generator: ${loader}; ${WARMUP} s warm-up then ${SECONDS} s measured per scenario, 127.0.0.1 only.`);
  out(`- **client and server share the same ${nproc} CPUs**, so absolute req/s are lower than on separate machines.`);
  out(`- load average (1 min) at start ${startLoad.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}: anything else running on the machine skews these figures.`);
  out(`- data: ${seeded.contacts.toLocaleString("en")} contacts, ${seeded.searchTerms.toLocaleString("en")} search terms, ` +
    `${seeded.contactTags.toLocaleString("en")} contact tags; seeded in ${seeded.seconds.toFixed(1)} s ` +
    `(rows ${seeded.phases.rows} s, index build ${seeded.phases.indexes} s, ANALYZE ${seeded.phases.analyze} s).`);
  out(`- server: \`bun src/main.ts serve\`, CRM_LOG_LEVEL=warn unless the row says info (log to a file).`);
  out();
  out(table(rows));
  out();
  out(`Latency at 1 connection (no queueing; ${Math.max(2, Math.round(SECONDS / 2))} s each, wrk -t1 -c1):`);
  out();
  out(`| scenario | p50 ms | p95 ms | p99 ms | req/s | p95 ≤ 5 ms |`);
  out(`|---|---|---|---|---|---|`);
  for (const { name, r } of single) {
    out(`| ${name} | ${ms(r.p50Us)} | ${ms(r.p95Us)} | ${ms(r.p99Us)} | ${r.rps.toFixed(0)} | ${name === "GET one" ? "" : r.p95Us <= 5000 ? "PASS" : "MISS"} |`);
  }
  out();
  out(`GET-one throughput vs bare Hono route: ${getOne.rps.toFixed(0)} / ${bareR.rps.toFixed(0)} = **${ratio.toFixed(2)}×** ` +
    `(target ≥ 0.6×: ${ratio >= 0.6 ? "PASS" : "MISS"})`);
  out();
  out(`## In-process profile (service functions on the seeded DB, no HTTP, 300 calls each)`);
  out();
  for (const p of profile.queries as QueryProfile[]) {
    out(`- **${p.name}**: p50 ${p.p50Ms} ms, p95 ${p.p95Ms} ms, ${p.statements} distinct statements; ` +
      `slowest statement (${p.topAvgUs} µs per run) takes ${Math.round(p.topShare * 100)}% of statement time:`);
    out(`  - \`${p.topSql.replace(/\s+/g, " ").slice(0, 400)}\``);
    out(`  - plan: ${p.plan.map((l) => `\`${l}\``).join(" → ")}`);
  }
  out();
  out(`## Statement cache`);
  out();
  out(`- preparing a statement costs ${profile.statementCost.prepareUs} µs on average over the ${profile.statementCost.statements} ` +
    `statements above; taking it from Bun's cache (Database.query) ${profile.statementCost.cachedUs} µs.`);
  out(`- Bun's own statement cache (Database.query) keeps only Database.MAX_QUERY_CACHE_SIZE = ${profile.bunQueryCacheSize} statements.`);
  out(`- statements the server really prepared while under load (2 s per scenario after a 1 s warm-up; bench/stmt-probe.ts ` +
    `counts bun:sqlite prepares behind whatever cache src/runtime/bun.ts uses). ~0 per request = the cache works:`);
  out();
  out(`| scenario | requests | statements prepared | distinct SQL prepared | prepares per request |`);
  out(`|---|---|---|---|---|`);
  for (const p of probes) out(`| ${p.name} | ${p.requests} | ${p.prepared} | ${p.distinct} | ${(p.prepared / Math.max(1, p.requests)).toFixed(4)} |`);
  writeFileSync(join(ROOT, "bench", "RESULTS.md"), lines.join("\n") + "\n");
  log("wrote bench/RESULTS.md");
}

try {
  await main();
} catch (error) {
  console.error("[bench] failed:", error);
  process.exitCode = 1;
} finally {
  for (const proc of [...children]) await stop(proc);
  cleanup();
}
process.exit(process.exitCode ?? 0);
