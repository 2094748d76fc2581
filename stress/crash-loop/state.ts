/**
 * The state of one crash loop (stress/crash-loop.ts): the process writers may reach now (and
 * the gate they wait at while there is none), every write acknowledged so far by kind and by
 * process, what went unanswered or wrong, and the requests the writers and checks send.
 */
import type { Server } from "../../bench/harness/process.ts";

export interface Live {
  gen: number;
  server: Server;
}

export interface Acknowledged {
  creates: number;
  patches: number;
  interactions: number;
  total: number;
}

interface Ack {
  gen: number;
}
export interface CreateAck extends Ack {
  contactId: string;
  email: string;
}
export interface PatchAck extends Ack {
  contactId: string;
  notes: string;
  seq: number;
}
export interface InteractionAck extends Ack {
  contactId: string;
  id: string;
}

export class CrashRun {
  /** Every broken promise found (at most 200). */
  readonly problems: string[] = [];
  readonly creates: CreateAck[] = [];
  readonly patches: PatchAck[] = [];
  readonly interactions: InteractionAck[] = [];
  /** Per contact: the highest patch seq ever sent (acknowledged or not). */
  readonly maxPatchSeqSent = new Map<string, number>();
  /** Acknowledged writes per process (index: gen - 1). */
  readonly perLife: Acknowledged[] = [];
  unanswered = 0;
  serverErrors = 0;
  readonly otherStatuses: Record<string, number> = {};
  key = "";
  /** Set once the writers are to stop. */
  done = false;
  /** Called after each acknowledged write (the check of the process's share). */
  acked = () => {};
  live: Live | null = null;
  /** Resolves when writers may reach a process again (set with `live`). */
  liveGate: Promise<void> = new Promise(() => {});
  private openGate = () => {};

  constructor() {
    this.setLive(null);
  }

  problem(p: string) {
    if (this.problems.length < 200) this.problems.push(p);
  }

  setLive(l: Live | null) {
    this.live = l;
    if (l) this.openGate();
    else this.liveGate = new Promise<void>((r) => (this.openGate = r));
  }

  lifeOf(gen: number): Acknowledged {
    return (this.perLife[gen - 1] ??= { creates: 0, patches: 0, interactions: 0, total: 0 });
  }

  acknowledged(): number {
    return this.creates.length + this.patches.length + this.interactions.length;
  }

  /** One API request with the run's key; the body parsed when it is JSON. */
  async request(l: Live, method: string, path: string, body?: unknown) {
    const res = await fetch(`${l.server.url}/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
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
  }

  /** A read on the current process; reads are never cut by a kill (no kill runs meanwhile). */
  async read(l: Live, path: string) {
    const res = await this.request(l, "GET", path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.json;
  }

  /** Every item of a list, page by page. */
  async walk(l: Live, path: string) {
    const items: any[] = [];
    let cursor: string | null = null;
    for (;;) {
      const sep = path.includes("?") ? "&" : "?";
      const page: any = await this.read(l, `${path}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      items.push(...page.data);
      if (!page.pagination.hasMore) return items;
      cursor = page.pagination.nextCursor;
    }
  }
}
