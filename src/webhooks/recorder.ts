import type { Kysely } from "kysely";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import * as store from "./deliveries.ts";
import { attemptOutcome, type NextState } from "./outcome.ts";
import type { SendResult } from "./sender.ts";

export type DeliveryOutcome = "succeeded" | "failed" | "exhausted";

export interface RecorderOptions {
  /** Where outcomes are written: the service's unit of work (a bare database's own transactions in tests). */
  writes: UnitOfWork | Kysely<Database>;
  schedule: number[];
  clock: Clock;
  log: Logger;
  onOutcome?: (outcome: DeliveryOutcome) => void;
}

/**
 * The dispatcher's record stage (docs/webhooks.md §2): the attempt's result goes through the
 * rules (outcome.ts), then is written with its consequences (deliveries.ts) and logged.
 */
export class OutcomeRecorder {
  private outcomes: store.Outcome[] = [];
  private flushing: Promise<store.Recorded> | null = null;

  constructor(private readonly o: RecorderOptions) {}

  /** Records the attempt; false when it could not be written (the delivery then waits before its next try). */
  async record(d: store.DueDelivery, r: SendResult): Promise<boolean> {
    const attempt = d.attempts + 1;
    const now = this.o.clock.now();
    const next = attemptOutcome({ result: r, attempt, now, deliveryId: d.id, schedule: this.o.schedule });
    const at = new Date(now).toISOString();
    const outcome = { delivery: d, attempt, at, statusCode: r.statusCode, durationMs: r.durationMs, snippet: r.snippet, succeeded: next.state === "delivered", error: next.error, retryAt: next.retryAt, disable: next.disable };
    let recorded: store.Recorded;
    try {
      recorded = await this.enqueue(outcome);
    } catch (failure) {
      recorded = { failed: new Map([[d.id, failure]]), disabled: new Set() };
    }
    if (recorded.failed.has(d.id)) {
      this.o.log.error("webhook attempt not recorded; retrying later", { deliveryId: d.id, webhookId: d.webhook_id, error: String(recorded.failed.get(d.id)) });
      return false;
    }
    this.report(outcome, next.state, recorded.disabled.has(d.webhook_id));
    return true;
  }

  /**
   * Outcomes finishing close together are written in one transaction: one commit per
   * batch instead of per attempt. A delivery counts as in flight until its outcome is
   * written, so shutdown never drops a finished attempt's record.
   */
  private enqueue(outcome: store.Outcome): Promise<store.Recorded> {
    this.outcomes.push(outcome);
    this.flushing ??= new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
      const batch = this.outcomes;
      this.outcomes = [];
      this.flushing = null;
      return store.recordOutcomes(this.o.writes, batch);
    });
    return this.flushing;
  }

  /** Log lines (docs/webhooks.md §7): debug per attempt, warn per failure, error on exhaustion and on disabling. */
  private report(o: store.Outcome, state: NextState["state"], disabled: boolean): void {
    const d = o.delivery;
    const ids = { deliveryId: d.id, eventId: d.event_id, webhookId: d.webhook_id, projectId: d.project_id, attempt: o.attempt };
    const kind: DeliveryOutcome = state === "delivered" ? "succeeded" : state === "retry" ? "failed" : "exhausted";
    this.o.onOutcome?.(kind);
    this.o.log.debug("webhook attempt", { ...ids, statusCode: o.statusCode, durationMs: o.durationMs, error: o.error });
    if (state === "retry") this.o.log.warn("webhook attempt failed", { ...ids, statusCode: o.statusCode, error: o.error, nextAttemptAt: o.retryAt });
    if (state === "exhausted") this.o.log.error("webhook delivery exhausted", { ...ids, statusCode: o.statusCode, error: o.error });
    // The delivery that disabled it, and why (docs/api.md §16): ids and a reason, never the secret or the body.
    if (disabled) this.o.log.error("webhook subscription disabled", { webhookId: d.webhook_id, projectId: d.project_id, deliveryId: d.id, eventId: d.event_id, reason: o.disable?.reason });
  }
}
