/**
 * The load settings bench/run.ts and bench/postgres.ts share, from the environment (the
 * variables are described in bench/run.ts's header): seconds per scenario, warm-up, wrk's
 * threads and connections, and the connections that build the data through the API.
 */
export const envNumber = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

export const SECONDS = envNumber("BENCH_SECONDS", 10);
export const WARMUP = envNumber("BENCH_WARMUP", 3);
export const THREADS = envNumber("BENCH_THREADS", 2);
export const CONNECTIONS = envNumber("BENCH_CONNECTIONS", 32);
export const SEED_CONNECTIONS = envNumber("BENCH_SEED_CONNECTIONS", 32);
/** The single-connection runs: half the measured seconds, at least 2. */
export const SINGLE_SECONDS = Math.max(2, Math.round(SECONDS / 2));
/** bench/postgres.ts's data: 20 min plus its contacts through the API at a pessimistic 50 contacts/s. */
export const PG_CONTACTS = envNumber("BENCH_PG_CONTACTS", 10_000);
export const PG_LIMIT_MS = 20 * 60_000 + Math.ceil((PG_CONTACTS * 1.11) / 50) * 1000;

/** The scenarios at 1 connection, each with its paths file's key (bench/scenarios.ts). */
export const SINGLE_SCENARIOS = [["GET one", "get"], ["search", "search"], ["?contactTypeId", "type"], ["?tag", "tag"], ["?email", "email"], ["?phone", "phone"]] as const;

/** The load scenarios, named as in the tables (and bench/report/costs.ts COST_SCENARIO_LOAD), with their source. */
export const LOAD_SCENARIOS = [
  ["GET /v1/contacts/CR-n", "get"],
  ["GET ?search=<3-letter prefix>", "search"],
  ["GET ?contactTypeId=<type>", "type"],
  ["GET ?tag=<tag name>", "tag"],
  ["GET ?email=<address>", "email"],
  ["GET ?phone=<number>", "phone"],
  ["POST /v1/contacts", "POST"],
  ["POST /v1/contacts/CR-n/interactions", "INTERACTIONS"],
] as const;
