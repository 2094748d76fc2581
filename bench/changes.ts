/**
 * `npm run bench:changes [N]` (docs/api.md §19, docs/performance.md "Change log (issue 28)"):
 * what the change log costs and what its readers give, against real servers started by the
 * bench harness (bench/harness/process.ts), on a SQLite file and on an embedded PostgreSQL
 * (bench/postgres/cluster.ts), with every row built THROUGH THE API and nobody running ANALYZE.
 * N (argv[2], default 100,000) contacts are loaded once with `POST /v1/contacts/batch`
 * (1,000 items a batch, 2 in flight) across 4 projects (N/4 each), by the current build.
 * Prints, per backend, one Markdown table of figures measured in this one run:
 *
 * 1. the change log's cost on `POST /contacts` and `PATCH /contacts/{id}`: server CPU per
 *    request (utime+stime of the server process from /proc, plus every PostgreSQL process on
 *    PostgreSQL) of the current build ("after") against the last commit before the change log
 *    ("before": a git worktree of the parent of the commit that added db/0010_change_log.sql,
 *    on a copy of the loaded database without the change log's schema_migrations row), run
 *    alternately before, after, before, after, each on a fresh server (200 requests of
 *    warm-up, then BENCH_CHANGES_WRITES POSTs and as many PATCHes of random existing contacts
 *    at 4 connections across the 4 projects); the medians' ratio (target ≤ 1.15);
 * 2. following `GET /changes` (limit 1,000, one connection) from no cursor to the end, for the
 *    first project and for the largest one: changes read per second (target ≥ 20,000/s);
 * 3. `GET /contacts/{id}/history` of contacts with ~20 records each (made with PATCHes), p50 /
 *    p95 at one connection over BENCH_CHANGES_HISTORY_READS requests rotating over 50
 *    contacts (target p95 ≤ 5 ms), beside `GET /contacts/{id}` of the same contacts
 *    interleaved with them (the same server's one-row read, for scale);
 * 4. deliveries per second to a loopback receiver (Bun.serve in this process, 200 at once)
 *    with `ordering: "per-contact"` against `ordering: "none"` (one subscription at a time,
 *    same load: 100 contacts of a fifth project each PATCHed 20 times, from the first write
 *    to the last delivery), their ratio, and a check that the per-contact receiver saw each
 *    contact's versions in order (OK/FAIL), two runs of each; then the dispatcher alone: the
 *    last run's 2,000 events redelivered at once to a new subscription of each ordering. The
 *    server runs with CRM_ENV=sandbox (loopback receivers) and CRM_OUTBOX_POLL_MS=50;
 * and the change log's size on disk beside the contacts table's.
 *
 * Ratios are what to compare: the machine is shared (2 cores).
 *
 * Env: BENCH_POSTGRES=0, BENCH_SQLITE=0 (one backend only), BENCH_CHANGES_WRITES (2,000 POSTs
 * and 2,000 PATCHes per run), BENCH_CHANGES_ROUNDS (2: before/after pairs),
 * BENCH_CHANGES_HISTORY_READS (2,000), BENCH_CHANGES_BEFORE_REV (a commit instead of the one
 * found), BENCH_KEEP=1 keeps the temp dir (the worktree is removed all the same).
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { envNumber } from "./config.ts";
import { BUN, Children, crmCli, guard, ROOT, startServer, type Server } from "./harness/process.ts";
import { mdTable, percentile, times, verdict } from "./harness/report.ts";
import { FIRST, drawPerson, prng } from "./harness/seed/people.ts";
import { postgresTicks, procTicks, startBenchCluster, ticksToUs, type BenchCluster } from "./postgres/cluster.ts";
import { call, type Client, pool, range } from "./harness/http.ts";

const N = Number(process.argv[2] ?? 100_000);
const PROJECTS = 4;
const BATCH = 1000;
const LOAD_CONNECTIONS = 2;
const WRITE_CONNECTIONS = 4;
const WARMUP = 200;
const WRITES = envNumber("BENCH_CHANGES_WRITES", 2000);
const ROUNDS = envNumber("BENCH_CHANGES_ROUNDS", 2);
const HISTORY_CONTACTS = 50;
const HISTORY_RECORDS = 20;
const HISTORY_READS = envNumber("BENCH_CHANGES_HISTORY_READS", 2000);
const ORDER_CONTACTS = 100;
const ORDER_PATCHES = 20;
const ORDER_ROUNDS = 2;
const POSTGRES = process.env.BENCH_POSTGRES !== "0";
const SQLITE = process.env.BENCH_SQLITE !== "0";
const TARGET = { cpuRatio: 1.15, feedPerS: 20_000, historyP95Ms: 5 };
// Per backend, at pessimistic rates: the load at 300 items/s, writes at 50/s, the feed at
// 2,000 records/s, and 10 min for the rest (starts, copies, the ordering runs, sizes).
const PER_BACKEND_MS =
  (N / 300 + (ROUNDS * 2 * (2 * WRITES + WARMUP)) / 50 + N / 2000 + (HISTORY_CONTACTS * HISTORY_RECORDS + HISTORY_READS) / 50 + 600) * 1000;
const HARD_LIMIT_MS = ((SQLITE ? 1 : 0) + (POSTGRES ? 1 : 0)) * PER_BACKEND_MS + 5 * 60_000;

const children = new Children();
const tmp = mkdtempSync(join(tmpdir(), "crm-bench-changes-"));
const worktree = join(tmp, "before-build");
let worktreeAdded = false;
let cluster: BenchCluster | null = null;
let receiver: ReturnType<typeof Bun.serve> | null = null;
const log = (msg: string) => console.log(`[bench:changes] ${msg}`);

function removeWorktree() {
  if (!worktreeAdded) return;
  worktreeAdded = false;
  Bun.spawnSync(["git", "-C", ROOT, "worktree", "remove", "--force", worktree]);
  Bun.spawnSync(["git", "-C", ROOT, "worktree", "prune"]);
}
async function cleanup() {
  children.killAll();
  receiver?.stop(true);
  receiver = null;
  await cluster?.stop().catch(() => {});
  cluster = null;
  removeWorktree();
  if (!process.env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
}
guard({ label: "bench:changes", limitMs: HARD_LIMIT_MS, cleanup });

type Backend = "sqlite" | "postgres";
type Body = Record<string, unknown>;

// ---------- the build before the change log ----------

function git(args: string[]): string {
  const r = Bun.spawnSync(["git", "-C", ROOT, ...args]);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

/** The parent of the commit that added db/0010_change_log.sql, checked out under the temp dir with this tree's node_modules. */
function prepareBeforeBuild(): string {
  const added = git(["log", "--diff-filter=A", "--format=%H", "--", "db/0010_change_log.sql"]).split("\n").pop()!;
  if (!added) throw new Error("no commit added db/0010_change_log.sql");
  const rev = process.env.BENCH_CHANGES_BEFORE_REV ?? git(["rev-parse", `${added}^`]);
  git(["worktree", "add", "--detach", worktree, rev]);
  worktreeAdded = true;
  symlinkSync(join(ROOT, "node_modules"), join(worktree, "node_modules"));
  return rev;
}

/** The server of one build on a database: `after` is this tree, `before` the worktree (run from its own folder). */
function startBuild(build: "before" | "after", env: Record<string, string>, name: string): Promise<Server> {
  return startServer({
    cmd: build === "after" ? undefined : ["sh", "-c", 'cd "$1" && exec "$2" src/main.ts serve', "sh", worktree, BUN],
    env: { CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "warn", ...env },
    stdout: join(tmp, `${name}.log`),
    stderr: join(tmp, `${name}.err`),
    ready: "/readyz",
    name,
    children,
  });
}

// ---------- HTTP ----------



/** Person `n` of project `p` (deterministic), with an email of its own. */
function person(p: number, n: number, email = `person.${n}@p${p}.changes.example.com`): Body {
  const r = prng(9_000_011 + p * 10_000_019 + n);
  const common = <T>(list: T[]): T => list[Math.floor(list.length * r.next() ** 2)]!;
  const x = drawPerson(r, n, [], common);
  return {
    firstName: x.first ?? common(FIRST),
    ...(x.last ? { lastName: x.last } : {}),
    ...(x.business ? { businessName: x.business } : {}),
    email,
    ...(x.phone ? { phone: x.phone } : {}),
    ...(r.next() < 0.3 ? { tags: ["newsletter"] } : {}),
  };
}


// ---------- a backend ----------

interface Project {
  id: string;
  key: string;
  count: number;
}

interface Store {
  backend: Backend;
  /** The environment of a server (and CLI) on the loaded ("after") database and on its copy. */
  after: Record<string, string>;
  before: Record<string, string>;
  /** CPU ticks outside the server that a request costs (PostgreSQL's processes). */
  extraTicks(): number;
  /** Copies the loaded database (its server stopped) and takes the change log's migration out of the copy. */
  copyForBefore(): Promise<void>;
  /** Change records per project of the loaded database. */
  perProject(): Promise<Map<string, number>>;
  sizes(): Promise<Sizes>;
}

interface Sizes {
  changesRows: number;
  changesTable: number;
  changesIndexes: number;
  contactsRows: number;
  contactsTable: number;
  contactsIndexes: number;
}

interface WriteFigures {
  requests: number;
  cpuUs: number;
  rps: number;
  p50: number;
}

interface Figures {
  backend: Backend;
  rev: string;
  load: { seconds: number; rate: number };
  runs: Array<{ build: "before" | "after"; post: WriteFigures; patch: WriteFigures }>;
  feed: Array<{ label: string; records: number; pages: number; seconds: number; rate: number; gaps: number }>;
  history: { p50: number; p95: number; max: number; records: number; reads: number; getOneP50: number; getOneP95: number };
  ordering: Array<{ ordering: "per-contact" | "none"; backlog: boolean; writesS: number; lastS: number; rate: number; lagMs: number; delivered: number; inOrder: boolean; inversions: number }>;
  sizes: Sizes;
}

/** The 4 projects through the admin CLI, limits out of the way, each with a key. */
function makeProjects(env: Record<string, string>, backend: Backend): Project[] {
  const cli = crmCli({ ...env, CRM_BOOTSTRAP: "false" }, 60_000);
  const counts = range(0, PROJECTS).map((p) => Math.floor(N / PROJECTS) + (p < N % PROJECTS ? 1 : 0));
  return counts.map((count, p) => {
    const project = cli(["project", "create", "--name", `changes-${backend}-${p + 1}`, "--rate-limit-per-minute", "1000000000",
      "--contact-creates-per-hour", "1000000000", "--batch-items-per-hour", "1000000000"]);
    const key = cli(["key", "create", "--project", project.id, "--scopes", "contacts:read,contacts:write"]);
    return { id: project.id, key: key.key as string, count };
  });
}

/** The N contacts through POST /contacts/batch, batches taken from the projects in turn, 2 in flight. */
async function load(url: string, projects: Project[]) {
  const jobs: Array<{ p: number; from: number; to: number }> = [];
  for (let from = 0; jobs.length === 0 || projects.some((x) => from < x.count); from += BATCH) {
    for (const [p, x] of projects.entries()) if (from < x.count) jobs.push({ p, from, to: Math.min(x.count, from + BATCH) });
  }
  const started = performance.now();
  let done = 0;
  let shown = 0;
  await pool(jobs.length, LOAD_CONNECTIONS, async (j) => {
    const { p, from, to } = jobs[j]!;
    const { json } = await call({ url, key: projects[p]!.key }, "POST", "/contacts/batch", {
      operation: "create",
      items: range(from, to).map((i) => person(p, i + 1)),
    });
    if (json.summary.failed > 0) throw new Error(`a batch had failed items: ${JSON.stringify(json.results.find((r: any) => r.result === "error"))}`);
    done += to - from;
    if (done - shown >= N / 10) (shown = done), log(`  ${done.toLocaleString("en")} / ${N.toLocaleString("en")}`);
  });
  const seconds = (performance.now() - started) / 1000;
  return { seconds, rate: N / seconds };
}

/** One run of a build: warm-up, then the POSTs, then the PATCHes, each with its server CPU per request. */
async function writeRun(store: Store, build: "before" | "after", round: number, projects: Project[]) {
  const server = await startBuild(build, build === "after" ? store.after : store.before, `${store.backend}-${build}-${round}`);
  try {
    const clients = projects.map((p) => ({ url: server.url, key: p.key }));
    const r = prng(31_337 + round); // the same contacts for the before and the after run of a round
    let made = 0;
    const post = (i: number) => {
      const p = i % PROJECTS;
      return call(clients[p]!, "POST", "/contacts", person(p, 1_000_000_000 + ++made, `w.${build}.${round}.${made}@p${p}.changes.example.com`));
    };
    const patch = (i: number) => {
      const p = i % PROJECTS;
      const n = 1 + Math.floor(r.next() * projects[p]!.count);
      return call(clients[p]!, "PATCH", `/contacts/CR-${n}`, { notes: `round ${round} ${build}, write ${i}: ${r.next().toString(36).slice(2)}` });
    };
    await pool(WARMUP, WRITE_CONNECTIONS, (i) => (i % 2 === 0 ? post(i) : patch(i)));
    const measure = async (job: (i: number) => Promise<{ ms: number }>): Promise<WriteFigures> => {
      const latencies: number[] = [];
      const ticks = () => procTicks(server.proc.pid) + store.extraTicks();
      const t0 = ticks();
      const started = performance.now();
      await pool(WRITES, WRITE_CONNECTIONS, async (i) => latencies.push((await job(i)).ms));
      const seconds = (performance.now() - started) / 1000;
      return { requests: WRITES, cpuUs: ticksToUs(ticks() - t0) / WRITES, rps: WRITES / seconds, p50: percentile(latencies, 50) };
    };
    const postF = await measure(post);
    const patchF = await measure(patch);
    log(`  ${build} #${round + 1}: POST ${postF.cpuUs.toFixed(0)} µs CPU/request (${postF.rps.toFixed(0)}/s), PATCH ${patchF.cpuUs.toFixed(0)} µs CPU/request (${patchF.rps.toFixed(0)}/s)`);
    return { build, post: postF, patch: patchF };
  } finally {
    await server.stop();
  }
}

/** GET /changes from no cursor to the end, limit 1,000, at one connection; records, pages, seconds, seq gaps. */
async function follow(c: Client) {
  const started = performance.now();
  let after: string | null = null;
  let records = 0;
  let pages = 0;
  let last = 0;
  let gaps = 0;
  for (;;) {
    const { json } = await call(c, "GET", `/changes?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ""}`);
    pages++;
    for (const record of json.data as Array<{ seq: number }>) {
      if (record.seq !== last + 1) gaps++;
      last = record.seq;
    }
    records += json.data.length;
    after = json.pagination.nextCursor;
    if (!after) throw new Error("a feed page without pagination.nextCursor");
    if (!json.pagination.hasMore) break;
  }
  const seconds = (performance.now() - started) / 1000;
  return { records, pages, seconds, rate: records / seconds, gaps };
}

/** The loopback receiver: every delivery's path, contact, version and arrival time. */
interface Arrival {
  path: string;
  contactId: string;
  version: number;
  at: number;
}
function startReceiver(): { url: string; arrivals: Arrival[] } {
  const arrivals: Arrival[] = [];
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const body = (await request.json().catch(() => null)) as { data?: { contact?: { contactId?: string; version?: number } } } | null;
      arrivals.push({ path: new URL(request.url).pathname, contactId: body?.data?.contact?.contactId ?? "", version: body?.data?.contact?.version ?? 0, at: performance.now() });
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${receiver.port}`, arrivals };
}

/** Step 4: per-contact against none, on a fifth project of the same database, server in sandbox mode. */
async function orderingRuns(store: Store) {
  const env = { ...store.after, CRM_ENV: "sandbox", CRM_OUTBOX_POLL_MS: "50" };
  const cli = crmCli({ ...env, CRM_BOOTSTRAP: "false" }, 60_000);
  const project = cli(["project", "create", "--name", `changes-${store.backend}-ordering`, "--rate-limit-per-minute", "1000000000",
    "--contact-creates-per-hour", "1000000000", "--batch-items-per-hour", "1000000000"]);
  const key = cli(["key", "create", "--project", project.id, "--scopes", "contacts:read,contacts:write,webhooks:manage"]);
  const rx = startReceiver();
  const server = await startBuild("after", env, `${store.backend}-ordering`);
  const c = { url: server.url, key: key.key as string };
  const out: Figures["ordering"] = [];
  let lastWindow: { since: string; until: string } | null = null;
  /** The deliveries to `path` once `count` arrived (or a generous deadline passed). */
  const arrived = async (path: string, count: number) => {
    const mine = () => rx.arrivals.filter((a) => a.path === path);
    const deadline = performance.now() + 120_000 + count * 100;
    while (mine().length < count && performance.now() < deadline) await Bun.sleep(20);
    return mine();
  };
  /** Rate from `started` to the last arrival, lag after `writesEnd`, and whether each contact's versions came in order, all there. */
  const verdictOf = (got: Arrival[], started: number, writesEnd: number, count: number, perContact: number) => {
    const lastAt = got.length ? Math.max(...got.map((a) => a.at)) : performance.now();
    const byContact = new Map<string, number[]>();
    for (const a of got) byContact.set(a.contactId, [...(byContact.get(a.contactId) ?? []), a.version]);
    let inversions = 0;
    for (const versions of byContact.values()) for (let i = 1; i < versions.length; i++) if (versions[i]! <= versions[i - 1]!) inversions++;
    const complete = got.length === count && byContact.size === ORDER_CONTACTS && [...byContact.values()].every((v) => v.length === perContact);
    if (!complete) console.warn(`[bench:changes] WARNING: ${got.length} of ${count} deliveries (${byContact.size} contacts) arrived`);
    return {
      writesS: (writesEnd - started) / 1000,
      lastS: (lastAt - started) / 1000,
      rate: got.length / ((lastAt - started) / 1000),
      lagMs: Math.max(0, lastAt - writesEnd), // the receiver is in this process: a delivery can land before the last answer is read
      delivered: got.length,
      inOrder: complete && inversions === 0,
      inversions,
    };
  };
  try {
    await call(c, "POST", "/contacts/batch", { operation: "create", items: range(0, ORDER_CONTACTS).map((i) => person(9, i + 1)) });
    const total = ORDER_CONTACTS * ORDER_PATCHES;
    let written = 0;
    for (let round = 0; round < ORDER_ROUNDS; round++) {
      for (const ordering of ["per-contact", "none"] as const) {
        const path = `/${ordering}-${round}`;
        const hook = (await call(c, "POST", "/webhooks", { url: `${rx.url}${path}`, events: ["contact.updated"], ordering })).json;
        const started = performance.now();
        const wallStart = Date.now() - 5; // the events of this run only: the last run's writes ended well before
        // Round-robin over the contacts, 4 in flight: a contact's PATCHes are 100 writes apart.
        await pool(total, WRITE_CONNECTIONS, (i) => call(c, "PATCH", `/contacts/CR-${1 + (i % ORDER_CONTACTS)}`, { notes: `ordering ${written + i}` }));
        written += total;
        const writesEnd = performance.now();
        const got = await arrived(path, total);
        // Disabled before the next subscription takes the same load (its late deliveries would be mixed in otherwise).
        await call(c, "PATCH", `/webhooks/${hook.id}`, { status: "disabled" });
        const f = { ordering, backlog: false, ...verdictOf(got, started, writesEnd, total, ORDER_PATCHES) };
        out.push(f);
        log(`  ${ordering} #${round + 1}: ${f.delivered}/${total} delivered in ${f.lastS.toFixed(2)} s (${f.rate.toFixed(0)}/s; writes ${f.writesS.toFixed(2)} s, last delivery ${f.lagMs.toFixed(0)} ms after the last write), ${f.inversions} out of order`);
        lastWindow = { since: new Date(wallStart).toISOString(), until: new Date(Date.now()).toISOString() };
      }
    }
    // The dispatcher alone: the last run's events queued at once (redeliver) to a new subscription of each ordering.
    for (const ordering of ["per-contact", "none"] as const) {
      const path = `/backlog-${ordering}`;
      const hook = (await call(c, "POST", "/webhooks", { url: `${rx.url}${path}`, events: ["contact.updated"], ordering })).json;
      const started = performance.now();
      const { queued } = (await call(c, "POST", `/webhooks/${hook.id}/redeliver`, lastWindow!)).json as { queued: number };
      if (queued !== total) console.warn(`[bench:changes] WARNING: redeliver queued ${queued} events, not the last run's ${total}`);
      const got = await arrived(path, queued);
      await call(c, "PATCH", `/webhooks/${hook.id}`, { status: "disabled" });
      out.push({ ordering, backlog: true, ...verdictOf(got, started, started, queued, queued / ORDER_CONTACTS) });
      const f = out.at(-1)!;
      log(`  backlog, ${ordering}: ${f.delivered}/${queued} delivered in ${f.lastS.toFixed(2)} s (${f.rate.toFixed(0)}/s), ${f.inversions} out of order`);
    }
  } finally {
    await server.stop();
    receiver?.stop(true);
    receiver = null;
  }
  return out;
}

async function runOn(store: Store, rev: string): Promise<Figures> {
  const b = store.backend;
  const projects = makeProjects(store.after, b);
  let server = await startBuild("after", store.after, `${b}-load`);
  log(`${b}: loading ${N.toLocaleString("en")} contacts into ${PROJECTS} projects (batches of ${BATCH}, ${LOAD_CONNECTIONS} in flight)…`);
  let loaded: Figures["load"];
  try {
    loaded = await load(server.url, projects);
  } finally {
    await server.stop();
  }
  log(`  ${loaded.rate.toFixed(0)} contacts/s (${loaded.seconds.toFixed(1)} s)`);

  log(`${b}: copying the database for the build before the change log (${rev.slice(0, 10)})…`);
  await store.copyForBefore();
  const runs: Figures["runs"] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of ["before", "after"] as const) runs.push(await writeRun(store, build, round, projects));
  }

  server = await startBuild("after", store.after, `${b}-read`);
  const feed: Figures["feed"] = [];
  let history: Figures["history"];
  try {
    const counts = await store.perProject();
    const largest = projects.reduce((a, x) => ((counts.get(x.id) ?? 0) > (counts.get(a.id) ?? 0) ? x : a));
    const followed = largest.id === projects[0]!.id ? [projects[0]!] : [projects[0]!, largest];
    for (const p of followed) {
      const label = p === largest ? `project ${projects.indexOf(p) + 1} (the largest)` : `project ${projects.indexOf(p) + 1}`;
      log(`${b}: following GET /changes of ${label} (${(counts.get(p.id) ?? 0).toLocaleString("en")} records)…`);
      const f = await follow({ url: server.url, key: p.key });
      feed.push({ label, ...f });
      log(`  ${f.records.toLocaleString("en")} records in ${f.pages} pages, ${f.seconds.toFixed(2)} s: ${f.rate.toFixed(0)}/s${f.gaps ? `, ${f.gaps} seq gaps` : ""}`);
    }

    log(`${b}: history of ${HISTORY_CONTACTS} contacts made ~${HISTORY_RECORDS} records long, ${HISTORY_READS} reads at 1 connection…`);
    const c = { url: server.url, key: projects[0]!.key };
    // The contacts of project 1 from the middle of its numbers (step 1's random PATCHes may have added a record or two).
    const ids = range(0, HISTORY_CONTACTS).map((i) => `CR-${Math.max(1, Math.floor(projects[0]!.count / 2)) + i}`);
    await pool(HISTORY_CONTACTS * (HISTORY_RECORDS - 1), WRITE_CONNECTIONS, (i) =>
      call(c, "PATCH", `/contacts/${ids[i % HISTORY_CONTACTS]}`, { source: `history ${i}`, notes: `history note ${i}` }));
    // Interleaved with GET /contacts/{id} of the same contacts: the same server's answer to a one-row read, for scale.
    const latencies: number[] = [];
    const getOne: number[] = [];
    let records = 0;
    for (let i = 0; i < HISTORY_READS; i++) {
      const r = await call(c, "GET", `/contacts/${ids[i % HISTORY_CONTACTS]}/history`);
      latencies.push(r.ms);
      records += r.json.data.length;
      getOne.push((await call(c, "GET", `/contacts/${ids[(i * 7) % HISTORY_CONTACTS]}`)).ms);
    }
    history = {
      p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: Math.max(...latencies), records: records / HISTORY_READS, reads: HISTORY_READS,
      getOneP50: percentile(getOne, 50), getOneP95: percentile(getOne, 95),
    };
    log(`  p50 ${history.p50.toFixed(2)} ms, p95 ${history.p95.toFixed(2)} ms (${history.records.toFixed(1)} records a page); GET one p50 ${history.getOneP50.toFixed(2)} ms, p95 ${history.getOneP95.toFixed(2)} ms`);
  } finally {
    await server.stop();
  }

  log(`${b}: deliveries with ordering per-contact and none (sandbox server, CRM_OUTBOX_POLL_MS=50)…`);
  const ordering = await orderingRuns(store);
  log(`${b}: sizes on disk…`);
  const sizes = await store.sizes();
  return { backend: b, rev, load: loaded, runs, feed, history: history!, ordering, sizes };
}

// ---------- the two stores ----------

function sqliteStore(): Store {
  const after = join(tmp, "after.db");
  const before = join(tmp, "before.db");
  return {
    backend: "sqlite",
    after: { CRM_DB_PATH: after },
    before: { CRM_DB_PATH: before },
    extraTicks: () => 0,
    async copyForBefore() {
      const db = new Database(after);
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.close();
      if (existsSync(`${after}-wal`) && Bun.file(`${after}-wal`).size > 0) throw new Error("after.db's WAL was not checkpointed");
      copyFileSync(after, before);
      const copy = new Database(before);
      const gone = copy.query("DELETE FROM schema_migrations WHERE name = '0010_change_log' RETURNING name").all();
      copy.close();
      if (gone.length !== 1) throw new Error("the copy had no 0010_change_log migration row");
    },
    async perProject() {
      const db = new Database(after, { readonly: true });
      try {
        return new Map(db.query<{ project_id: string; n: number }, []>("SELECT project_id, last_seq AS n FROM change_counters").all().map((r) => [r.project_id, r.n]));
      } finally {
        db.close();
      }
    },
    async sizes() {
      const db = new Database(after, { readonly: true });
      try {
        const pages = new Map(db.query<{ name: string; size: number }, []>("SELECT name, SUM(pgsize) AS size FROM dbstat GROUP BY name").all().map((r) => [r.name, r.size]));
        const indexesOf = (table: string) =>
          db.query<{ name: string }, [string]>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?").all(table).reduce((s, r) => s + (pages.get(r.name) ?? 0), 0);
        const count = (table: string) => db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
        return {
          changesRows: count("changes"), changesTable: pages.get("changes") ?? 0, changesIndexes: indexesOf("changes"),
          contactsRows: count("contacts"), contactsTable: pages.get("contacts") ?? 0, contactsIndexes: indexesOf("contacts"),
        };
      } finally {
        db.close();
      }
    },
  };
}

async function postgresStore(c: BenchCluster): Promise<Store> {
  const { Client: PgClient } = await import("pg");
  const query = async <T = any>(database: string, sql: string): Promise<T[]> => {
    const client = new PgClient({ connectionString: c.url(database) });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };
  await query("postgres", "CREATE DATABASE crm_after");
  const secret = randomBytes(32).toString("base64");
  const env = (database: string) => ({ CRM_DATABASE_URL: c.url(database), CRM_SECRET_KEY: secret, CRM_DB_PATH: join(tmp, "unused.db") });
  return {
    backend: "postgres",
    after: env("crm_after"),
    before: env("crm_before"),
    extraTicks: () => postgresTicks(c.postmasterPid()),
    async copyForBefore() {
      await query("postgres", "CHECKPOINT");
      await query("postgres", "CREATE DATABASE crm_before TEMPLATE crm_after");
      const gone = await query("crm_before", "DELETE FROM schema_migrations WHERE name = '0006_change_log' RETURNING name");
      if (gone.length !== 1) throw new Error("the copy had no 0006_change_log migration row");
    },
    async perProject() {
      const rows = await query<{ project_id: string; n: string }>("crm_after", "SELECT project_id, last_seq AS n FROM change_counters");
      return new Map(rows.map((r) => [r.project_id, Number(r.n)]));
    },
    async sizes() {
      const [r] = await query("crm_after", `SELECT
        (SELECT count(*) FROM changes) AS changes_rows, pg_relation_size('changes') AS changes_table, pg_indexes_size('changes') AS changes_indexes,
        pg_total_relation_size('changes') - pg_relation_size('changes') - pg_indexes_size('changes') AS changes_toast,
        (SELECT count(*) FROM contacts) AS contacts_rows, pg_relation_size('contacts') AS contacts_table, pg_indexes_size('contacts') AS contacts_indexes,
        pg_total_relation_size('contacts') - pg_relation_size('contacts') - pg_indexes_size('contacts') AS contacts_toast`);
      return {
        changesRows: Number(r.changes_rows), changesTable: Number(r.changes_table) + Number(r.changes_toast), changesIndexes: Number(r.changes_indexes),
        contactsRows: Number(r.contacts_rows), contactsTable: Number(r.contacts_table) + Number(r.contacts_toast), contactsIndexes: Number(r.contacts_indexes),
      };
    },
  };
}

// ---------- the report ----------

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

function table(f: Figures): string {
  const rows: string[][] = [];
  for (const kind of ["post", "patch"] as const) {
    const label = kind === "post" ? "POST /contacts" : "PATCH /contacts/{id}";
    const of = (build: "before" | "after") => f.runs.filter((r) => r.build === build).map((r) => r[kind]);
    const before = median(of("before").map((w) => w.cpuUs));
    const after = median(of("after").map((w) => w.cpuUs));
    const each = (build: "before" | "after") => of(build).map((w) => w.cpuUs.toFixed(0)).join(", ");
    rows.push([`${label}: server CPU µs/request, before → after (median of ${each("before")} → ${each("after")})`,
      `${before.toFixed(0)} → ${after.toFixed(0)}: ${times(after / before)}`, `≤ ${TARGET.cpuRatio}×`, verdict(after / before <= TARGET.cpuRatio)]);
    const rps = (build: "before" | "after") => median(of(build).map((w) => w.rps)).toFixed(0);
    const p50 = (build: "before" | "after") => median(of(build).map((w) => w.p50)).toFixed(2);
    rows.push([`${label}: req/s at ${WRITE_CONNECTIONS} connections, before → after (p50 ms)`, `${rps("before")} → ${rps("after")} (${p50("before")} → ${p50("after")})`, "", ""]);
  }
  for (const x of f.feed) {
    rows.push([`GET /changes from the start, limit 1000, 1 connection: ${x.label}, ${x.records.toLocaleString("en")} records in ${x.pages} pages${x.gaps ? `, ${x.gaps} SEQ GAPS` : ""}`,
      `${x.rate.toFixed(0)} changes/s (${x.seconds.toFixed(2)} s)`, `≥ ${TARGET.feedPerS.toLocaleString("en")}/s`, verdict(x.rate >= TARGET.feedPerS && x.gaps === 0)]);
  }
  const h = f.history;
  rows.push([`GET /contacts/{id}/history, ${h.records.toFixed(1)} records a page, 1 connection, ${h.reads} reads over ${HISTORY_CONTACTS} contacts: p50 / p95 (max) ms`,
    `${h.p50.toFixed(2)} / ${h.p95.toFixed(2)} (${h.max.toFixed(1)})`, `p95 ≤ ${TARGET.historyP95Ms} ms`, verdict(h.p95 <= TARGET.historyP95Ms)]);
  rows.push(["GET /contacts/{id} of the same contacts, interleaved with those reads: p50 / p95 ms (for scale)", `${h.getOneP50.toFixed(2)} / ${h.getOneP95.toFixed(2)}`, "", ""]);
  const ord = (o: "per-contact" | "none", backlog = false) => f.ordering.filter((x) => x.ordering === o && x.backlog === backlog);
  for (const o of ["per-contact", "none"] as const) {
    const runs = ord(o);
    rows.push([`deliveries/s, ordering ${o}: ${ORDER_CONTACTS} contacts × ${ORDER_PATCHES} PATCHes at ${WRITE_CONNECTIONS} connections, first write → last delivery (runs: ${runs.map((x) => `${x.rate.toFixed(0)}/s, last ${x.lagMs.toFixed(0)} ms after the writes`).join("; ")})`,
      `${median(runs.map((x) => x.rate)).toFixed(0)}/s`, o === "per-contact" ? "each contact in version order" : "", o === "per-contact"
        ? (runs.every((x) => x.inOrder) ? "OK" : "FAIL")
        : `${runs.reduce((s, x) => s + x.inversions, 0)} out of order`]);
  }
  const ratio = median(ord("per-contact").map((x) => x.rate)) / median(ord("none").map((x) => x.rate));
  rows.push(["deliveries/s, per-contact / none (the writes set the pace when the dispatcher keeps up)", times(ratio), "", ""]);
  for (const o of ["per-contact", "none"] as const) {
    const x = ord(o, true)[0];
    if (!x) continue;
    rows.push([`backlog: the last run's ${x.delivered} events redelivered at once to a new subscription, ordering ${o}`, `${x.rate.toFixed(0)}/s (${x.lastS.toFixed(2)} s)`,
      o === "per-contact" ? "each contact in version order" : "", o === "per-contact" ? (x.inOrder ? "OK" : "FAIL") : `${x.inversions} out of order`]);
  }
  const [bp, bn] = [ord("per-contact", true)[0], ord("none", true)[0]];
  if (bp && bn) rows.push(["backlog deliveries/s, per-contact / none", times(bp.rate / bn.rate), "", ""]);
  const s = f.sizes;
  rows.push([`on disk: changes (${s.changesRows.toLocaleString("en")} records), table + indexes`,
    `${mb(s.changesTable)} + ${mb(s.changesIndexes)} = ${mb(s.changesTable + s.changesIndexes)} (${((s.changesTable + s.changesIndexes) / s.changesRows).toFixed(0)} B/record)`, "", ""]);
  rows.push([`on disk: contacts (${s.contactsRows.toLocaleString("en")} rows), table + indexes`,
    `${mb(s.contactsTable)} + ${mb(s.contactsIndexes)} = ${mb(s.contactsTable + s.contactsIndexes)}; changes / contacts ${times((s.changesTable + s.changesIndexes) / (s.contactsTable + s.contactsIndexes))}`, "", ""]);
  return [
    `### ${f.backend === "sqlite" ? "SQLite (file)" : "PostgreSQL (embedded, durable defaults)"}`,
    "",
    `Load: ${N.toLocaleString("en")} contacts through POST /v1/contacts/batch into ${PROJECTS} projects at ${f.load.rate.toFixed(0)}/s (${f.load.seconds.toFixed(0)} s). ` +
      `Before = ${f.rev.slice(0, 10)} (the parent of the commit that added the change log) on a copy of the same database; ` +
      `${ROUNDS} rounds of before/after, each ${WARMUP} warm-up requests then ${WRITES} POSTs and ${WRITES} PATCHes${f.backend === "postgres" ? "; CPU = server + every PostgreSQL process" : ""}.`,
    "",
    mdTable(["figure", "value", "target", ""], rows),
  ].join("\n");
}

async function main() {
  const rev = prepareBeforeBuild();
  log(`before = ${rev} (worktree ${worktree})`);
  const results: Figures[] = [];
  if (SQLITE) results.push(await runOn(sqliteStore(), rev));
  if (POSTGRES) {
    log("starting embedded PostgreSQL (durable defaults)…");
    cluster = await startBenchCluster({ synchronousCommit: "on", slowMs: 1000 });
    results.push(await runOn(await postgresStore(cluster), rev));
  }
  console.log(`\nbench/changes.ts: ${N.toLocaleString("en")} contacts, ${new Date().toISOString()}\n`);
  for (const f of results) console.log(`${table(f)}\n`);
}

try {
  await main();
} catch (error) {
  console.error("[bench:changes] failed:", error);
  process.exitCode = 1;
} finally {
  await children.stopAll();
  await cleanup();
}
process.exit(process.exitCode ?? 0);
