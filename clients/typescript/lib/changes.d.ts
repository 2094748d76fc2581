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
    (options: FollowChangesOptions & {
        after: string;
    }): ChangeFeed<string>;
    (options?: FollowChangesOptions): ChangeFeed;
}
export declare const DEFAULT_POLL_INTERVAL_MS = 5000;
/** Builds `followChanges` over an openapi-fetch client (see the file's comment). */
export declare function changeFollower<Paths extends {}>(client: Client<Paths>): FollowChanges;
