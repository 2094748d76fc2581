import { createApp } from "./app.ts";
import { KeyStore } from "./auth/keys.ts";
import { RateLimiter } from "./auth/rate-limiter.ts";
import { stopImports } from "./admin/imports.ts";
import { issueSetupToken } from "./admin/setup-link.ts";
import { bootstrap } from "./bootstrap.ts";
import { ConfigError, type Config } from "./config.ts";
import type { Storage } from "./storage/index.ts";
import { databaseSecret } from "./storage/settings.ts";
import { openStorage } from "./storage/index.ts";
import { UnitOfWork } from "./storage/unit-of-work.ts";
import { startJobs, type JobName } from "./jobs/index.ts";
import { eraseContact } from "./contacts/erase.ts";
import { StatisticsWatch } from "./jobs/statistics.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { isoNow } from "./lib/time.ts";
import { CursorCodec } from "./lib/cursor.ts";
import { createLogger, type Logger } from "./lib/log.ts";
import { Metrics } from "./metrics/registry.ts";
import { runtime, type RunningServer } from "./runtime/index.ts";
import { systemResolver, type Resolver } from "./webhooks/address-policy.ts";
import { Dispatcher } from "./webhooks/dispatcher.ts";
import { checkSecretKey, loadSecretBox } from "./secrets/secret-box.ts";

/** What tests may replace: the DNS resolver, the log and the clock (everything else is the real thing). */
export interface ServiceOverrides {
  resolve?: Resolver;
  log?: Logger;
  /** The one source of "now" (src/lib/clock.ts); the system clock unless a test drives time (issue 11). */
  clock?: Clock;
}

export interface RunningService {
  server: RunningServer;
  /** The app's fetch, for calling it in-process without a socket (bench/costs.ts). */
  fetch: FetchHandler;
  log: Logger;
  /** Runs a housekeeping job now, off its schedule (tests drive retention this way with their clock). */
  runJob(name: JobName): Promise<void>;
  /** Stops accepting, answers requests in flight, drains the dispatcher, closes the database. */
  stop(): Promise<void>;
}

/** Opens, migrates, bootstraps and listens (docs/operations.md §3); `serve` adds the signals. */
export async function startServices(config: Config, overrides: ServiceOverrides = {}): Promise<RunningService> {
  const log = overrides.log ?? createLogger(config.CRM_LOG_LEVEL);
  const clock = overrides.clock ?? systemClock;
  // Listen first: a port that cannot be had stops the start in one line before anything is
  // created (docs/operations.md §1). Requests arriving while the database opens wait for it.
  const listener = listen(config);
  try {
    return await startOn(listener, config, log, clock, overrides);
  } catch (error) {
    await listener.server.stop();
    throw error;
  }
}

interface Listener {
  server: RunningServer;
  /** Hands the listener its app once the services are up. */
  attach(fetch: FetchHandler): void;
}

type FetchHandler = Parameters<typeof runtime.serve>[0]["fetch"];

function listen(config: Config): Listener {
  let ready!: (fetch: FetchHandler) => void;
  const app = new Promise<FetchHandler>((resolve) => (ready = resolve));
  // Until the app is attached, requests wait for it; then they go straight to it.
  let handle: FetchHandler = async (request, info) => (await app)(request, info);
  const attach = (fetch: FetchHandler) => {
    handle = fetch;
    ready(fetch);
  };
  try {
    const server = runtime.serve({ port: config.PORT, hostname: config.HOST, fetch: (request, info) => handle(request, info) });
    return { server, attach };
  } catch (error) {
    const reason = String((error as Error)?.message ?? error).split("\n")[0];
    throw new ConfigError(`cannot listen on ${config.HOST}:${config.PORT} (PORT, HOST): ${reason}`);
  }
}

async function startOn(listener: Listener, config: Config, log: Logger, clock: Clock, overrides: ServiceOverrides): Promise<RunningService> {
  const storage = await openStorage(config, { reader: true, log });
  try {
    return await serveOn(listener, storage, config, log, clock, overrides);
  } catch (error) {
    await storage.close();
    throw error;
  }
}

async function serveOn(
  listener: Listener,
  storage: Storage,
  config: Config,
  log: Logger,
  clock: Clock,
  overrides: ServiceOverrides,
): Promise<RunningService> {
  const { db } = storage;
  const secrets = serverKey(config);
  // Every node must seal with the same key (docs/scaling.md §6); a different one stops the start.
  await checkSecretKey(db, secrets);
  // The one way the service writes (src/storage/unit-of-work.ts); its commits that queued deliveries wake the dispatcher.
  const writes = new UnitOfWork(storage.newWriteQueue(), log);
  const created = await bootstrap(writes, config, isoNow(clock));
  if (created) {
    console.log(
      `Created project "default" (${created.projectId}).\n` +
        `API key with every scope, shown once; keep it now:\n\n  ${created.key}\n`,
    );
  }
  const host = config.HOST === "0.0.0.0" || config.HOST === "::" ? "localhost" : config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
  const origin = `http://${host}:${listener.server.port}`;
  // Every start says where the console and the reference are (docs/operations.md §3).
  console.log(`Console:   ${origin}/admin\nReference: ${origin}/docs\n`);
  const setupToken = await issueSetupToken(writes, clock.now());
  if (setupToken) {
    console.log(
      `No admin account yet. Create the first one in the browser within 24 hours (the link works once):\n\n` +
        `  ${origin}/admin/setup?token=${setupToken}\n`,
    );
  }
  const keys = new KeyStore(db, writes);
  // Where several nodes share the database, a key's buckets live there (docs/scaling.md §6).
  const limiter = new RateLimiter(() => clock.now(), storage.sharedBuckets);
  const webhooks = { secrets, env: config.CRM_ENV, resolve: overrides.resolve ?? systemResolver, timeoutMs: config.CRM_WEBHOOK_TIMEOUT_MS, clock };
  const metrics = new Metrics();
  // Planner statistics right after bulk loads (src/jobs/statistics.ts); a database copied or
  // restored before this start is checked at once.
  const statistics = new StatisticsWatch(() => storage.refreshGrownStatistics(), log);
  void statistics.check();
  const dispatcher = new Dispatcher({
    db,
    writes,
    reader: storage.reader,
    claims: storage.claims,
    onOutcome: (outcome) => metrics.observeDelivery(outcome),
    webhooks,
    schedule: config.CRM_WEBHOOK_RETRY_SCHEDULE,
    pollMs: config.CRM_OUTBOX_POLL_MS,
    log,
  });
  writes.on("deliveries-due", () => dispatcher.wake());
  dispatcher.start();
  const app = createApp({
    config,
    port: listener.server.port,
    clock,
    db,
    writes,
    keys,
    limiter,
    log,
    secrets,
    webhooks,
    metrics,
    outboxPending: async () => {
      const row = await db
        .selectFrom("deliveries")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("status", "=", "pending")
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    cursors: new CursorCodec(await databaseSecret(db, "cursor_secret")),
    // Ready: the database answers (SQLite on its own handle, never queued behind writes;
    // PostgreSQL within 2 s), the migrations are applied, the dispatcher is alive (docs/operations.md §3, docs/scaling.md §6).
    isReady: async () => dispatcher.alive() && (await storage.ready()),
    statistics,
  });
  // The trash's purge erases as `crm contact erase` does, as the service (docs/api.md §19.3).
  const eraseFromTrash = async (projectId: string, contactNumber: number) => {
    await eraseContact(db, projectId, contactNumber, { writes, now: isoNow(clock), secrets, warn: (message) => log.warn(message) });
  };
  const jobs = startJobs({
    db,
    writes,
    keys,
    limiter,
    log,
    clock,
    refreshStatistics: () => storage.refreshStatistics(),
    statistics,
    changesRetentionDays: config.CRM_CHANGES_RETENTION_DAYS,
    eraseFromTrash,
  });
  const server = listener.server;
  listener.attach(app.fetch);
  log.info("listening", { host: config.HOST, port: server.port, env: config.CRM_ENV, runtime: runtime.name });
  return {
    server,
    fetch: app.fetch,
    log,
    runJob: (name) => jobs.run(name),
    async stop() {
      await server.stop();
      await dispatcher.stop();
      await jobs.stop();
      await stopImports(db);
      await storage.close();
    },
  };
}

/**
 * The key that seals webhook secrets (docs/webhooks.md §2). CRM_SECRET_KEY was checked with the
 * settings; a key file beside the database that holds no key, or cannot be read or made,
 * stops the start in one line too (docs/api.md §16), not with a stack trace.
 */
function serverKey(config: Config) {
  try {
    return loadSecretBox(config.CRM_SECRET_KEY, config.CRM_DB_PATH);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const reason = String((error as Error)?.message ?? error).split("\n")[0];
    throw new ConfigError(`the server key (CRM_SECRET_KEY, or secret.key beside CRM_DB_PATH): ${reason}`);
  }
}

/** `crm serve`: the services, until SIGTERM or SIGINT drains them and exits 0 (docs/operations.md §6.2). */
export async function serve(config: Config): Promise<void> {
  const service = await startServices(config);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    service.log.info("shutting down");
    await service.stop();
    runtime.exit(0);
  };
  runtime.onSignal("SIGTERM", shutdown);
  runtime.onSignal("SIGINT", shutdown);
}
