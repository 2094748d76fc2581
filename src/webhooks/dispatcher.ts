import type { Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { isoNow } from "../lib/time.ts";
import { attemptDelivery, type WebhookEnv } from "./attempt.ts";
import { inProcessClaims } from "../storage/claims.ts";
import type { ClaimBook, Claims } from "../storage/port.ts";
import type { Db } from "../storage/schema.ts";
import * as store from "./deliveries.ts";
import { FairShare } from "./fair-share.ts";
import { OutcomeRecorder, type DeliveryOutcome } from "./recorder.ts";
import type { SendResult } from "./sender.ts";

const DRAIN_MS = 10_000;
/** A delivery whose outcome could not be written is held (kept claimed) this long, by the service's clock, before it is tried again. */
const RECORD_BACKOFF_MS = 5_000;
/** A tick running longer than this means the dispatcher is stuck (/readyz). */
const STUCK_MS = 60_000;
/** Deliveries a slot sends in a row for its subscription before the fair-share round hands it out again. */
const SLOT_RUN = 32;
/** Least time between a tick and the next one it asked for (see wakeSoon). */
const TICK_GAP_MS = 1;

/**
 * Of some deliveries, those being sent now (docs/webhooks.md §5: redeliver skips only a
 * delivery still waiting for its first attempt): claimed by this process, or leased in
 * the database by any node.
 */
export type InFlight = (db: Db, ids: string[], now: string) => Promise<Set<string>>;

/** The running dispatcher of each service, by the WebhookEnv it shares with the service's routes. */
const running = new WeakMap<WebhookEnv, Dispatcher>();

/**
 * What the service's dispatcher is sending (see `InFlight`), found from the WebhookEnv the
 * routes and the dispatcher share (src/server.ts); with no dispatcher (a harness without
 * one), nothing is.
 */
export const inFlightOf =
  (webhooks: WebhookEnv): InFlight =>
  (db, ids, now) =>
    running.get(webhooks)?.inFlight(db, ids, now) ?? Promise.resolve(new Set());

const contactKey = (webhookId: string, contactId: number) => `${webhookId}\n${contactId}`;

export interface DispatcherOptions {
  /** The database the claims are taken in. */
  db: Kysely<Database>;
  /** Where outcomes are written: the service's unit of work; `db`'s own transactions by default. */
  writes?: UnitOfWork;
  /** Where due deliveries are looked up: a read-only connection that never waits for writes (src/storage/sqlite/reader.ts); `db` by default. */
  reader?: Kysely<Database>;
  /**
   * How due deliveries are claimed (src/storage/port.ts, `Claims`): the storage's, which
   * also holds each on a lease in the database where several nodes share it; in this
   * process's memory, looked up on `reader`, by default.
   */
  claims?: Claims;
  webhooks: WebhookEnv;
  schedule: number[];
  pollMs: number;
  log: Logger;
  onOutcome?: (outcome: DeliveryOutcome) => void;
  share?: FairShare;
}

/**
 * Delivers the outbox (docs/webhooks.md §4) in small stages: claim → attempt (check, sign, send:
 * attempt.ts) → record (recorder.ts, by the rules of outcome.ts). On SQLite a claim is in
 * memory only; on PostgreSQL, where several nodes share the outbox, it is also a lease in
 * the database (src/storage/postgres/claims.ts, docs/scaling.md §6).
 * Until its attempt is recorded the row stays pending, so a killed process loses no
 * delivery (docs/webhooks.md §2.2; on PostgreSQL it is due again when the lease ends). Woken when a
 * transaction commits events, polling as a fallback. Slots are shared fairly between
 * projects and subscriptions (fair-share.ts), so a slow subscriber holds back only its own
 * deliveries (docs/webhooks.md §4.4). A subscription ordered per contact gets one delivery
 * per contact at a time (the claims check it; the book counts claims by contact:
 * docs/webhooks.md §8.2). Every time it reads (what is due, when a retry is due, a
 * held claim's end, a stuck tick) comes from the service's clock, `webhooks.clock` (issue 11).
 */
export class Dispatcher {
  private readonly share: FairShare;
  /** Deliveries being sent or recorded, and those waiting out a failed record. */
  private readonly claimed = new Set<string>();
  /** Claims held after their outcome could not be written, until this time (clock ms); then released. */
  private readonly held = new Map<string, { delivery: store.DueDelivery; until: number }>();
  /** How many of the claims belong to each subscription. */
  private readonly claimedBy = new Map<string, number>();
  /** How many of the claims are about each (subscription, contact) (docs/webhooks.md §8.2). */
  private readonly claimedContacts = new Map<string, number>();
  /** Attempts sent whose outcome is not written yet. */
  private recording = 0;
  private readonly reader: Kysely<Database>;
  private running: Promise<void> | null = null;
  private tickStartedAt = 0;
  private again = false;
  private stopping = false;
  private poller: ReturnType<typeof setInterval> | null = null;
  private dueTimer: ReturnType<typeof setTimeout> | null = null;
  private soonTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly idle = new Set<() => void>();
  /** The record stage: the outcome rules (outcome.ts), the batched writes, the log lines. */
  private readonly recorder: OutcomeRecorder;

  private readonly clock: Clock;
  /** How claims are taken: in memory, or leased in the database too (src/storage/port.ts). */
  private readonly claims: Claims;
  /** The claimed set as the claims read and write it. */
  private readonly book: ClaimBook = {
    has: (id) => this.claimed.has(id),
    countOf: (webhookId) => this.claimedBy.get(webhookId) ?? 0,
    ids: () => [...this.claimed],
    add: (d) => {
      this.claimed.add(d.id);
      this.claimedBy.set(d.webhook_id, (this.claimedBy.get(d.webhook_id) ?? 0) + 1);
      if (d.contact_id !== null) {
        const key = contactKey(d.webhook_id, d.contact_id);
        this.claimedContacts.set(key, (this.claimedContacts.get(key) ?? 0) + 1);
      }
    },
    holdsContact: (webhookId, contactId) => this.claimedContacts.has(contactKey(webhookId, contactId)),
  };

  constructor(private readonly o: DispatcherOptions) {
    this.share = o.share ?? new FairShare();
    this.clock = o.webhooks.clock;
    this.reader = o.reader ?? o.db;
    this.claims = o.claims ?? inProcessClaims(this.reader);
    this.recorder = new OutcomeRecorder({ writes: o.writes ?? o.db, schedule: o.schedule, clock: this.clock, log: o.log, onOutcome: o.onOutcome });
  }

  /**
   * Starts polling. Deliveries a killed process was sending are still pending and already
   * due, so the first tick sends them again (docs/webhooks.md §2.2: delayed, never dropped).
   */
  start(): void {
    running.set(this.o.webhooks, this);
    this.poller = setInterval(() => this.wake(), this.o.pollMs);
    this.wake();
  }

  /** Looks for due deliveries now (cheap when there are none). */
  wake(): void {
    if (this.stopping) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.tickStartedAt = this.clock.now();
    this.running = this.tick()
      .catch((error) => this.o.log.error("dispatcher tick failed", { error: String(error) }))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wakeSoon();
        }
      });
  }

  /**
   * A wake that came during a tick: the next tick runs a moment later. Commits and
   * completions wake the dispatcher thousands of times a second under load; run back to
   * back, their ticks would spin on the database while every slot is taken.
   */
  private wakeSoon(): void {
    if (this.soonTimer || this.stopping) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = null;
      this.wake();
    }, TICK_GAP_MS);
  }

  /**
   * Alive (for /readyz): polling, and no tick stuck. Busy is not dead: under load a tick
   * may wait its turn on the database, so only a tick running a minute counts.
   */
  alive(): boolean {
    return !this.stopping && this.poller !== null && (this.running === null || this.clock.now() - this.tickStartedAt < STUCK_MS);
  }

  /** Stops claiming; waits up to 10 s for attempts in flight. Unfinished claims are released on the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (running.get(this.o.webhooks) === this) running.delete(this.o.webhooks);
    if (this.poller) clearInterval(this.poller);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    if (this.soonTimer) clearTimeout(this.soonTimer);
    await this.running;
    if (this.busy() === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DRAIN_MS);
      this.idle.add(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async tick(): Promise<void> {
    this.releaseExpiredHolds();
    if (this.share.room() <= 0) return;
    const now = isoNow(this.clock);
    const candidates = await store.dueSubscriptions(this.reader, now);
    for (const [webhookId, slots] of this.share.allocate(candidates)) {
      if (this.stopping) return;
      for (const d of await this.claimDue(webhookId, now, slots)) {
        this.share.take(d.webhook_id, d.project_id);
        void this.runSlot(d).catch((error) => this.o.log.error("webhook slot failed", { webhookId, error: String(error) }));
      }
    }
    // Nothing due at all: sleep until the next retry if it comes before the next poll. (Due
    // but not started means in flight or at a cap: a completion wakes us.)
    if (candidates.length === 0) await this.armDueTimer();
  }

  /** Sleeps until the next delivery is due when that is sooner than the next poll. */
  private async armDueTimer(): Promise<void> {
    const at = await store.nextDueAt(this.reader);
    if (!at || this.stopping) return;
    const wait = Date.parse(at) - this.clock.now();
    // Already due but not started: in flight, or its subscription at its cap; a completion wakes us.
    if (wait <= 0 || wait >= this.o.pollMs) return;
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimer = setTimeout(() => this.wake(), wait + 1);
  }

  /** Claims up to `n` due deliveries of a subscription, oldest due first, skipping those already claimed. */
  private claimDue(webhookId: string, now: string, n: number): Promise<store.DueDelivery[]> {
    return this.claims.claim(this.book, { webhookId, now, n, perSubscription: this.share.caps.perSubscription });
  }

  /** Held claims whose time is up go back to the pool: the next claim may pick them again. */
  private releaseExpiredHolds(): void {
    if (this.held.size === 0) return;
    const now = this.clock.now();
    for (const [id, { delivery, until }] of this.held) {
      if (until > now) continue;
      this.held.delete(id);
      this.unclaim(delivery);
    }
  }

  private unclaim(d: store.DueDelivery): void {
    this.claimed.delete(d.id);
    countDown(this.claimedBy, d.webhook_id);
    if (d.contact_id !== null) countDown(this.claimedContacts, contactKey(d.webhook_id, d.contact_id));
  }

  /** Of `ids`, those claimed by this process or leased in the database by any node (see `InFlight`). */
  async inFlight(db: Db, ids: string[], now: string): Promise<Set<string>> {
    const busy = new Set(ids.filter((id) => this.claimed.has(id)));
    for (const id of await this.claims.leased(db, ids, now)) busy.add(id);
    return busy;
  }

  /** Sends in flight and outcomes being written: shutdown waits for both. */
  private busy(): number {
    return this.share.total + this.recording;
  }

  /**
   * One slot of a subscription's 4 (the cap is on requests to its receiver): sends, then
   * goes straight on with the subscription's next due delivery, up to SLOT_RUN in a row,
   * before handing the slot back to the fair-share round (so a busy subscription runs at
   * loopback speed, and still yields its slot to others in turn). Outcomes are written
   * behind it in batches; a claim lasts until its outcome is written, so the row is never
   * picked again meanwhile, and a failed write keeps it back a while instead of resending.
   */
  private async runSlot(first: store.DueDelivery): Promise<void> {
    let d: store.DueDelivery | undefined = first;
    try {
      for (let run = 1; d; run++) {
        const sent: store.DueDelivery = d;
        const result = await attemptDelivery({ ...sent, deliveryId: sent.id }, this.o.webhooks);
        void this.recordAndRelease(sent, result).catch((error) => this.o.log.error("webhook outcome failed", { deliveryId: sent.id, error: String(error) }));
        d = run < SLOT_RUN && !this.stopping ? (await this.claimDue(sent.webhook_id, isoNow(this.clock), 1))[0] : undefined;
      }
    } finally {
      this.share.release(first.webhook_id, first.project_id);
      this.wake();
    }
  }

  private async recordAndRelease(d: store.DueDelivery, result: SendResult): Promise<void> {
    this.recording += 1;
    let release = true;
    try {
      release = await this.recorder.record(d, result);
    } finally {
      this.recording -= 1;
      if (release) this.unclaim(d);
      else this.held.set(d.id, { delivery: d, until: this.clock.now() + RECORD_BACKOFF_MS });
      if (this.busy() === 0) for (const notify of this.idle) notify();
      this.wake();
    }
  }
}

function countDown(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}
