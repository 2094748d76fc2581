import type { CompiledQuery, Expression, Kysely, RawBuilder, SelectQueryBuilder } from "kysely";
import type { Database, Db } from "./schema.ts";
import type { WriteQueue } from "./sqlite/group-commit.ts";

/**
 * The storage port (docs/scaling.md §6): every operation the domains need from the database,
 * declared once here and implemented twice, by src/storage/sqlite/ (the embedded default,
 * one process serves the file) and by src/storage/postgres/ (several nodes share one
 * server). `openStorage` (src/storage/index.ts) picks one at start from the configuration
 * and nothing else ever asks which it is.
 *
 * Two halves:
 * - `Storage`, what the process gets once at start: open, read, write, claims and leases,
 *   shared buckets, statistics, backup, readiness, close.
 * - `Dialect`, what a query needs while it runs, found from the executor it runs on (a
 *   database or a transaction): locks, JSON aggregation, plan shapes, lease columns,
 *   secure delete, the errors the driver throws. The domains call it through the plain
 *   functions of src/storage/query.ts, taking `db | trx` like any repository function.
 *
 * The domains' queries themselves are plain Kysely, which compiles for both backends.
 * Each backend also has its own schema migrations, applied when it opens: db/*.sql for
 * SQLite, db/postgres/*.sql for PostgreSQL (one schema equal to SQLite's end state), run
 * and checked (frozen by checksum) by src/storage/migrations.ts's shared rules.
 *
 * The files: index.ts (openStorage), port.ts (this), query.ts (the query-time functions),
 * prepared.ts (compile-once queries), claims.ts (the in-process claim), migrations.ts,
 * schema.ts (the tables' types), keyset.ts, settings.ts; sqlite/ and postgres/ each hold
 * index.ts (its `Storage`), dialect.ts (its `Dialect`), open.ts, migrate.ts and
 * migrations.ts, plus SQLite's group commit, reader, direct statements and statistics,
 * and PostgreSQL's pooled writes, claims (leases) and shared buckets.
 */
export interface Storage {
  /** Open: the Kysely database the domains query and write through. */
  db: Kysely<Database>;
  /**
   * Read: where the dispatcher looks for due deliveries without queueing behind writes.
   * SQLite: a second, read-only connection (src/storage/sqlite/reader.ts) when opened with
   * `reader`, else `db`; PostgreSQL: the pool itself.
   */
  reader: Kysely<Database>;
  /** Write: how write requests get their transaction. SQLite: group commit; PostgreSQL: one pooled transaction each. */
  newWriteQueue(): WriteQueue;
  /** Claims and leases: how this process takes due deliveries from the outbox (see `Claims`). */
  claims: Claims;
  /**
   * Shared buckets: the API keys' rate-limit buckets kept in the database, for several
   * nodes (PostgreSQL: a key's limit is the key's, not each node's). Undefined where one
   * process serves the database (SQLite): the buckets then live in that process's memory.
   */
  sharedBuckets?: SharedBuckets;
  /** Statistics: keeps the query planner's statistics fresh (jobs, every 10 minutes). SQLite: `PRAGMA optimize`; PostgreSQL: nothing (autovacuum does it). */
  refreshStatistics(): Promise<void>;
  /**
   * Statistics after a bulk load (docs/performance.md, "Plans right after a bulk load"): one
   * pass that analyzes the tables a bulk load fills (`BulkTable` and the tables it brings
   * along) when they have doubled since their statistics were taken (and hold at least
   * 1,000 rows), and nothing otherwise. Cheap when nothing grew (SQLite: a `max(rowid)` per
   * table and sqlite_stat1; PostgreSQL: pg_stat_user_tables), so src/jobs/statistics.ts calls
   * it a moment after every bulk write and every few seconds. Never in a request's
   * transaction. SQLite: ANALYZE with analysis_limit (src/storage/sqlite/statistics.ts);
   * PostgreSQL: ANALYZE of those tables by one node at a time, under an advisory lock
   * (src/storage/postgres/statistics.ts). Resolves to the tables it analyzed.
   */
  refreshGrownStatistics(): Promise<string[]>;
  /** Backup: `crm backup` (docs/cli.md §6.1). */
  backup: Backup;
  /** Reachable and fully migrated (/readyz); false, never a throw, when the database is down. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** The tables whose bulk writes are reported (`BulkWrites`): each brings along the tables it fills (search terms, tags, events). */
export type BulkTable = "contacts" | "interaction_logs";

/**
 * Where a bulk write says it happened (docs/performance.md, "Plans right after a bulk
 * load"): the batch routes, imports and other loads call `noteRowsWritten` after writing
 * many rows. It only schedules `Storage.refreshGrownStatistics` a moment later, outside any
 * transaction, so it is safe to call anywhere, inside a unit of work included, and costs
 * nothing measurable (src/jobs/statistics.ts).
 */
export interface BulkWrites {
  noteRowsWritten(table: BulkTable, rows: number): void;
}

/** `crm backup FILE`: a consistent copy of the live database, also while the server runs. */
export interface Backup {
  /** Why `crm backup` cannot copy this database, naming what does instead (PostgreSQL: pg_dump); null when it can. */
  refusal: string | null;
  /** Copies the live database into `path`, an empty owner-only file the caller made (SQLite: `VACUUM INTO`, one snapshot). */
  copyInto(path: string): void;
}

/** A due delivery with what sending it needs: the event's stored bytes and the subscription. */
export interface DueDelivery {
  id: string;
  event_id: string;
  webhook_id: string;
  project_id: string;
  attempts: number;
  created_at: string;
  type: string;
  body: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  /** The contact the event is about (internal id; null: the delivery is unordered) and the subscription's ordering (docs/webhooks.md §8.2). */
  contact_id: number | null;
  ordering: "none" | "per-contact";
}

/**
 * The deliveries this process has claimed and not yet released: the dispatcher's book,
 * which a claim reads and writes. A claim adds each delivery the moment it has it, so two
 * claims of one process running at once never take the same row.
 */
export interface ClaimBook {
  has(id: string): boolean;
  /** How many claims are of `webhookId`. */
  countOf(webhookId: string): number;
  ids(): string[];
  add(d: DueDelivery): void;
  /** Whether a claim is of a delivery about `contactId` to `webhookId` (docs/webhooks.md §8.2: one at a time per contact). */
  holdsContact(webhookId: string, contactId: number): boolean;
}

/**
 * Claims and leases (docs/webhooks.md §2, docs/scaling.md §6): how the dispatcher takes due deliveries so no
 * one else sends them meanwhile. A claimed row stays pending until its attempt is
 * recorded, so a killed process loses no delivery (docs/api.md §3).
 * - SQLite: one process serves the file, so a claim is an entry in that process's book
 *   and nothing more (src/storage/claims.ts).
 * - PostgreSQL: several nodes share the outbox, so a claim is also a lease in the
 *   database, `FOR UPDATE SKIP LOCKED` under a per-subscription advisory lock, ended when
 *   the attempt is recorded (`Dialect.leaseEnd`) or after 30 s if the node died
 *   (src/storage/postgres/claims.ts).
 */
export interface Claims {
  /**
   * Up to `n` due deliveries of one subscription (as of `now`), oldest due first, for
   * active subscriptions only, skipping and adding to `book`. At most `perSubscription`
   * deliveries of a subscription are claimed at once by everyone sharing the outbox.
   * For a subscription with ordering "per-contact" (docs/webhooks.md §8.2), a delivery about
   * a contact is claimed only when no earlier one (position, then id) of that contact to
   * that subscription is pending, and none of that contact's is claimed by anyone.
   */
  claim(book: ClaimBook, request: { webhookId: string; now: string; n: number; perSubscription: number }): Promise<DueDelivery[]>;
  /**
   * Of `ids`, the deliveries claimed in the database as of `now`, by any node (PostgreSQL: a
   * live lease); none where claims live in memory only (SQLite: the dispatcher's book says).
   * Redeliver asks, to tell a delivery being sent from one waiting (docs/webhooks.md §5).
   */
  leased(db: Db, ids: string[], now: string): Promise<string[]>;
}

/** A bucket's spec for one request: its name, its capacity, and the window it refills over. */
export interface BucketSpec {
  name: string;
  capacity: number;
  windowMs: number;
  /** Tokens this request takes from it: 1 unless given (a batch's items, docs/api.md §18.4). */
  cost?: number;
}

/** A bucket's row after one take, as the statement returns it. */
export interface BucketTake {
  name: string;
  /** Tokens before this request's take (refilled to now, resized to the spec). */
  level: number;
  /** Tokens stored: `level` less this request's tokens (its `cost`) when every bucket allowed it. */
  tokens: number;
  allowed: boolean;
}

/**
 * Token buckets kept in the database for several nodes (src/storage/postgres/buckets.ts).
 * The arithmetic is the in-memory buckets' (src/auth/limiter.ts); the decision is made
 * from the rows by the rate limiter.
 */
export interface SharedBuckets {
  /**
   * One statement: refills every bucket of `specs` to `now`, resizes it to its spec, and
   * takes its `cost` (1 unless given) from each when each holds that many, or from none. Fewer rows than specs (and
   * nothing changed) when some buckets do not exist yet.
   */
  take(keyId: string, specs: BucketSpec[], now: number): Promise<BucketTake[]>;
  /** Makes the missing buckets of `specs`, full. */
  fill(keyId: string, specs: BucketSpec[], now: number): Promise<void>;
  /** Drops buckets untouched since `before`: full again, like a missing row. */
  sweep(before: number): Promise<void>;
}

/** A column reference the planner may filter on but never choose an index for (`Dialect.filterOnly`). */
export type FilterOnly = <T = unknown>(ref: string) => RawBuilder<T>;

/**
 * What a query needs from its backend while it runs (docs/scaling.md §6). One object per
 * backend (src/storage/sqlite/dialect.ts, src/storage/postgres/dialect.ts); the domains
 * reach it through src/storage/query.ts.
 */
export interface Dialect {
  /**
   * Locks: serialises work on `name` across every node until the transaction ends.
   * PostgreSQL: a transaction-scoped advisory lock; SQLite: nothing to take, the writer is
   * already one transaction at a time (BEGIN IMMEDIATE, group commit).
   */
  lockUntilCommit(trx: Db, name: string): Promise<void>;
  /** lockUntilCommit of every name, in the order given (callers sort them), in one round trip. */
  locksUntilCommit(trx: Db, names: string[]): Promise<void>;
  /** JSON aggregation: the rows of `query` as one JSON array column (json_agg; json_group_array). */
  jsonArrayFrom<O>(query: SelectQueryBuilder<any, any, O> & Expression<O>): RawBuilder<O[]>;
  /**
   * Plan shape: `ref` as a filter the planner never picks an index for. SQLite: the unary
   * `+` (src/storage/sqlite/statistics.ts); PostgreSQL: a plain reference.
   */
  filterOnly: FilterOnly;
  /**
   * Plan shape: `contacts` limited to the rows whose id is in `ids`, each found by its
   * primary key whatever the planner's statistics say. `ids` is one value, the list as
   * `idList` encodes it, so the statement's text is the same for every page and can be
   * built once (src/storage/prepared.ts). SQLite: `json_each` CROSS JOIN the table (the
   * list stays the outer loop); PostgreSQL: `id = ANY(array)`.
   */
  contactsByIds(db: Db, ids: unknown): SelectQueryBuilder<Database, "contacts", {}>;
  /** The ids as the one value `contactsByIds` takes: SQLite, a JSON array; PostgreSQL, the array. */
  idList(ids: number[]): unknown;
  /**
   * Plan shape: `read` walks an index in list order up to a LIMIT (a search word's head
   * group, a tag's contacts), and that walk must be the plan. SQLite: as it is. PostgreSQL:
   * bitmap scans off on its connection meanwhile: a filter on the walked group
   * (`substr(term, …) = …`) is estimated at 0.5 % of it, so the planner read the whole group
   * through a bitmap and sorted it (242 ms for "jord" at 1 M contacts, against 0.4 ms).
   * `read` sends its statements one after another (a walk holds one connection at a time).
   */
  inListOrder<T>(db: Db, read: (db: Db) => Promise<T>): Promise<T>;
  /** Leases: the columns that end this node's claim on a delivery when its attempt is recorded (none on SQLite). */
  leaseEnd: { lease_until?: null; lease_owner?: null };
  /**
   * Secure delete: after an erase commits, takes what it freed out of the database's
   * files (docs/security.md §7). True when it completed; false when a reader kept it from completing.
   */
  reclaimErased(db: Kysely<Database>, tables: readonly (keyof Database)[]): Promise<boolean>;
  /**
   * Runs a compiled statement on the connection at once when that is safe (SQLite: inside a
   * group-commit batch, or a read outside any transaction), skipping Kysely's executor;
   * undefined when it must go through Kysely.
   */
  runDirectly(db: Db, compiled: CompiledQuery, parameters: readonly unknown[]): unknown[] | undefined;
  /**
   * A statement compiled once and run many times (src/storage/prepared.ts): the backend may
   * keep it prepared on each connection (PostgreSQL: a named statement; SQLite caches its
   * statements already).
   */
  keepPrepared(sql: string): void;
  /** A unique constraint refused the row. */
  isUniqueViolation(error: { code?: unknown; message?: unknown }): boolean;
  /** The database could not be reached or dropped the connection (never, for a file). */
  isConnectionError(error: { code?: unknown; message?: unknown }): boolean;
}
