/**
 * Preload for `bun test` (`bun test --preload ./test/helpers/teardown.ts`, or bunfig.toml's
 * `[test] preload`): after the last test file, stops this process's embedded PostgreSQL
 * cluster (test/helpers/postgres.ts) and removes its folder, so nothing is left once
 * `bun test` returns. Without it the cluster's reaper does the same just after the test
 * process ends. Nothing happens when no cluster was started (the SQLite runs).
 *
 * Under scripts/test.ts (`bun test --parallel --no-isolate`, CRM_TEST_CLUSTER_PER_WORKER=1)
 * a preload's afterAll runs after every file of a worker; there the cluster is kept for the
 * worker's next file and its reaper stops it when the worker ends.
 */
import { afterAll } from "bun:test";
import { stopPostgresCluster } from "./postgres.ts";

const perWorker = process.env.CRM_TEST_CLUSTER_PER_WORKER === "1" && process.env.BUN_TEST_WORKER_ID !== undefined;

if (!perWorker) afterAll(() => stopPostgresCluster(), 30_000);
