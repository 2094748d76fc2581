/**
 * Following the change feed (docs/api.md §19.2): `followChanges` reads `GET /changes` page
 * after page from a stored cursor and yields each change record with the cursor to store
 * once that change is applied. It keeps polling when caught up (or stops, if asked), waits
 * out a 429's `Retry-After` however long it is, and ends quietly when its signal aborts.
 *
 * The service gives a cursor per page (`nextCursor`), not per record, and a client cannot
 * make one. So a change in the middle of a page carries the cursor the page was read from:
 * resuming there gives this change and the page's earlier ones again, which a copy applies
 * idempotently (by `seq`, or by the contact's `version`); the page's last change carries
 * `nextCursor`. Resuming from any yielded cursor never skips a change.
 */
import type { Client } from "openapi-fetch";
import { CrmApiError } from "./errors.js";
import { retryAfterMs } from "./retry.js";
import type { components } from "./schema.js";

/** A change record (docs/api.md §19.1). */
export type ChangeRecord = components["schemas"]["ChangeRecord"];
/** What a record is about: `contact` or `interaction_log`. */
export type ChangeObject = ChangeRecord["object"];

export interface FollowChangesOptions {
  /**
   * Where to start: a cursor stored from an earlier run (a yielded `cursor`, or the feed's
   * `cursor`), or the `Changes-Cursor` header of `GET /contacts` for a new copy. Absent: from
   * the oldest change the service keeps (90 days).
   */
  after?: string;
  /** Records per request, 1 to 1,000 (default: the service's, 100). */
  limit?: number;
  /** Only these objects' records (default: both). */
  object?: ChangeObject | readonly ChangeObject[];
  /** Wait between polls once caught up, in milliseconds (default 5,000). */
  pollIntervalMs?: number;
  /** Aborting it ends the iteration, without an error: a wait at once, a request in flight as fetch ends it. */
  signal?: AbortSignal;
  /** `"when-caught-up"`: end once a page says nothing more is there now. `"never"` (default): keep polling. */
  stop?: "when-caught-up" | "never";
}

/** One change and where to resume once it is applied (`Cursor` is `string` when the feed was started with `after`). */
export interface FollowedChange<Cursor extends string | undefined = string | undefined> {
  change: ChangeRecord;
  /**
   * Store this once `change` is applied: `followChanges({ after: cursor })` gives every
   * later change (and possibly this one and the earlier ones of its page again). `undefined`
   * only on the first page of a feed started without `after`: resume without `after` then.
   */
  cursor: Cursor;
}

/** An AsyncIterable of changes that also tells where it stands. */
export interface ChangeFeed<Cursor extends string | undefined = string | undefined> extends AsyncIterable<FollowedChange<Cursor>> {
  /**
   * Where to resume now: the cursor of the last change yielded, or of the last page read
   * (an empty poll moves it too). Read it after the loop ends (`stop`, `break`, abort) to
   * store it. Iterating the feed again resumes from it.
   */
  readonly cursor: Cursor;
}

/** `crm.followChanges`: started from a cursor, every cursor it gives is a string. */
export interface FollowChanges {
  (options: FollowChangesOptions & { after: string }): ChangeFeed<string>;
  (options?: FollowChangesOptions): ChangeFeed;
}

export const DEFAULT_POLL_INTERVAL_MS = 5_000;

interface FeedPage {
  data: ChangeRecord[];
  pagination: { nextCursor: string; hasMore: boolean };
}

type Get = (path: string, init: object) => Promise<{ data?: FeedPage; error?: unknown; response: Response }>;

/** Waits `ms`; false when `signal` aborted (before or during the wait). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Builds `followChanges` over an openapi-fetch client (see the file's comment). */
export function changeFollower<Paths extends {}>(client: Client<Paths>): FollowChanges {
  const get = client.GET as unknown as Get;

  function followChanges(options: FollowChangesOptions = {}): ChangeFeed {
    const { limit, object, signal, stop = "never" } = options;
    const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    if (!(pollIntervalMs >= 0)) throw new RangeError("pollIntervalMs must be 0 or more");
    let position = options.after;

    async function* follow(): AsyncGenerator<FollowedChange, void, undefined> {
      for (;;) {
        if (signal?.aborted) return;
        const query: Record<string, unknown> = {};
        if (position !== undefined) query.after = position;
        if (limit !== undefined) query.limit = limit;
        if (object !== undefined) query.object = object;
        let result: Awaited<ReturnType<Get>>;
        try {
          result = await get("/changes", { params: { query }, signal });
        } catch (error) {
          if (signal?.aborted) return;
          throw error;
        }
        const { data, error, response } = result;
        if (response.status === 429) {
          // The client's own retries gave up (or were off): wait as long as the service asks, then go on.
          const wait = retryAfterMs(response.headers.get("retry-after")) ?? pollIntervalMs;
          if (!(await pause(wait, signal))) return;
          continue;
        }
        // 410 ERR_CURSOR_EXPIRED among them: the copy is too far behind; read the contacts again (docs/sync.md §10.5).
        if (data === undefined || error !== undefined) throw new CrmApiError(error, response);
        const from = position;
        const last = data.data.length - 1;
        for (const [i, change] of data.data.entries()) {
          position = i === last ? data.pagination.nextCursor : from;
          yield { change, cursor: position };
        }
        position = data.pagination.nextCursor;
        if (data.pagination.hasMore) continue;
        if (stop === "when-caught-up") return;
        if (!(await pause(pollIntervalMs, signal))) return;
      }
    }

    return {
      get cursor() {
        return position;
      },
      [Symbol.asyncIterator]: () => follow(),
    };
  }
  // Started with `after`, `position` is never undefined again: the overload that says so holds.
  return followChanges as FollowChanges;
}
