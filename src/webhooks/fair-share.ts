import type { DueSubscription } from "./deliveries.ts";

export interface Caps {
  /** Deliveries in flight per subscription (docs/webhooks.md §4: 4). */
  perSubscription: number;
  /**
   * Deliveries in flight per project: half the total, so one project whose receivers all
   * hang up to their timeout leaves the other half to everyone else (docs/webhooks.md §4.4).
   */
  perProject: number;
  /** Deliveries in flight in all (docs/webhooks.md §4: 64). */
  total: number;
}

export const DEFAULT_CAPS: Caps = { perSubscription: 4, perProject: 32, total: 64 };

/**
 * Who may send next (docs/webhooks.md §4.4: no project or subscription starves another). Slots go
 * round robin: projects in turn, least loaded and longest unserved first, and within a
 * project its subscriptions the same way, one slot per turn, within the caps. So a
 * project's backlog of a million due deliveries gets the same turn as another project's
 * one fresh event, and slow receivers hold at most their caps.
 */
export class FairShare {
  private readonly perSubscription = new Map<string, number>();
  private readonly perProject = new Map<string, number>();
  private readonly servedAt = new Map<string, number>();
  private turn = 0;
  total = 0;

  constructor(readonly caps: Caps = DEFAULT_CAPS) {}

  room(): number {
    return this.caps.total - this.total;
  }

  /** Slots per subscription for this round, in the order they should be used. */
  allocate(candidates: DueSubscription[]): Map<string, number> {
    const projects = new Map<string, string[]>();
    for (const c of candidates) {
      if ((this.perSubscription.get(c.webhookId) ?? 0) >= this.caps.perSubscription) continue;
      const list = projects.get(c.projectId) ?? [];
      list.push(c.webhookId);
      projects.set(c.projectId, list);
    }
    const order = (ids: string[], load: Map<string, number>) =>
      ids.sort((a, b) => (load.get(a) ?? 0) - (load.get(b) ?? 0) || (this.servedAt.get(a) ?? 0) - (this.servedAt.get(b) ?? 0));
    const queue = order([...projects.keys()], this.perProject).map((projectId) => ({
      projectId,
      subscriptions: order(projects.get(projectId)!, this.perSubscription),
      next: 0,
      granted: 0,
    }));
    const slots = new Map<string, number>();
    let room = this.room();
    while (room > 0 && queue.length > 0) {
      for (let i = 0; i < queue.length && room > 0; ) {
        const p = queue[i]!;
        const projectLoad = (this.perProject.get(p.projectId) ?? 0) + p.granted;
        const webhookId = p.subscriptions[p.next % p.subscriptions.length];
        if (projectLoad >= this.caps.perProject || p.subscriptions.length === 0 || webhookId === undefined) {
          queue.splice(i, 1);
          continue;
        }
        const given = slots.get(webhookId) ?? 0;
        if ((this.perSubscription.get(webhookId) ?? 0) + given >= this.caps.perSubscription) {
          p.subscriptions.splice(p.next % p.subscriptions.length, 1);
          continue;
        }
        slots.set(webhookId, given + 1);
        p.granted += 1;
        p.next += 1;
        room -= 1;
        i += 1;
      }
    }
    return slots;
  }

  /** A delivery of `webhookId` (of `projectId`) starts. */
  take(webhookId: string, projectId: string): void {
    this.total += 1;
    this.perSubscription.set(webhookId, (this.perSubscription.get(webhookId) ?? 0) + 1);
    this.perProject.set(projectId, (this.perProject.get(projectId) ?? 0) + 1);
    this.turn += 1;
    this.servedAt.set(webhookId, this.turn);
    this.servedAt.set(projectId, this.turn);
    // Bounded memory: forget who was served when the map outgrows any real deployment.
    if (this.servedAt.size > 100_000) this.servedAt.clear();
  }

  /** A delivery of `webhookId` (of `projectId`) is finished. */
  release(webhookId: string, projectId: string): void {
    this.total -= 1;
    decrement(this.perSubscription, webhookId);
    decrement(this.perProject, projectId);
  }
}

function decrement(map: Map<string, number>, key: string): void {
  const left = (map.get(key) ?? 1) - 1;
  if (left <= 0) map.delete(key);
  else map.set(key, left);
}
