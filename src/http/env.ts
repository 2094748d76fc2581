import type { Kysely } from "kysely";
import type { Caller, KeyStore } from "../auth/keys.ts";
import type { RateLimiter } from "../auth/rate-limiter.ts";
import type { Config } from "../config.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import type { BulkWrites } from "../storage/port.ts";
import type { Database, Db } from "../storage/schema.ts";
import type { CursorCodec } from "../lib/cursor.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { Metrics } from "../metrics/registry.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import type { WebhookEnv } from "../webhooks/attempt.ts";

/** What createApp needs; tests and the CLI build the same (style: createApp(deps)). */
export interface AppDeps {
  config: Config;
  /** The port the server listens on (PORT, or the one it was given for PORT=0): the console's own hosts use it (docs/security.md §5). */
  port: number;
  /** The one source of "now" for every time window and timestamp the service writes (issue 11). */
  clock: Clock;
  db: Kysely<Database>;
  /** The one way to write (src/storage/unit-of-work.ts): group commit on SQLite, pooled transactions on PostgreSQL; its commits wake the dispatcher. */
  writes: UnitOfWork;
  keys: KeyStore;
  limiter: RateLimiter;
  cursors: CursorCodec;
  log: Logger;
  secrets: SecretBox;
  metrics: Metrics;
  /** Deliveries waiting in the outbox (for /metrics). */
  outboxPending(): Promise<number>;
  webhooks: WebhookEnv;
  isReady(): Promise<boolean>;
  /** Where a bulk write (a batch, an import) says it wrote many rows, so the planner's statistics follow (src/jobs/statistics.ts). */
  statistics: BulkWrites;
}

export interface AppEnv {
  Bindings: { ip: string };
  Variables: {
    deps: AppDeps;
    requestId: string;
    caller: Caller;
    /** The request's transaction on write routes, the database on reads. */
    db: Db;
    rawBody: string;
    routeTemplate: string;
    /** The client's address for per-address limits (src/http/client-address.ts). */
    clientAddress: string;
    /** Each operation's query parameters (src/http/strict-query.ts), for the strict-query check. */
    queryNames?: import("./strict-query.ts").QueryNames;
    /** Set by a route that answers its errors in another form than the envelope (a web form's HTML page). */
    renderError?: (error: import("../errors.ts").ApiError) => Response | Promise<Response>;
  };
}
