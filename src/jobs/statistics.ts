import type { BulkTable, BulkWrites } from "../storage/port.ts";
import type { Logger } from "../lib/log.ts";

/** A check runs this long after the last bulk write it was told of (the load has likely ended)… */
const QUIET_MS = 500;
/** …and no later than this after the first, so a load that goes on for minutes is analyzed while it runs. */
const MAX_WAIT_MS = 3_000;

/**
 * Planner statistics right after bulk loads (docs/performance.md, "Plans right after a bulk
 * load"). Measured before: right after a load of 50,000 contacts through the API, a search
 * took ~560 ms for up to ten minutes, planned on statistics taken while the table held one
 * row, until the 10-minute job refreshed them.
 *
 * `noteRowsWritten` (the batch routes, imports) only schedules a check, debounced: QUIET_MS
 * after the last note, at most MAX_WAIT_MS after the first, outside any request and any
 * transaction. `check` (also every 5 s, src/jobs/index.ts, for writers that say nothing:
 * single creates, `crm import` in its own process, another node) runs
 * `Storage.refreshGrownStatistics`, which analyzes only the tables that doubled since
 * their statistics, and is a few cheap reads otherwise. One check at a time; a note
 * arriving while one runs gets a check after it.
 */
export class StatisticsWatch implements BulkWrites {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private firstNoteAt = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** Rows reported since the last check, and the checks that analyzed something (tests, logs). */
  readonly stats = { pendingRows: 0, refreshes: 0 };

  constructor(
    private readonly refresh: () => Promise<string[]>,
    private readonly log: Logger,
  ) {}

  noteRowsWritten(table: BulkTable, rows: number): void {
    if (this.stopped || !(rows > 0)) return;
    void table; // every watched table is checked: one check covers them all
    this.stats.pendingRows += rows;
    const now = performance.now();
    if (this.timer === null) this.firstNoteAt = now;
    else clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(QUIET_MS, this.firstNoteAt + MAX_WAIT_MS - now));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.check();
    }, wait);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Runs one pass now (or right after the one running); failures are logged, never thrown. */
  async check(): Promise<void> {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.pass();
    try {
      await this.running;
    } finally {
      this.running = null;
    }
    if (this.again && !this.stopped) {
      this.again = false;
      await this.check();
    }
  }

  private async pass(): Promise<void> {
    const rows = this.stats.pendingRows;
    this.stats.pendingRows = 0;
    const started = performance.now();
    try {
      const tables = await this.refresh();
      if (tables.length === 0) return;
      this.stats.refreshes += 1;
      this.log.info("planner statistics refreshed after growth", { tables: tables.join(","), rowsReported: rows, ms: Math.round(performance.now() - started) });
    } catch (error) {
      this.log.warn("planner statistics refresh failed", { error: String((error as Error)?.message ?? error) });
    }
  }

  /** No more checks; waits for the one running. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
