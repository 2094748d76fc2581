import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import type { Logger } from "../lib/log.ts";
import { isoNow } from "../lib/time.ts";
import { checkUrl } from "./address-policy.ts";
import * as store from "./deliveries.ts";
import { nextAttemptDelay } from "./retry.ts";
import { postPinned, type SendResult } from "./sender.ts";
import { signingSecrets, type WebhookEnv } from "./service.ts";
import { signatureHeaders } from "./signature.ts";

const PER_SUBSCRIPTION = 4;
const IN_TOTAL = 64;
const DRAIN_MS = 10_000;

export interface DispatcherOptions {
  db: Kysely<Database>;
  webhooks: WebhookEnv;
  schedule: number[];
  pollMs: number;
  log: Logger;
  onOutcome?: (outcome: "succeeded" | "failed" | "exhausted") => void;
}

/**
 * Delivers the outbox (decisions §7) in small stages: claim → prepare (check the URL,
 * sign) → send → record. A claim is in memory only; until its attempt is recorded the row
 * stays pending, so a killed process loses no delivery (decisions §12). Woken when a transaction commits events, polling as a fallback.
 * At most 4 in flight per subscription and 64 in all, so a slow subscriber holds back
 * only its own deliveries.
 */
export class Dispatcher {
  private readonly perSubscription = new Map<string, number>();
  /** Deliveries being sent or recorded: claims live in memory, the row stays pending until recorded. */
  private readonly claimed = new Set<string>();
  private inFlight = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  private poller: ReturnType<typeof setInterval> | null = null;
  private dueTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly idle = new Set<() => void>();
  private outcomes: store.Outcome[] = [];
  private flushing: Promise<void> | null = null;
  lastTickAt = 0;

  constructor(private readonly o: DispatcherOptions) {}

  /**
   * Starts polling. Deliveries a killed process was sending are still pending and already
   * due, so the first tick sends them again (decisions §12: delayed, never dropped).
   */
  async start(): Promise<void> {
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
    this.running = this.tick()
      .catch((error) => this.o.log.error("dispatcher tick failed", { error: String(error) }))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Alive = ticked recently (for /readyz). */
  alive(): boolean {
    return !this.stopping && Date.now() - this.lastTickAt < Math.max(5_000, this.o.pollMs * 5);
  }

  /** Stops claiming; waits up to 10 s for attempts in flight. Unfinished claims are released on the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.poller) clearInterval(this.poller);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    await this.running;
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DRAIN_MS);
      this.idle.add(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async tick(): Promise<void> {
    this.lastTickAt = Date.now();
    const room = IN_TOTAL - this.inFlight;
    if (room <= 0) return;
    const now = isoNow();
    const busy = [...this.perSubscription].filter(([, n]) => n >= PER_SUBSCRIPTION).map(([id]) => id);
    const due = await store.dueDeliveries(this.o.db, now, room, busy, [...this.claimed]);
    const picked: store.DueDelivery[] = [];
    for (const d of due) {
      if (picked.length >= room) break;
      const busy = this.perSubscription.get(d.webhook_id) ?? 0;
      if (busy >= PER_SUBSCRIPTION) continue;
      this.perSubscription.set(d.webhook_id, busy + 1);
      picked.push(d);
    }
    for (const d of picked) this.claimed.add(d.id);
    this.inFlight += picked.length;
    for (const d of picked) void this.deliver(d);
    if (picked.length === 0) await this.armDueTimer();
  }

  /** Sleeps until the next delivery is due when that is sooner than the next poll. */
  private async armDueTimer(): Promise<void> {
    const at = await store.nextDueAt(this.o.db, [...this.claimed]);
    if (!at || this.stopping) return;
    const wait = Date.parse(at) - Date.now();
    // Already due but not picked: its subscription is at its cap; a completion wakes us.
    if (wait <= 0 || wait >= this.o.pollMs) return;
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimer = setTimeout(() => this.wake(), Math.max(0, wait) + 1);
  }

  private async deliver(d: store.DueDelivery): Promise<void> {
    try {
      const result = await this.send(d);
      await this.record(d, result);
    } catch (error) {
      this.o.log.error("delivery failed unexpectedly", { deliveryId: d.id, error: String(error) });
    } finally {
      this.inFlight -= 1;
      this.claimed.delete(d.id);
      const left = (this.perSubscription.get(d.webhook_id) ?? 1) - 1;
      if (left <= 0) this.perSubscription.delete(d.webhook_id);
      else this.perSubscription.set(d.webhook_id, left);
      if (this.inFlight === 0) for (const notify of this.idle) notify();
      this.wake();
    }
  }

  private async send(d: store.DueDelivery): Promise<SendResult> {
    const verdict = await checkUrl(d.url, this.o.webhooks.env, this.o.webhooks.resolve, true);
    if (!verdict.ok) return { statusCode: null, durationMs: 0, error: verdict.reason, snippet: null, retryAfterMs: null };
    const headers = {
      "X-Service-Event": d.type,
      ...signatureHeaders(signingSecrets(d, this.o.webhooks.secrets), d.id, Math.floor(Date.now() / 1000), d.body),
    };
    return postPinned(verdict.url, verdict.addresses[0]!, headers, d.body, this.o.webhooks.timeoutMs);
  }

  /**
   * Outcomes finishing close together are written in one transaction: one commit per
   * batch instead of per attempt. A delivery counts as in flight until its outcome is
   * written, so shutdown never drops a finished attempt's record.
   */
  private enqueueOutcome(outcome: store.Outcome): Promise<void> {
    this.outcomes.push(outcome);
    this.flushing ??= new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
      const batch = this.outcomes;
      this.outcomes = [];
      this.flushing = null;
      return store.recordOutcomes(this.o.db, batch);
    });
    return this.flushing;
  }

  private async record(d: store.DueDelivery, r: SendResult): Promise<void> {
    const attempt = d.attempts + 1;
    const succeeded = r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;
    const at = isoNow();
    let retryAt: string | null = null;
    let disable: store.Outcome["disable"] = null;
    if (!succeeded) {
      const error = r.error ?? `HTTP ${r.statusCode}`;
      if (r.statusCode === 410) {
        disable = { reason: "the endpoint answered 410 Gone", unlessSucceededSince: false };
      } else {
        const delay = nextAttemptDelay(this.o.schedule, attempt, r.statusCode === 429 ? r.retryAfterMs : null);
        if (delay === null) disable = { reason: `delivery ${d.id} failed ${attempt} attempts; last: ${error}`, unlessSucceededSince: true };
        else retryAt = new Date(Date.now() + delay).toISOString();
      }
    }
    await this.enqueueOutcome({
      delivery: d,
      attempt,
      at,
      statusCode: r.statusCode,
      durationMs: r.durationMs,
      error: succeeded ? null : r.error ?? `HTTP ${r.statusCode}`,
      snippet: r.snippet,
      succeeded,
      retryAt,
      disable,
    });
    this.o.onOutcome?.(succeeded ? "succeeded" : retryAt ? "failed" : "exhausted");
  }
}
