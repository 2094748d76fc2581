/**
 * Crash loop (decisions §11, §12; interface §6.2): writers issue mixed creates, patches and
 * interaction logs while the server is killed with SIGKILL (kill -9) at random moments and
 * restarted on the same CRM_DB_PATH. After each restart every write acknowledged (answered
 * 2xx) by an earlier process is present; at the end every event GET /events lists reaches
 * a loopback receiver at least once, with one X-Service-Delivery id per event.
 *
 * `bun stress/crash-loop.ts [kills]` runs the full version (20 kills) and prints its
 * figures; test/http/crash-loop.test.ts runs a short one through `runCrashLoop`.
 *
 * Reproducible: the randomness (each writer's choice of operation, when each process is
 * killed) comes from one seed, fixed by default (CRASH_LOOP_SEED overrides it, to explore)
 * and printed with the figures. A process is killed after a number of acknowledged writes
 * drawn from the seed, never after a wall-clock time, so every kill lands on live traffic of
 * every kind however slow the machine is; what the scheduler does meanwhile (which request
 * is on the wire at the kill) is the only part a seed cannot fix.
 */
import { newDbDir, removeDir, spawnServer, type ServerProcess } from "../test/helpers/process.ts";
import { distinct, startReceiver, type Receiver } from "../test/helpers/receiver.ts";
import { BUN, runCommand } from "../test/helpers/spawn.ts";
import { until } from "../test/helpers/until.ts";
import { seededRandom } from "../test/helpers/random.ts";

/** The seed when neither the caller nor CRASH_LOOP_SEED gives one. */
export const DEFAULT_SEED = 20_240_611;

/** The seed of a run: CRASH_LOOP_SEED when set (a decimal integer), else DEFAULT_SEED. */
export function crashLoopSeed(env: Record<string, string | undefined> = process.env): number {
  const text = env.CRASH_LOOP_SEED;
  if (text === undefined || text === "") return DEFAULT_SEED;
  if (!/^\d+$/.test(text)) throw new Error(`CRASH_LOOP_SEED must be a decimal integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

export const CRASH_ENV: Record<string, string> = {
  CRM_ENV: "sandbox",
  CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s,1s",
  CRM_OUTBOX_POLL_MS: "50",
  CRM_WEBHOOK_TIMEOUT_MS: "5000",
};

export interface CrashLoopOptions {
  kills: number;
  /** Concurrent writers (default 4). */
  writers?: number;
  /**
   * Each process is killed -9 once it has acknowledged a number of writes drawn from
   * [minWritesPerLife, maxWritesPerLife] and at least `minEachKindPerLife` of each kind
   * (create, patch, interaction). The last process serves as many before the final checks.
   */
  minWritesPerLife?: number;
  maxWritesPerLife?: number;
  minEachKindPerLife?: number;
  /** A process that has not served its share within this time is a problem; the loop goes on (default 30 s). */
  lifeTimeoutMs?: number;
  /** How long to wait for every event to reach the receiver after the last restart. */
  deliveryTimeoutMs?: number;
  /** The seed of all randomness (default: crashLoopSeed(), i.e. CRASH_LOOP_SEED or DEFAULT_SEED). */
  seed?: number;
  log?: (line: string) => void;
}

export interface Acknowledged {
  creates: number;
  patches: number;
  interactions: number;
  total: number;
}

export interface CrashLoopFigures {
  seed: number;
  kills: number;
  starts: number;
  acknowledged: Acknowledged;
  /** What each process acknowledged before its kill -9 (the last one: before the final checks). */
  perLife: Acknowledged[];
  /** The writes each process was to acknowledge before its kill (drawn from the seed). */
  writeTargets: number[];
  /** Requests that got no answer (connection refused or cut by a kill). */
  unanswered: number;
  /** 5xx answers (not acknowledged; not expected either). */
  serverErrors: number;
  /** Other non-2xx answers, by status. */
  otherStatuses: Record<string, number>;
  events: number;
  eventsByType: Record<string, number>;
  receiverRequests: number;
  distinctDeliveryIds: number;
  distinctEventIdsDelivered: number;
  /** Receiver requests beyond the first per delivery id (at-least-once repeats). */
  duplicates: number;
  /** Milliseconds from the last restart until the receiver had every event. */
  deliveryLagMs: number;
  durationMs: number;
}

export interface CrashLoopResult {
  figures: CrashLoopFigures;
  /** Every broken promise found; empty when the run passed. */
  problems: string[];
}


interface Ack {
  gen: number;
}
interface CreateAck extends Ack {
  contactId: string;
  email: string;
}
interface PatchAck extends Ack {
  contactId: string;
  notes: string;
  seq: number;
}
interface InteractionAck extends Ack {
  contactId: string;
  id: string;
}

interface Live {
  gen: number;
  server: ServerProcess;
}

export async function runCrashLoop(opts: CrashLoopOptions): Promise<CrashLoopResult> {
  const started = Date.now();
  const seed = opts.seed ?? crashLoopSeed();
  // One stream for the kills, one per writer: a writer's choices do not depend on how the
  // scheduler interleaves the writers.
  const rand = seededRandom(seed);
  const log = opts.log ?? (() => {});
  const writerCount = opts.writers ?? 4;
  const minWrites = opts.minWritesPerLife ?? 30;
  const maxWrites = opts.maxWritesPerLife ?? 150;
  const minEachKind = opts.minEachKindPerLife ?? 3;
  const writeTargets = Array.from({ length: opts.kills + 1 }, () => minWrites + Math.floor(rand() * (maxWrites - minWrites + 1)));
  const problems: string[] = [];
  const problem = (p: string) => {
    if (problems.length < 200) problems.push(p);
  };

  const dir = newDbDir("crm-crash-loop-");
  // Answers 200, now and then slowly, so some kills cut deliveries on the wire.
  const rx: Receiver = await startReceiver({ status: 200, maxRandomDelayMs: 60 });
  const servers: ServerProcess[] = [];
  let live: Live | null = null;
  /** Resolves when writers may reach a process again (set with `live`). */
  let liveGate: Promise<void> = new Promise(() => {});
  let openGate = () => {};
  const setLive = (l: Live | null) => {
    live = l;
    if (l) openGate();
    else liveGate = new Promise<void>((r) => (openGate = r));
  };
  setLive(null);
  let starts = 0;

  const creates: CreateAck[] = [];
  const patches: PatchAck[] = [];
  const interactions: InteractionAck[] = [];
  /** Per contact: the highest patch seq ever sent (acknowledged or not). */
  const maxPatchSeqSent = new Map<string, number>();
  let unanswered = 0;
  let serverErrors = 0;
  const otherStatuses: Record<string, number> = {};
  let key = "";

  /** Starts a process; writers reach it only once `live` is set (after the checks of a restart). */
  const start = async (): Promise<Live> => {
    const server = await spawnServer(dir, CRASH_ENV);
    servers.push(server);
    starts++;
    return { gen: starts, server };
  };
  const kill9 = async (l: Live) => {
    setLive(null);
    l.server.proc.kill("SIGKILL");
    await l.server.exited;
  };
  const request = async (l: Live, method: string, path: string, body?: unknown) => {
    const res = await fetch(l.server.baseUrl + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  };
  /** A read on the current process; reads are never cut by a kill (no kill runs meanwhile). */
  const read = async (l: Live, path: string) => {
    const res = await request(l, "GET", path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.json;
  };
  const walk = async (l: Live, path: string) => {
    const items: any[] = [];
    let cursor: string | null = null;
    for (;;) {
      const sep = path.includes("?") ? "&" : "?";
      const page: any = await read(l, `${path}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      items.push(...page.data);
      if (!page.pagination.hasMore) return items;
      cursor = page.pagination.nextCursor;
    }
  };

  try {
    // ---- First start: key, unlimited rates, a subscription to every event ----
    const first = await start();
    if (!first.server.printedKey) throw new Error("no bootstrap key printed on first start");
    key = first.server.printedKey;
    const ping = await read(first, "/ping");
    await runCommand(
      [BUN, "src/main.ts", "project", "update", ping.projectId, "--rate-limit-per-minute", "1000000", "--contact-creates-per-hour", "1000000", "--json"],
      { env: first.server.env }, // the server's own database (CRM_TEST_BACKEND=postgres: its PostgreSQL database)
    );
    const hook = await request(first, "POST", "/webhooks", { url: rx.url, events: ["*"], description: "crash loop" });
    if (hook.status !== 201) throw new Error(`POST /webhooks: ${hook.status} ${hook.text}`);
    const hookId: string = hook.json.id;
    // The server sees the CLI's project settings within 2 s (decisions §1): wait for them.
    await until(
      async () => {
        const res = await fetch(`${first.server.baseUrl}/ping`, { headers: { Authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        return res.headers.get("ratelimit-limit") === "1000000";
      },
      { timeoutMs: 10_000, what: "the unlimited rates to apply" },
    );

    // ---- Writers ----
    let done = false;
    /** Acknowledged writes per process (index: gen - 1). */
    const perLife: Acknowledged[] = [];
    const lifeOf = (gen: number) => (perLife[gen - 1] ??= { creates: 0, patches: 0, interactions: 0, total: 0 });
    let acked = () => {};
    setLive(first);
    const writer = async (w: number) => {
      const mine: string[] = [];
      const choose = seededRandom(seed + 7919 * (w + 1));
      let seq = 0;
      while (!done) {
        const l = live;
        if (!l) {
          await liveGate;
          continue;
        }
        seq++;
        const r = choose();
        const op = mine.length === 0 || r < 0.4 ? "create" : r < 0.75 ? "patch" : "interaction";
        const contactId = mine[Math.floor(choose() * mine.length)]!;
        let method = "POST";
        let path = "/contacts";
        let body: Record<string, unknown>;
        if (op === "create") {
          body = { firstName: "Crash", lastName: `w${w}c${seq}`, email: `w${w}c${seq}@crash.example.com` };
        } else if (op === "patch") {
          method = "PATCH";
          path = `/contacts/${contactId}`;
          body = { notes: `w${w}p${seq}` };
          // Patches of one contact come from this writer only, one at a time: their seqs increase.
          maxPatchSeqSent.set(contactId, seq);
        } else {
          path = `/contacts/${contactId}/interactions`;
          body = { type: "note", note: `w${w}i${seq}`, uniqueIdentifier: `w${w}i${seq}` };
        }
        let res;
        try {
          res = await request(l, method, path, body);
        } catch {
          // Cut by a kill: the next process comes up through the gate.
          unanswered++;
          continue;
        }
        if (res.status >= 200 && res.status < 300) {
          const life = lifeOf(l.gen);
          life.total++;
          if (op === "create") life.creates++;
          else if (op === "patch") life.patches++;
          else life.interactions++;
          acked();
          if (op === "create") {
            mine.push(res.json.contactId);
            creates.push({ gen: l.gen, contactId: res.json.contactId, email: body.email as string });
          } else if (op === "patch") {
            patches.push({ gen: l.gen, contactId, notes: body.notes as string, seq });
          } else {
            if (res.status !== 201) problem(`POST ${path} with a fresh uniqueIdentifier answered ${res.status}, expected 201`);
            interactions.push({ gen: l.gen, contactId, id: res.json.id });
          }
        } else if (res.status >= 500) {
          serverErrors++;
          problem(`${method} ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
        } else {
          otherStatuses[res.status] = (otherStatuses[res.status] ?? 0) + 1;
          problem(`${method} ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
        }
      }
    };
    const writers = Array.from({ length: writerCount }, (_, w) => writer(w));

    // ---- Verification of the writes earlier processes acknowledged ----
    const verifiedInteractions = new Set<string>();
    const verify = async (l: Live, all: boolean) => {
      const before = (a: Ack) => all || a.gen < l.gen;
      const listed = new Map<string, any>();
      for (const c of await walk(l, "/contacts")) listed.set(c.contactId, c);
      const contact = async (id: string) => {
        // A contact patched while the list was walked may move ahead of the cursor: read it alone.
        const fresh = await request(l, "GET", `/contacts/${id}`);
        if (fresh.status === 200) listed.set(id, fresh.json);
        return fresh.status === 200 ? fresh.json : null;
      };
      for (const c of creates.filter(before)) {
        const got = listed.get(c.contactId) ?? (await contact(c.contactId));
        if (!got) problem(`after start ${l.gen}: acknowledged create ${c.contactId} (start ${c.gen}) is missing`);
        else if (got.email !== c.email) problem(`after start ${l.gen}: ${c.contactId} has email ${got.email}, acknowledged ${c.email}`);
      }
      const lastAck = new Map<string, PatchAck>();
      for (const p of patches.filter(before)) if ((lastAck.get(p.contactId)?.seq ?? -1) < p.seq) lastAck.set(p.contactId, p);
      for (const p of lastAck.values()) {
        let got = listed.get(p.contactId);
        const seqOf = (c: any) => (typeof c?.notes === "string" ? Number(/p(\d+)$/.exec(c.notes)?.[1] ?? -1) : -1);
        if (!got || seqOf(got) < p.seq) got = await contact(p.contactId);
        const s = seqOf(got);
        if (s < p.seq || s > (maxPatchSeqSent.get(p.contactId) ?? -1))
          problem(`after start ${l.gen}: ${p.contactId} has notes ${JSON.stringify(got?.notes)}; acknowledged ${p.notes} (start ${p.gen}) or a later one expected`);
      }
      const pending = interactions.filter((i) => before(i) && !verifiedInteractions.has(i.id));
      for (const contactId of distinct(pending.map((i) => i.contactId))) {
        const ids = new Set((await walk(l, `/contacts/${contactId}/interactions`)).map((x: any) => x.id));
        for (const i of pending.filter((x) => x.contactId === contactId)) {
          if (!ids.has(i.id)) problem(`after start ${l.gen}: acknowledged interaction ${i.id} on ${contactId} (start ${i.gen}) is missing`);
          verifiedInteractions.add(i.id);
        }
      }
    };

    /** Resolves once process `gen` has acknowledged its target of writes, every kind among them. */
    const servedItsShare = (gen: number) => {
      const limit = opts.lifeTimeoutMs ?? 30_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          acked = () => {};
          problem(`start ${gen} acknowledged ${JSON.stringify(lifeOf(gen))} in ${limit} ms, short of its ${writeTargets[gen - 1]} writes with ${minEachKind} of each kind`);
          resolve();
        }, limit);
      });
      const served = new Promise<void>((resolve) => {
        const check = () => {
          const life = lifeOf(gen);
          const enough = life.total >= writeTargets[gen - 1]! && life.creates >= minEachKind && life.patches >= minEachKind && life.interactions >= minEachKind;
          if (enough) {
            acked = () => {};
            resolve();
          }
        };
        acked = check;
        check();
      });
      return Promise.race([served, timedOut]).finally(() => clearTimeout(timer));
    };

    // ---- The loop: serve a seeded number of writes, kill -9, restart, check ----
    let current: Live = first;
    for (let k = 1; k <= opts.kills; k++) {
      await servedItsShare(current.gen);
      await kill9(current);
      const ackedSoFar = creates.length + patches.length + interactions.length;
      current = await start();
      if (current.server.printedKey) problem(`start ${current.gen} printed a bootstrap key: the database was not reused`);
      // Checked before the writers reach the new process, so every process lives about as long.
      await verify(current, false);
      log(`kill ${k}/${opts.kills}: ${ackedSoFar} writes acknowledged so far; start ${current.gen} has them all: ${problems.length === 0}`);
      setLive(current);
    }
    const lastRestart = Date.now();
    await servedItsShare(current.gen);
    done = true;
    await Promise.all(writers);

    // ---- Final: every acknowledged write, every event, every delivery ----
    await verify(current, true);
    const events = await walk(current, "/events");
    const eventIds = new Set(events.map((e: any) => e.id));
    const created = new Set(events.filter((e: any) => e.event === "contact.created").map((e: any) => e.data.contact.contactId));
    const updatedNotes = new Set(events.filter((e: any) => e.event === "contact.updated").map((e: any) => e.data.contact.notes));
    const logged = new Set(events.filter((e: any) => e.event === "interaction_log.created").map((e: any) => e.data.interactionLog.id));
    for (const c of creates) if (!created.has(c.contactId)) problem(`no contact.created event for acknowledged ${c.contactId}`);
    for (const p of patches) if (!updatedNotes.has(p.notes)) problem(`no contact.updated event for acknowledged patch ${p.contactId} notes=${p.notes}`);
    for (const i of interactions) if (!logged.has(i.id)) problem(`no interaction_log.created event for acknowledged ${i.id}`);

    // Counted incrementally, as the receiver's requests come in.
    const delivered = new Set<string>();
    let seen = 0;
    let missing = eventIds.size;
    const allDelivered = () => {
      for (; seen < rx.requests.length; seen++) {
        const id = rx.requests[seen]!.json?.id as string;
        if (!delivered.has(id)) {
          delivered.add(id);
          if (eventIds.has(id)) missing--;
        }
      }
      return missing === 0;
    };
    await until(allDelivered, { timeoutMs: opts.deliveryTimeoutMs ?? 30_000, intervalMs: 100, what: "every event at the receiver" }).catch(() => {});
    const deliveryLagMs = Date.now() - lastRestart;
    const undelivered = [...eventIds].filter((id) => !delivered.has(id));
    if (undelivered.length > 0)
      problem(`${undelivered.length} of ${eventIds.size} events never reached the receiver within ${opts.deliveryTimeoutMs ?? 30_000} ms, e.g. ${undelivered.slice(0, 5).join(", ")}`);
    for (const id of delivered) if (!eventIds.has(id)) problem(`the receiver got event ${id}, which GET /events does not list`);

    const deliveryIds = new Map<string, Set<string>>(); // delivery id → event ids
    const perEvent = new Map<string, Set<string>>(); // event id → delivery ids
    for (const r of rx.requests) {
      const d = r.headers["x-service-delivery"] ?? "";
      const e = r.json?.id ?? "";
      if (!d) problem(`a delivery without X-Service-Delivery (event ${e})`);
      (deliveryIds.get(d) ?? deliveryIds.set(d, new Set()).get(d)!).add(e);
      (perEvent.get(e) ?? perEvent.set(e, new Set()).get(e)!).add(d);
    }
    for (const [d, es] of deliveryIds) if (es.size > 1) problem(`delivery id ${d} carried ${es.size} events`);
    for (const [e, ds] of perEvent) if (ds.size > 1) problem(`event ${e} came with ${ds.size} delivery ids; one per (event, subscription) expected`);

    const sub = await read(current, `/webhooks/${hookId}`);
    if (sub.status !== "active") problem(`the subscription ended ${sub.status}: ${sub.lastFailureReason}`);

    const eventsByType: Record<string, number> = {};
    for (const e of events) eventsByType[e.event] = (eventsByType[e.event] ?? 0) + 1;
    const figures: CrashLoopFigures = {
      seed,
      kills: opts.kills,
      starts,
      acknowledged: {
        creates: creates.length,
        patches: patches.length,
        interactions: interactions.length,
        total: creates.length + patches.length + interactions.length,
      },
      perLife: Array.from({ length: starts }, (_, i) => lifeOf(i + 1)),
      writeTargets,
      unanswered,
      serverErrors,
      otherStatuses,
      events: eventIds.size,
      eventsByType,
      receiverRequests: rx.requests.length,
      distinctDeliveryIds: deliveryIds.size,
      distinctEventIdsDelivered: delivered.size,
      duplicates: rx.requests.length - deliveryIds.size,
      deliveryLagMs,
      durationMs: Date.now() - started,
    };
    return { figures, problems };
  } finally {
    for (const s of servers) {
      s.proc.kill("SIGKILL");
      await s.exited;
    }
    await rx.stop();
    removeDir(dir);
  }
}

/** The stress step (stress/run.ts): 20 kills (or CRASH_LOOP_KILLS), figures printed; true when it passed. */
export async function crashLoopStress(kills = Number(process.env.CRASH_LOOP_KILLS ?? 20)): Promise<boolean> {
  const { figures, problems } = await runCrashLoop({
    kills,
    writers: 4,
    deliveryTimeoutMs: 120_000,
    log: (line) => console.log(line),
  });
  console.log(JSON.stringify(figures, null, 2));
  if (problems.length > 0) {
    console.error(`crash loop: ${problems.length} problem(s) (seed ${figures.seed}; rerun with CRASH_LOOP_SEED=${figures.seed})`);
    for (const p of problems) console.error(`  - ${p}`);
    return false;
  }
  console.log(
    `crash loop: passed (${figures.kills} kills, ${figures.acknowledged.total} acknowledged writes, ${figures.events} events, ` +
      `${figures.distinctDeliveryIds} distinct deliveries, ${figures.duplicates} duplicates)`,
  );
  return true;
}

if (import.meta.main) {
  const arg = process.argv[2];
  process.exit((await crashLoopStress(arg === undefined ? undefined : Number(arg))) ? 0 : 1);
}
